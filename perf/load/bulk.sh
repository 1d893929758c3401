#!/usr/bin/env bash
# Server-side bulk_insert ingestion of the 100,000-order corpus (tests/corpus/orders.jsonl.gz),
# posted as one chunked NDJSON stream by curl (no client library in the way), A B A B against a
# baseline revision of this repository built from `git archive`:
#   documents/s, and the server's CPU per document (utime+stime of the server process, /proc),
#   each server warmed by one whole load first; every load goes into a fresh database.
#
#   perf/load/bulk.sh [rounds] [baseline-rev]      defaults: 3 rounds, baseline HEAD~1
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
BASE=${2:-HEAD~1}
PORT=${PORT:-18096}
CORPUS=${CORPUS:-tests/corpus/orders.jsonl.gz}

WORK=$(mktemp -d)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

python3 - "$CORPUS" "$WORK/orders.ndjson" <<'PY'
import gzip, json, sys
with gzip.open(sys.argv[1], "rt", encoding="utf-8") as f, open(sys.argv[2], "w", encoding="utf-8") as out:
    for line in f:
        doc = json.loads(line)
        out.write(json.dumps({"Id": doc["@metadata"]["@id"], "Document": doc}, separators=(",", ":"), ensure_ascii=False) + "\n")
PY
DOCS=$(wc -l < "$WORK/orders.ndjson")

. perf/load/ab-lib.sh
build_pair "$BASE"

load() { # port db -> seconds
  local s e
  s=$(date +%s.%N)
  curl -sf -X POST -H 'Content-Type: application/x-ndjson' -H 'Transfer-Encoding: chunked' \
    --data-binary @"$WORK/orders.ndjson" "http://127.0.0.1:$PORT/databases/$2/bulk_insert" >/dev/null
  e=$(date +%s.%N)
  python3 -c "print($e - $s)"
}
measure() { # build-dir label round
  start_server "$1"
  curl -sf -X PUT "http://127.0.0.1:$PORT/admin/databases?name=warm" >/dev/null
  curl -sf -X PUT "http://127.0.0.1:$PORT/admin/databases?name=run" >/dev/null
  load "$PORT" warm >/dev/null
  local c0 c1 t
  c0=$(cpu "$PID")
  t=$(load "$PORT" run)
  c1=$(cpu "$PID")
  python3 -c "t=$t; print(f'| $3 | $2 | {t:.2f} | {$DOCS / t:.0f} | {($c1 - $c0) * 10000 / $DOCS:.1f} |')"
  stop_server
}

echo "# bulk_insert of $DOCS orders, baseline $(git rev-parse --short "$BASE") vs working tree $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes')"
echo "| round | build | seconds | documents/s | server CPU µs/document |"
echo "|---|---|---|---|---|"
for r in $(seq 1 "$ROUNDS"); do
  measure "$WORK/base" baseline "$r"
  measure "$WORK/head" "working tree" "$r"
done
