#!/usr/bin/env bash
# Issue 19's performance target, on one server holding the 100,000 orders and the JavaScript index
# Orders/Totals (Company, Total over Lines, OrderedAt), built and not stale before any run:
#   While a replacement of Orders/Totals builds (a changed definition PUT right before the run,
#   building side by side as ReplacementOf/Orders/Totals):
#     PUT throughput >= 0.8x, and query throughput on the old index >= 0.7x, of the same runs
#     without a replacement (interleaved in each round);
#   the swap adds no query error and no query slower than 50 ms at p99.9.
# Runs, each round (A: no replacement, B: a replacement building; odd rounds A then B, even rounds
# B then A, so that neither always runs on the bigger database):
#   PUT:   wrk -t2 -c64, new ~1 KiB documents into collection Bench (durable), as put-new.lua
#   query: wrk -t2 -c16, `from index 'Orders/Totals' where Company = '<c>'` (companies with 1-10
#          orders, fixed seed; GET /databases/bench/queries?query=), as paths-random.lua
# through perf/load/load-timed.lua, which records when every answer arrived: a B run's rate is taken
# from 0.5 s into the run until the replacement swapped in (it may catch up before the run ends;
# the moment comes from a 20 ms poll of GET /indexes/status) or the run's end; an A run's from 0.5 s
# to its end. After a B run the script waits for the swap and for Orders/Totals to be caught up.
# The definitions differ by a factor on Total (* 2, * 3, ...): each PUT is a change.
# Then SWAPS swaps under a query load that records every request (paths-timed.lua, wrk -t16 -c16,
# one connection per thread): the load runs 2 s, a new definition is PUT, the replacement builds and
# swaps itself in once caught up (the last of them forced by POST /indexes/replace FORCE_AFTER
# seconds after the PUT, mid-build, when FORCED=1), the load runs 3 s more. perf/load/swap-latency.py
# prints requests, non-200 answers, p50/p99/p99.9/max before, while building, within 1 s of the swap
# (the moment a 20 ms poll of GET /indexes/status first sees the replacement gone) and after.
# The server's CPU per request (/proc) is printed for every run.
#
#   perf/load/replacement.sh [rounds] [duration] [swaps]     defaults: 3 rounds of 8s, 3 swaps
# SERVER_BUILD=<folder>: an already built Jackdaw.Server.dll instead of building the working tree.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
DURATION=${2:-8s}
SWAPS=${3:-3}
FORCED=${FORCED:-1}
FORCE_AFTER=${FORCE_AFTER:-3}
PORT=${PORT:-18097}
PUT_CONNS=${PUT_CONNS:-64}
QUERY_CONNS=${QUERY_CONNS:-16}
SWAP_CONNS=${SWAP_CONNS:-16}
CORPUS=${CORPUS:-tests/corpus/orders.jsonl.gz}

command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
WORK=$(mktemp -d)
PID=
WRK_PID=
WATCH_PID=
cleanup() {
  [ -n "$WRK_PID" ] && kill "$WRK_PID" 2>/dev/null
  [ -n "$WATCH_PID" ] && kill "$WATCH_PID" 2>/dev/null
  [ -n "$PID" ] && kill "$PID" 2>/dev/null
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

python3 - "$CORPUS" "$WORK/orders.ndjson" <<'PY'
import gzip, json, sys
with gzip.open(sys.argv[1], "rt", encoding="utf-8") as f, open(sys.argv[2], "w", encoding="utf-8") as out:
    for line in f:
        doc = json.loads(line)
        out.write(json.dumps({"Id": doc["@metadata"]["@id"], "Document": doc}, separators=(",", ":"), ensure_ascii=False) + "\n")
PY
DOCS=$(wc -l < "$WORK/orders.ndjson")
python3 perf/load/query-paths.py "$CORPUS" "$WORK" bench
python3 - "$WORK/company-values.txt" "$WORK/totals.txt" <<'PY'
import sys, urllib.parse
with open(sys.argv[2], "w") as out:
    for c in open(sys.argv[1]).read().split("\n"):
        if c:
            out.write("/databases/bench/queries?query=" + urllib.parse.quote(f"from index 'Orders/Totals' where Company = '{c}'", safe="") + "\n")
PY

. perf/load/ab-lib.sh
SERVER=${SERVER_BUILD:-$WORK/head}
[ -n "${SERVER_BUILD:-}" ] || publish_server "$WORK/head"
J="http://127.0.0.1:$PORT"
ctl() { python3 perf/load/replacement-ctl.py "$J" bench "$@"; }
now() { python3 -c "import time; print(f'{time.monotonic():.6f}')"; }

start_server "$SERVER"
curl -sf -X PUT "$J/admin/databases?name=bench" >/dev/null
curl -sf -X POST -H 'Content-Type: application/x-ndjson' -H 'Transfer-Encoding: chunked' \
  --data-binary @"$WORK/orders.ndjson" "$J/databases/bench/bulk_insert" >/dev/null
K=1
ctl put $K
built=$(ctl wait "$DOCS")
echo "# Orders/Totals over $DOCS orders built in $built s; ${SERVER_BUILD:-working tree $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes')}"

wrk_run() { # connections duration out-prefix lua-args... -> "rps p50 p99" (wrk's own figures for the whole run)
  local c=$1 d=$2 o=$3 out; shift 3
  out=$(wrk -t2 -c"$c" -d"$d" --latency -s perf/load/load-timed.lua "$J" -- "$@" "$o")
  if grep -q "Non-2xx" <<<"$out"; then echo "non-2xx answers:" >&2; grep "Non-2xx" <<<"$out" >&2; fi
  if grep -q "Socket errors" <<<"$out"; then grep "Socket errors" <<<"$out" >&2; fi
  echo "$(awk '/Requests\/sec/ {print $2}' <<<"$out") $(awk '$1=="50%" {print $2}' <<<"$out") $(awk '$1=="99%" {print $2}' <<<"$out")"
}
put_load() { wrk_run "$PUT_CONNS" "$1" "$2" put "/databases/bench/docs?id=new/"; }
query_load() { wrk_run "$QUERY_CONNS" "$1" "$2" paths "$WORK/totals.txt"; }

# Warm-up: both loads, and one replacement built and swapped (JITs the replacement's path).
mkdir -p "$WORK/warm"
put_load 3s "$WORK/warm/p" >/dev/null
query_load 3s "$WORK/warm/q" >/dev/null
K=$((K + 1)); ctl put $K; ctl wait "$DOCS" >/dev/null

declare -A RATE
run() { # round load(put|query) variant(A|B)
  local t0 c0 c1 r p50 p99 state="-" waited swapped="" rate window bad o="$WORK/run-$1-$2-$3/t"
  mkdir -p "$(dirname "$o")"
  if [ "$3" = B ]; then
    K=$((K + 1))
    ctl put $K
  fi
  # The poll runs in A runs too (it sees no replacement there), so both pay for it alike.
  ctl watch >"$WORK/swap" &
  WATCH_PID=$!
  t0=$(now)
  c0=$(cpu "$PID")
  read -r r p50 p99 < <("$2_load" "$DURATION" "$o")
  c1=$(cpu "$PID")
  if [ "$3" = B ]; then
    swapped=$(cat "$WORK/swap")
    if [ -n "$swapped" ]; then
      state="swapped $(python3 -c "print(f'{$swapped - $t0:.1f}')") s into the run"
    else
      state="$(ctl progress) at the end"
    fi
    waited=$(ctl wait "$DOCS")
    state="$state; settled $waited s later"
  fi
  kill "$WATCH_PID" 2>/dev/null || true; wait "$WATCH_PID" 2>/dev/null || true; WATCH_PID=
  read -r rate window bad < <(python3 perf/load/window-rate.py "$o" "$t0" "${swapped:--}")
  rm -rf "$(dirname "$o")"
  RATE[$1$2$3]=$rate
  local label; label=$([ "$3" = A ] && echo "no replacement" || echo "replacement building")
  python3 -c "r=$r; d=float('${DURATION%s}'); print(f'| $1 | $2 | $label | $rate | $window | {r:.0f} | $p50 | $p99 | {($c1 - $c0) * 10000 / (r * d):.1f} | $state |')"
}

echo
echo "# A B A B on one server, $DURATION runs (PUT: wrk -t2 -c$PUT_CONNS into Bench; query: wrk -t2 -c$QUERY_CONNS on Orders/Totals), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# req/s over the window: answers from 0.5 s into the run until the run's end or the swap, whichever came first"
echo "| round | load | run | req/s over the window | window (s) | req/s (wrk, whole run) | p50 | p99 | server CPU µs/request | replacement |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for load in put query; do
    for v in $order; do run "$r" "$load" "$v"; done
  done
done
echo
echo "| round | PUT with / without | query with / without |"
echo "|---|---|---|"
for r in $(seq 1 "$ROUNDS"); do
  python3 -c "print(f'| $r | {${RATE[${r}putB]} / ${RATE[${r}putA]}:.2f} | {${RATE[${r}queryB]} / ${RATE[${r}queryA]}:.2f} |')"
done

echo
echo "# swaps under a query load recording every request: wrk -t$SWAP_CONNS -c$SWAP_CONNS paths-timed.lua, load $(cut -d' ' -f1-3 /proc/loadavg)"
for s in $(seq 1 "$SWAPS"); do
  mkdir -p "$WORK/swap$s"
  forced=0
  [ "$FORCED" = 1 ] && [ "$s" = "$SWAPS" ] && forced=1
  wrk -t"$SWAP_CONNS" -c"$SWAP_CONNS" -d600s -s perf/load/paths-timed.lua "$J" -- "$WORK/totals.txt" "$WORK/swap$s/t" >"$WORK/swap$s/wrk.txt" 2>&1 &
  WRK_PID=$!
  sleep 2
  K=$((K + 1))
  put_time=$(now)
  ctl put $K
  ctl watch >"$WORK/swap" &
  WATCH_PID=$!
  if [ "$forced" = 1 ]; then
    sleep "$FORCE_AFTER"
    before=$(ctl progress)
    ctl replace
  fi
  wait "$WATCH_PID"; WATCH_PID=
  swap_time=$(cat "$WORK/swap")
  sleep 3
  kill -INT "$WRK_PID"; wait "$WRK_PID" || true; WRK_PID=
  socket=$(grep "Socket errors" "$WORK/swap$s/wrk.txt" || echo "Socket errors: none")
  kind=$([ "$forced" = 1 ] && echo "forced by POST /indexes/replace $FORCE_AFTER s after the PUT ($before)" || echo "caught up")
  echo "swap $s ($kind): built for $(python3 -c "print(f'{$swap_time - $put_time:.1f}')") s; $socket"
  python3 perf/load/swap-latency.py "$WORK/swap$s/t" "$put_time" "$swap_time"
  ctl wait "$DOCS" >/dev/null
done
