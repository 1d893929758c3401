#!/usr/bin/env bash
# GET of a random ~1 KiB document by id out of DOCS (perf/load/get-random.lua), A B A B against a
# baseline revision of this repository built from `git archive`: requests/s and p99 at 64
# connections, and the server's CPU and allocation per request. Each server runs alone on a fresh
# data folder holding the same documents (loaded by bulk_insert) and is warmed by a short run first.
#
#   perf/load/get-ab.sh [rounds] [baseline-rev] [duration]      defaults: 3 rounds, HEAD~1, 10s
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
BASE=${2:-HEAD~1}
DURATION=${3:-10s}
PORT=${PORT:-18098}
DOCS=${DOCS:-10000}

command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
WORK=$(mktemp -d)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

. perf/load/ab-lib.sh
build_pair "$BASE"
python3 perf/load/gen-docs.py "$DOCS" "$WORK/docs"

stat() { curl -s "http://127.0.0.1:$PORT/admin/stats" | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['$1'])"; }
get() { # duration -> "rps p99"
  local out
  out=$(wrk -t2 -c64 -d"$1" --latency -s perf/load/get-random.lua "http://127.0.0.1:$PORT" -- "/databases/bench/docs?id=docs/" "$DOCS")
  if grep -q "Non-2xx" <<<"$out"; then echo "non-2xx answers:" >&2; grep "Non-2xx" <<<"$out" >&2; fi
  echo "$(awk '/Requests\/sec/ {print $2}' <<<"$out") $(awk '$1=="99%" {print $2}' <<<"$out")"
}
measure() { # build-dir label round
  start_server "$1"
  curl -sf -X PUT "http://127.0.0.1:$PORT/admin/databases?name=bench" >/dev/null
  curl -sf -X POST -H 'Content-Type: application/x-ndjson' --data-binary @"$WORK/docs/jackdaw.ndjson" "http://127.0.0.1:$PORT/databases/bench/bulk_insert" >/dev/null
  get 3s >/dev/null
  local c0 c1 a0 a1 n0 n1 r p
  c0=$(cpu "$PID"); a0=$(stat AllocatedBytes); n0=$(stat RequestsServed)
  read -r r p < <(get "$DURATION")
  c1=$(cpu "$PID"); a1=$(stat AllocatedBytes); n1=$(stat RequestsServed)
  python3 -c "r=$r; d=float('${DURATION%s}'); print(f'| $3 | $2 | {r:.0f} | $p | {($c1 - $c0) * 10000 / (r * d):.1f} | {($a1 - $a0) / ($n1 - $n0):.0f} |')"
  stop_server
}

echo "# GET random document of $DOCS, baseline $(git rev-parse --short "$BASE") vs working tree $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes'), wrk -t2 -c64 -d$DURATION"
echo "| round | build | req/s | p99 | server CPU µs/request | B allocated/request |"
echo "|---|---|---|---|---|---|"
for r in $(seq 1 "$ROUNDS"); do
  measure "$WORK/base" baseline "$r"
  measure "$WORK/head" "working tree" "$r"
done
