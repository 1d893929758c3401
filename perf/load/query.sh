#!/usr/bin/env bash
# Query load on the 100,000-order corpus (issue 18), wrk -t2 -c16, GET /databases/bench/queries:
#   equality: from Orders where Company = '<c>'  (companies with 1-10 orders)  target >= 10,000 q/s, p99 <= 5 ms
#   range:    from Orders where Freight >= lo and Freight < lo+20 order by Freight limit 10
#             (about 6,700 matches each, the 10 lowest returned)                 target >= 5,000 q/s
#   between:  the same ranges as `Freight between lo and lo+20` (reported beside the range form)
# Values vary per request (perf/load/query-paths.py, fixed seed; perf/load/paths-random.lua). The
# auto-indexes are made by the first queries and waited for before any run. Reference, interleaved
# in each round: the bare Kestrel app answering a fixed body of the mean size of that query's
# answers (the ceiling of any HTTP work here). Also prints the server's CPU per query (/proc).
#
#   perf/load/query.sh [rounds] [duration] [connections]     defaults: 3 rounds of 10s, 16 connections
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
DURATION=${2:-10s}
CONNS=${3:-16}
PORT=${PORT:-18093}
EQ_PORT=${EQ_PORT:-18094}
RANGE_PORT=${RANGE_PORT:-18095}
CORPUS=${CORPUS:-tests/corpus/orders.jsonl.gz}

command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
WORK=$(mktemp -d)
PID=
PIDS=()
cleanup() {
  [ -n "$PID" ] && kill "$PID" 2>/dev/null
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
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
python3 perf/load/query-paths.py "$CORPUS" "$WORK" bench

. perf/load/ab-lib.sh
# SERVER_BUILD: a folder holding an already built Jackdaw.Server.dll (e.g. a patched copy) instead of the working tree.
SERVER=${SERVER_BUILD:-$WORK/head}
[ -n "${SERVER_BUILD:-}" ] || publish_server "$WORK/head"
dotnet build -c Release perf/load/BareKestrel/BareKestrel.csproj -v q -nologo -o "$WORK/bare" >/dev/null

J="http://127.0.0.1:$PORT"
start_server "$SERVER"
curl -sf -X PUT "$J/admin/databases?name=bench" >/dev/null
curl -sf -X POST -H 'Content-Type: application/x-ndjson' -H 'Transfer-Encoding: chunked' \
  --data-binary @"$WORK/orders.ndjson" "$J/databases/bench/bulk_insert" >/dev/null
# Make the indexes, and wait until the queries run on non-stale ones (a second query may widen one).
for _ in 1 2; do
  for kind in equality range between; do
    curl -sf "$J$(head -1 "$WORK/$kind.txt")&waitForNonStaleResults=true&waitForNonStaleResultsTimeout=00:05:00" >/dev/null
  done
done
echo "# indexes: $(curl -sf "$J/databases/bench/indexes/stats" | python3 -c "import json,sys; print(', '.join(f\"{r['Name']} ({r['EntriesCount']} entries, stale {r['IsStale']})\" for r in json.load(sys.stdin)['Results']))")"

mean_bytes() { # paths-file -> mean answer size over its first 200 paths, and the most results seen
  head -200 "$1" | while read -r p; do curl -sf "$J$p"; echo; done | python3 -c "
import json, sys
sizes = []; most = 0
for line in sys.stdin:
    line = line.strip()
    if line:
        sizes.append(len(line.encode())); most = max(most, len(json.loads(line)['Results']))
print(sum(sizes) // len(sizes), most)"
}
read -r EQ_BYTES EQ_MOST < <(mean_bytes "$WORK/equality.txt")
read -r RANGE_BYTES RANGE_MOST < <(mean_bytes "$WORK/range.txt")
echo "# answers: equality mean $EQ_BYTES B (at most $EQ_MOST results), range mean $RANGE_BYTES B (at most $RANGE_MOST results)"

dotnet "$WORK/bare/BareKestrel.dll" --urls "http://127.0.0.1:$EQ_PORT" --body-bytes "$EQ_BYTES" >/dev/null 2>&1 &
PIDS+=($!)
dotnet "$WORK/bare/BareKestrel.dll" --urls "http://127.0.0.1:$RANGE_PORT" --body-bytes "$RANGE_BYTES" >/dev/null 2>&1 &
PIDS+=($!)
for p in $EQ_PORT $RANGE_PORT; do
  for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$p/" >/dev/null && break; sleep 0.1; done
done

run_wrk() { # duration url [paths-file] -> "rps p50 p99"
  local script=() out
  [ -n "${3:-}" ] && script=(-s perf/load/paths-random.lua)
  out=$(wrk -t2 -c"$CONNS" -d"$1" --latency "${script[@]}" "$2" -- "${3:-}")
  if grep -q "Non-2xx" <<<"$out"; then echo "non-2xx answers from $2:" >&2; grep "Non-2xx" <<<"$out" >&2; fi
  echo "$(awk '/Requests\/sec/ {print $2}' <<<"$out") $(awk '$1=="50%" {print $2}' <<<"$out") $(awk '$1=="99%" {print $2}' <<<"$out")"
}

for kind in equality range between; do run_wrk 3s "$J" "$WORK/$kind.txt" >/dev/null; done
run_wrk 3s "http://127.0.0.1:$EQ_PORT/" >/dev/null
run_wrk 3s "http://127.0.0.1:$RANGE_PORT/" >/dev/null

declare -A TARGET=([equality]=10000 [range]=5000 [between]=5000)
declare -A BARE=([equality]=$EQ_PORT [range]=$RANGE_PORT [between]=$RANGE_PORT)
echo "# queries, ${SERVER_BUILD:-working tree $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes')}, wrk -t2 -c$CONNS -d$DURATION, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| round | query | Jackdaw q/s | p50 | p99 | / target | server CPU µs/query | bare Kestrel req/s (same body size) | p99 | Jackdaw / bare |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for r in $(seq 1 "$ROUNDS"); do
  for kind in equality range between; do
    c0=$(cpu "$PID")
    read -r jr j50 j99 < <(run_wrk "$DURATION" "$J" "$WORK/$kind.txt")
    c1=$(cpu "$PID")
    read -r br _ b99 < <(run_wrk "$DURATION" "http://127.0.0.1:${BARE[$kind]}/")
    python3 -c "jr=$jr; br=$br; d=float('${DURATION%s}'); print(f'| $r | $kind | {jr:.0f} | $j50 | $j99 | {jr / ${TARGET[$kind]}:.2f} | {($c1 - $c0) * 10000 / (jr * d):.1f} | {br:.0f} | $b99 | {jr / br:.2f} |')"
  done
done
