#!/usr/bin/env bash
# Durable PUT of new ~1 KiB documents (perf/load/put-new.lua, collection Bench) at 64 connections,
# with one auto-index on the collection against the same run without indexes, A B A B (issue 18:
# with the index >= 0.7x without). The auto-index (`from Bench where Name = $n`, Auto/Bench/ByName)
# is made on the empty collection before the run. After each run with the index: how long it took
# to become non-stale once the PUTs stopped, and its entries against the documents written: an
# index that "keeps up" is a few batches behind at most, not minutes.
# Each server runs alone on a fresh data folder and is warmed by a short run first (with the index
# in place for the indexed variant); requests/s, p99 and the server's CPU per request (/proc).
#
#   perf/load/put-index.sh [rounds] [duration] [connections]     defaults: 3 rounds, 10s, 64
# WARMUP (default 3s): the warm-up run's length; the indexed server JITs Lucene's code during it.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
DURATION=${2:-10s}
CONNS=${3:-64}
PORT=${PORT:-18086}

command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
WORK=$(mktemp -d)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

. perf/load/ab-lib.sh
# SERVER_BUILD: a folder holding an already built Jackdaw.Server.dll (e.g. a patched copy) instead of the working tree.
SERVER=${SERVER_BUILD:-$WORK/head}
[ -n "${SERVER_BUILD:-}" ] || publish_server "$WORK/head"
J="http://127.0.0.1:$PORT"

put() { # connections duration -> "rps p99"
  local out
  out=$(wrk -t"$(( $1 < 2 ? 1 : 2 ))" -c"$1" -d"$2" --latency -s perf/load/put-new.lua "$J" -- "/databases/bench/docs?id=new/")
  if grep -q "Non-2xx" <<<"$out"; then echo "non-2xx answers:" >&2; grep "Non-2xx" <<<"$out" >&2; fi
  echo "$(awk '/Requests\/sec/ {print $2}' <<<"$out") $(awk '$1=="99%" {print $2}' <<<"$out")"
}
catch_up() { # -> "seconds-to-non-stale entries documents"
  python3 - "$J" <<'PY'
import json, sys, time, urllib.request
url = sys.argv[1]
t0 = time.monotonic()
while True:
    stats = json.load(urllib.request.urlopen(url + "/databases/bench/indexes/stats"))["Results"][0]
    if not stats["IsStale"]:
        break
    if time.monotonic() - t0 > 300:
        break
    time.sleep(0.05)
docs = json.load(urllib.request.urlopen(url + "/databases/bench/collections/stats"))["Collections"].get("Bench", 0)
print(f"{time.monotonic() - t0:.2f} {stats['EntriesCount']} {docs}")
PY
}
measure() { # label round indexed
  start_server "$SERVER"
  curl -sf -X PUT "$J/admin/databases?name=bench" >/dev/null
  if [ "$3" = 1 ]; then
    curl -sf -X POST -H 'Content-Type: application/json' "$J/databases/bench/queries" \
      -d '{"Query":"from Bench where Name = $n","QueryParameters":{"n":"customer 1"},"WaitForNonStaleResults":true}' >/dev/null
  fi
  put "$CONNS" "${WARMUP:-3s}" >/dev/null
  local c0 c1 r p lag="" entries="" docs=""
  c0=$(cpu "$PID")
  read -r r p < <(put "$CONNS" "$DURATION")
  c1=$(cpu "$PID")
  if [ "$3" = 1 ]; then read -r lag entries docs < <(catch_up); fi
  echo "$r" >"$WORK/last"
  python3 -c "r=$r; d=float('${DURATION%s}'); print(f'| $2 | $1 | {r:.0f} | $p | {($c1 - $c0) * 10000 / (r * d):.1f} | ${lag:--} | ${entries:--} / ${docs:--} |', end='')"
  stop_server
}

echo "# durable PUT at $CONNS connections with and without one auto-index, ${SERVER_BUILD:-working tree $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes')}, -d$DURATION after a ${WARMUP:-3s} warm-up, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| round | server | req/s | p99 | server CPU µs/request | index non-stale after the run (s) | entries / documents | with / without |"
echo "|---|---|---|---|---|---|---|---|"
for r in $(seq 1 "$ROUNDS"); do
  measure "no index" "$r" 0; echo " |"
  without=$(cat "$WORK/last")
  measure "Auto/Bench/ByName" "$r" 1
  python3 -c "print(f' {$(cat "$WORK/last") / $without:.2f} |')"
done
