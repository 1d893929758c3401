#!/usr/bin/env bash
# Server-side bulk_insert ingestion of the 100,000-order corpus (tests/corpus/orders.jsonl.gz),
# posted as one chunked NDJSON stream by curl (no client library in the way), A B A B against a
# baseline revision of this repository built from `git archive`:
#   documents/s, and the server's CPU per document (utime+stime of the server process, /proc),
#   each server warmed by one whole load first; every load goes into a fresh database.
#
#   perf/load/bulk.sh [rounds] [baseline-rev]      defaults: 3 rounds, baseline HEAD~1
#
# FORM=raven posts RavenDB's form instead, as its clients do: a JSON array of PUT commands under an
# operation id (operations/next-operation-id), tracked by the server as an operation.
# WATCH=1 adds a changes-feed client watching every operation during the timed load
# (watch-operations.mjs, as RavenDB's Node.js client watches its bulk insert) and reports the
# OperationStatusChange messages it got.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
BASE=${2:-HEAD~1}
PORT=${PORT:-18096}
CORPUS=${CORPUS:-tests/corpus/orders.jsonl.gz}
FORM=${FORM:-ndjson}
WATCH=${WATCH:-0}

WORK=$(mktemp -d)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

python3 - "$CORPUS" "$WORK/orders.ndjson" "$WORK/orders.json" <<'PY'
import gzip, json, sys
with gzip.open(sys.argv[1], "rt", encoding="utf-8") as f, open(sys.argv[2], "w", encoding="utf-8") as out, open(sys.argv[3], "w", encoding="utf-8") as array:
    array.write("[")
    for i, line in enumerate(f):
        doc = json.loads(line)
        out.write(json.dumps({"Id": doc["@metadata"]["@id"], "Document": doc}, separators=(",", ":"), ensure_ascii=False) + "\n")
        array.write(("," if i else "") + json.dumps({"Id": doc["@metadata"]["@id"], "Type": "PUT", "Document": doc}, separators=(",", ":"), ensure_ascii=False))
    array.write("]")
PY
DOCS=$(wc -l < "$WORK/orders.ndjson")
[ "$WATCH" = 1 ] && { [ -d tests/compat/ravendb-node/node_modules/ws ] || (cd tests/compat/ravendb-node && npm ci --silent); }

. perf/load/ab-lib.sh
build_pair "$BASE"

load() { # port db -> seconds
  local s e id
  if [ "$FORM" = raven ]; then
    id=$(curl -sf "http://127.0.0.1:$1/databases/$2/operations/next-operation-id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Id"])')
    s=$(date +%s.%N)
    curl -sf -X POST -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' \
      --data-binary @"$WORK/orders.json" "http://127.0.0.1:$1/databases/$2/bulk_insert?id=$id" >/dev/null
  else
    s=$(date +%s.%N)
    curl -sf -X POST -H 'Content-Type: application/x-ndjson' -H 'Transfer-Encoding: chunked' \
      --data-binary @"$WORK/orders.ndjson" "http://127.0.0.1:$1/databases/$2/bulk_insert" >/dev/null
  fi
  e=$(date +%s.%N)
  python3 -c "print($e - $s)"
}
measure() { # build-dir label round
  start_server "$1"
  curl -sf -X PUT "http://127.0.0.1:$PORT/admin/databases?name=warm" >/dev/null
  curl -sf -X PUT "http://127.0.0.1:$PORT/admin/databases?name=run" >/dev/null
  load "$PORT" warm >/dev/null
  local c0 c1 t watcher events=-
  if [ "$WATCH" = 1 ]; then
    node perf/load/watch-operations.mjs "http://127.0.0.1:$PORT" run >"$WORK/watch" 2>"$WORK/watch.err" &
    watcher=$!
    for _ in $(seq 1 100); do grep -q watching "$WORK/watch.err" 2>/dev/null && break; sleep 0.1; done
  fi
  c0=$(cpu "$PID")
  t=$(load "$PORT" run)
  c1=$(cpu "$PID")
  if [ -n "${watcher:-}" ]; then
    sleep 0.5 # the final state on its way
    kill -TERM "$watcher"; wait "$watcher" 2>/dev/null || true
    events=$(cat "$WORK/watch")
  fi
  python3 -c "t=$t; print(f'| $3 | $2 | {t:.2f} | {$DOCS / t:.0f} | {($c1 - $c0) * 10000 / $DOCS:.1f} | $events |')"
  stop_server
}

echo "# bulk_insert ($FORM, watch $WATCH) of $DOCS orders, baseline $(git rev-parse --short "$BASE") vs working tree $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes')"
echo "| round | build | seconds | documents/s | server CPU µs/document | operation changes watched |"
echo "|---|---|---|---|---|---|"
for r in $(seq 1 "$ROUNDS"); do
  measure "$WORK/base" baseline "$r"
  measure "$WORK/head" "working tree" "$r"
done
