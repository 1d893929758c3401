#!/usr/bin/env bash
# Patch by query over the 100,000-order corpus (issue 30), end to end on a real server:
#   from Orders update { this.Freight += 1; this.Patched = true; }     target >= 20,000 documents/s
# Each round: a fresh server and data folder, the corpus loaded by bulk_insert (timed: the
# reference, documents/s the same server ingests in the same round), then the patch by query is
# started with PATCH /queries and operations/state polled every 20 ms until it completes
# (perf/load/patch-time.py). The same patch runs twice in a round: the first run is also the
# process's first (Jint and the script compiled), the second runs on warm code. Prints seconds,
# documents/s, the ratio to the target and to the bulk insert, and the server's CPU per document.
#
#   perf/load/patch-by-query.sh [rounds]      default: 3 rounds
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
PORT=${PORT:-18098}
CORPUS=${CORPUS:-tests/corpus/orders.jsonl.gz}
QUERY=${QUERY:-from Orders update { this.Freight += 1; this.Patched = true; }}
TARGET=20000

WORK=$(mktemp -d)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

. perf/load/ab-lib.sh
corpus_ndjson "$CORPUS" "$WORK/orders.ndjson"
DOCS=$(wc -l < "$WORK/orders.ndjson")
SERVER=${SERVER_BUILD:-$WORK/head}
[ -n "${SERVER_BUILD:-}" ] || publish_server "$WORK/head"

measure() { # round
  start_server "$SERVER"
  curl -sf -X PUT "http://127.0.0.1:$PORT/admin/databases?name=bench" >/dev/null
  local s e
  s=$(date +%s.%N)
  curl -sf -X POST -H 'Content-Type: application/x-ndjson' -H 'Transfer-Encoding: chunked' \
    --data-binary @"$WORK/orders.ndjson" "http://127.0.0.1:$PORT/databases/bench/bulk_insert" >/dev/null
  e=$(date +%s.%N)
  sleep 1 # the bulk insert's last commits settle
  for run in first second; do
    local t rate us n
    read -r t rate us n < <(python3 perf/load/patch-time.py "http://127.0.0.1:$PORT" bench "$PID" "$QUERY")
    if [ "$t" = "-" ]; then
      echo "| $1 | $run | | failed | | | | |"
    else
      python3 -c "b=$DOCS / ($e - $s); r=$rate; print(f'| $1 | $run | {b:.0f} | $t | {r:.0f} | {r / $TARGET:.2f} | {r / b:.2f} | $us |')"
    fi
  done
  stop_server
}

echo "# patch by query over $DOCS orders: $QUERY; ${SERVER_BUILD:-working tree $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes')}, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| round | run | bulk insert documents/s (reference) | patch seconds | patch documents/s | / target | / bulk insert | server CPU µs/document |"
echo "|---|---|---|---|---|---|---|---|"
for r in $(seq 1 "$ROUNDS"); do measure "$r"; done
