#!/usr/bin/env bash
# A 100 MB document through the server: PUT then GET, with the server's working set and managed
# heap before and after (from /admin/stats). Usage: perf/load/bigdoc.sh [megabytes]
set -euo pipefail
cd "$(dirname "$0")/../.."
MB=${1:-100}
PORT=${PORT:-18095}
. perf/load/ab-lib.sh
publish_server server/bin/Release/ready-to-run
DATA=$(mktemp -d)
cleanup() { kill "$PID" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$DATA"; }
trap cleanup EXIT
python3 - "$MB" "$DATA/big.json" <<'PY'
import sys, random
mb, path = int(sys.argv[1]), sys.argv[2]
rng = random.Random(5)
with open(path, "w") as f:
    f.write('{"Items":[')
    size, i = 0, 0
    while size < mb * 1_000_000:
        item = '{"N":%d,"Text":"%s"}' % (i, " ".join(str(rng.random()) for _ in range(8)))
        f.write(("," if i else "") + item)
        size += len(item) + 1
        i += 1
    f.write('],"@metadata":{"@collection":"Big"}}')
PY
dotnet server/bin/Release/ready-to-run/Jackdaw.Server.dll --urls "http://127.0.0.1:$PORT" --data-dir "$DATA/db" --Logging:LogLevel:Default=Warning >"$DATA/log" 2>&1 &
PID=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/build/version" >/dev/null && break; sleep 0.1; done
curl -sf -X PUT "http://127.0.0.1:$PORT/admin/databases?name=big" >/dev/null
ws() { curl -s "http://127.0.0.1:$PORT/admin/stats" | python3 -c "import json,sys; d=json.load(sys.stdin); print('%d MB working set, %d MB managed heap' % (d['WorkingSetBytes']/1e6, d['ManagedHeapBytes']/1e6))"; }
peak() { awk '/VmHWM/ {printf "%d MB peak RSS", $2/1000}' "/proc/$PID/status"; }
echo "document: $(( $(stat -c %s "$DATA/big.json") / 1000000 )) MB of JSON"
echo "idle: $(ws); $(peak)"
/usr/bin/time -f "PUT %e s" curl -sf -X PUT --data-binary @"$DATA/big.json" -H 'Content-Type: application/json' "http://127.0.0.1:$PORT/databases/big/docs?id=big/1" -o /dev/null
echo "after PUT: $(ws); $(peak)"
/usr/bin/time -f "GET %e s" curl -sf "http://127.0.0.1:$PORT/databases/big/docs?id=big/1" -o "$DATA/out.json"
echo "after GET: $(ws); $(peak); response $(( $(stat -c %s "$DATA/out.json") / 1000000 )) MB"
