#!/usr/bin/env bash
# Subscription delivery, end to end on loopback (issue 20): the 100,000 corpus orders loaded by
# bulk_insert, then one worker (perf/load/subscription-worker.mjs, Node and the ws package of the
# compatibility suite) receives every order of an unfiltered subscription in batches of 4,096 and
# acknowledges each (durable) before the next. Prints documents/s per round and the server's CPU
# per document, for the first subscription of a fresh server process (its code still being
# compiled by the JIT) and for a second one right after it (warm). Reference: the same round's
# bulk_insert of the same documents.
#   perf/load/subscription.sh [rounds]      (SERVER_BUILD=<folder> runs a prebuilt server)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
PORT=${PORT:-18099}
CORPUS=${CORPUS:-tests/corpus/orders.jsonl.gz}
WORK=$(mktemp -d)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

[ -d tests/compat/ravendb-node/node_modules/ws ] || (cd tests/compat/ravendb-node && npm ci --silent)
python3 - "$CORPUS" "$WORK/orders.ndjson" <<'PY'
import gzip, json, sys
with gzip.open(sys.argv[1], "rt", encoding="utf-8") as f, open(sys.argv[2], "w", encoding="utf-8") as out:
    for line in f:
        doc = json.loads(line)
        out.write(json.dumps({"Id": doc["@metadata"]["@id"], "Document": doc}, separators=(",", ":"), ensure_ascii=False) + "\n")
PY
DOCS=$(wc -l < "$WORK/orders.ndjson")
if [ -z "${SERVER_BUILD:-}" ]; then
  . perf/load/ab-lib.sh
  publish_server "$WORK/server"
  SERVER_BUILD="$WORK/server"
fi
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
echo "| round | bulk insert docs/s | run | delivered docs/s | batches | / 100,000 target | server CPU µs/doc delivered |"
echo "|---|---|---|---|---|---|---|"
for round in $(seq 1 "$ROUNDS"); do
  rm -rf "$WORK/data"
  dotnet "$SERVER_BUILD/Jackdaw.Server.dll" --urls "http://127.0.0.1:$PORT" --data-dir "$WORK/data" >"$WORK/server.log" 2>&1 &
  PID=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/build/version" >/dev/null && break; sleep 0.1; done
  curl -sf -X PUT "http://127.0.0.1:$PORT/admin/databases?name=subs" >/dev/null
  s=$(date +%s.%N)
  curl -sf -X POST -H 'Content-Type: application/x-ndjson' -H 'Transfer-Encoding: chunked' \
    --data-binary @"$WORK/orders.ndjson" "http://127.0.0.1:$PORT/databases/subs/bulk_insert" >/dev/null
  e=$(date +%s.%N)
  bulk=$(python3 -c "print(round($DOCS / ($e - $s)))")
  for run in fresh warm; do
    curl -sf -X PUT "http://127.0.0.1:$PORT/databases/subs/subscriptions" -d "{\"Name\":\"All-$run\",\"Query\":\"from Orders\"}" >/dev/null
    before=$(cpu $PID)
    result=$(node perf/load/subscription-worker.mjs "http://127.0.0.1:$PORT" subs "All-$run" "$DOCS" 4096)
    after=$(cpu $PID)
    python3 - "$round" "$bulk" "$run" "$result" "$before" "$after" "$DOCS" <<'PY'
import json, os, sys
r = json.loads(sys.argv[4])
ticks = os.sysconf("SC_CLK_TCK")
cpu_us = (int(sys.argv[6]) - int(sys.argv[5])) / ticks * 1e6 / int(sys.argv[7])
print(f"| {sys.argv[1]} | {sys.argv[2]} | {sys.argv[3]} | {r['perSecond']} | {r['batches']} | {r['perSecond']/100000:.2f} | {cpu_us:.1f} |")
PY
  done
  kill $PID; wait $PID 2>/dev/null || true; PID=
done
