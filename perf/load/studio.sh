#!/usr/bin/env bash
# Issue 32: each studio page's first view on a database of 100,000 orders (tests/corpus), on
# loopback, in Debian's headless Chromium (perf/StudioTimings): from navigation to the last request
# of the first view settled. Target: under 300 ms for every page. The database also gets what the
# pages list: a static index and an auto-index (caught up first), a subscription and a periodic
# backup task.
#
#   perf/load/studio.sh [runs]      default: 5 runs per page
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${1:-5}
PORT=${PORT:-18095}
URL="http://127.0.0.1:$PORT"
[ -x /usr/bin/chromium ] || { echo "chromium is missing: apt-get install chromium" >&2; exit 1; }
WORK=$(mktemp -d)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

. perf/load/ab-lib.sh
publish_server "$WORK/head"
dotnet build -c Release perf/StudioTimings -v q -nologo -o "$WORK/timings" >/dev/null
corpus_ndjson tests/corpus/orders.jsonl.gz "$WORK/orders.ndjson"
start_server "$WORK/head"
curl -sf -X PUT "$URL/admin/databases?name=orders" >/dev/null
curl -sf -X POST -H 'Content-Type: application/x-ndjson' --data-binary @"$WORK/orders.ndjson" "$URL/databases/orders/bulk_insert" >/dev/null
curl -sf -X PUT -H 'Content-Type: application/json' "$URL/databases/orders/admin/indexes" \
  -d '{"Indexes":[{"Name":"Orders/Totals","Maps":["map(\"Orders\", o => ({ Company: o.Company, Total: o.Lines.reduce((s, l) => s + l.PricePerUnit * l.Quantity, 0) }))"]}]}' >/dev/null
curl -sf -X POST -H 'Content-Type: application/json' "$URL/databases/orders/queries" \
  -d '{"Query":"from Orders where Freight > 10","WaitForNonStaleResults":true,"WaitForNonStaleResultsTimeout":"00:05:00"}' -o /dev/null
curl -sf -X POST -H 'Content-Type: application/json' "$URL/databases/orders/queries" \
  -d '{"Query":"from index \"Orders/Totals\" where Total > 100","WaitForNonStaleResults":true,"WaitForNonStaleResultsTimeout":"00:05:00"}' -o /dev/null
curl -sf -X PUT -H 'Content-Type: application/json' "$URL/databases/orders/subscriptions" -d '{"Name":"valid-orders","Query":"from Orders where Valid = true"}' >/dev/null
curl -sf -X POST -H 'Content-Type: application/json' "$URL/databases/orders/admin/periodic-backup" \
  -d "{\"TaskId\":0,\"Name\":\"nightly\",\"BackupType\":\"Backup\",\"FullBackupFrequency\":\"0 2 * * *\",\"IncrementalBackupFrequency\":\"*/30 * * * *\",\"LocalSettings\":{\"FolderPath\":\"$WORK/backups\"}}" >/dev/null
ID=$(head -1 "$WORK/orders.ndjson" | python3 -c "import json,sys; print(json.load(sys.stdin)['Id'])")
echo "# studio pages' first view, 100,000 orders, build $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes'), $RUNS runs per page, $(date -u +%F)"
dotnet "$WORK/timings/StudioTimings.dll" "$URL" orders "$ID" "$RUNS"
