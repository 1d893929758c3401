#!/usr/bin/env bash
# Indexing throughput on the 100,000-order corpus (issue 18), end to end on a real server:
#   auto: the auto-index `from Orders where Company = $c and Freight > 10` creates
#         (Auto/Orders/ByCompanyAndFreight)                       target >= 50,000 documents/s
#   js:   the JavaScript index Orders/Totals (Company, Total over Lines, OrderedAt)
#                                                                  target >= 20,000 documents/s
# Each round and each index: a fresh server and data folder, the corpus loaded by bulk_insert (timed:
# the reference, documents/s ingested by the same server in the same round), then the index is
# created and GET indexes/stats is polled every 50 ms until it is not stale and holds 100,000
# entries (perf/load/index-time.py). Prints seconds, documents/s, the ratio to the target and to
# the bulk insert, and the server's CPU per document (utime+stime, /proc) while indexing.
#
#   perf/load/indexing.sh [rounds] [kinds]      defaults: 3 rounds, "auto js"
# WARM=1: before the timed build, the same corpus is loaded into another database of the same
# process and the same index built there (untimed): the timed build then runs on JIT-compiled code,
# as every build after a server's first does (the first build of a process also compiles Lucene.Net).
# WARM_DOCS=N: the warm-up database holds only the first N orders (how little warm-up suffices).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
KINDS=${2:-auto js}
PORT=${PORT:-18099}
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
# SERVER_BUILD: a folder holding an already built Jackdaw.Server.dll (e.g. a patched copy) instead of the working tree.
SERVER=${SERVER_BUILD:-$WORK/head}
[ -n "${SERVER_BUILD:-}" ] || publish_server "$WORK/head"

declare -A TARGET=([auto]=50000 [js]=20000)
declare -A LABEL=([auto]="Auto/Orders/ByCompanyAndFreight" [js]="Orders/Totals (JavaScript)")

measure() { # kind round
  start_server "$SERVER"
  if [ "${WARM:-0}" = 1 ]; then
    curl -sf -X PUT "http://127.0.0.1:$PORT/admin/databases?name=warm" >/dev/null
    head -n "${WARM_DOCS:-$DOCS}" "$WORK/orders.ndjson" > "$WORK/warm.ndjson"
    curl -sf -X POST -H 'Content-Type: application/x-ndjson' -H 'Transfer-Encoding: chunked' \
      --data-binary @"$WORK/warm.ndjson" "http://127.0.0.1:$PORT/databases/warm/bulk_insert" >/dev/null
    python3 perf/load/index-time.py "http://127.0.0.1:$PORT" warm "$PID" "$1" "${WARM_DOCS:-$DOCS}" >/dev/null
  fi
  curl -sf -X PUT "http://127.0.0.1:$PORT/admin/databases?name=bench" >/dev/null
  local s e
  s=$(date +%s.%N)
  curl -sf -X POST -H 'Content-Type: application/x-ndjson' -H 'Transfer-Encoding: chunked' \
    --data-binary @"$WORK/orders.ndjson" "http://127.0.0.1:$PORT/databases/bench/bulk_insert" >/dev/null
  e=$(date +%s.%N)
  sleep 1 # the bulk insert's last commits settle
  local t rate us polls
  read -r t rate us polls < <(python3 perf/load/index-time.py "http://127.0.0.1:$PORT" bench "$PID" "$1" "$DOCS")
  if [ "$t" = "-" ]; then
    echo "| $2 | ${LABEL[$1]} | $(python3 -c "print(f'{$DOCS / ($e - $s):.0f}')") | failed | | | | | |"
  else
    python3 -c "b=$DOCS / ($e - $s); r=$rate; print(f'| $2 | ${LABEL[$1]} | {b:.0f} | $t | {r:.0f} | {r / ${TARGET[$1]}:.2f} | {r / b:.2f} | $us | $polls |')"
  fi
  stop_server
}

echo "# indexing $DOCS orders$([ "${WARM:-0}" = 1 ] && echo ", each build after a warm-up build of the same index in the same process"), ${SERVER_BUILD:-working tree $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes')}, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| round | index | bulk insert documents/s (reference) | index seconds | index documents/s | / target | / bulk insert | server CPU µs/document | stats polls |"
echo "|---|---|---|---|---|---|---|---|---|"
for r in $(seq 1 "$ROUNDS"); do
  for k in $KINDS; do measure "$k" "$r"; done
done
