#!/usr/bin/env bash
# Streaming, end to end on loopback (issue 26): the 100,000 corpus orders loaded by bulk_insert
# into a fresh server process, an auto-index of Freight built, then each stream read to its end:
# by curl (the server's pace: bytes read and dropped) and by the .NET client (perf/StreamClient:
# every order deserialized into an object). While each runs the server's memory is sampled every
# 50 ms from /proc/<pid>/status: anonymous memory (RssAnon: heaps, buffers) and the whole RSS
# (VmRSS, which also counts the pages of the memory-mapped data file read so far). Reference, the
# same round: the same orders as one buffered answer (POST /queries, and the client's
# ToListAsync), which the server builds whole before sending.
#   perf/load/stream.sh [rounds]   SERVER_BUILD=<folder> runs a prebuilt server;
#                                  MILLION=1 adds a round over 1,000,000 small documents.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
PORT=${PORT:-18101}
CORPUS=${CORPUS:-tests/corpus/orders.jsonl.gz}
WORK=$(mktemp -d)
PID=
SAMPLER=
cleanup() {
  [ -n "$SAMPLER" ] && kill "$SAMPLER" 2>/dev/null
  [ -n "$PID" ] && kill "$PID" 2>/dev/null
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

if [ -z "${SERVER_BUILD:-}" ]; then
  . perf/load/ab-lib.sh
  publish_server "$WORK/server"
  SERVER_BUILD="$WORK/server"
fi
dotnet build perf/StreamClient -c Release -o "$WORK/client" >/dev/null
zcat "$CORPUS" > "$WORK/orders.ndjson"
U="http://127.0.0.1:$PORT"

start_server() {
  rm -rf "$WORK/data"
  dotnet "$SERVER_BUILD/Jackdaw.Server.dll" --urls "$U" --data-dir "$WORK/data" >"$WORK/server.log" 2>&1 &
  PID=$!
  for _ in $(seq 1 100); do curl -sf "$U/build/version" >/dev/null && break; sleep 0.1; done
}
stop_server() { kill "$PID"; wait "$PID" 2>/dev/null || true; PID=; }
cpu() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
memory() { awk '/^(VmRSS|RssAnon):/ {printf "%s ", $2}' "/proc/$PID/status"; echo; }

# run <name> <expected results> <command...>: one stream or reference, with the server's memory sampled.
run() {
  local name=$1 expected=$2
  shift 2
  sleep 2
  local idle; idle=$(memory)
  (while true; do memory; sleep 0.05; done) >"$WORK/samples" &
  SAMPLER=$!
  local before; before=$(cpu)
  local s; s=$(date +%s.%N)
  "$@" >"$WORK/out" 2>"$WORK/err" || { echo "$name failed: $(head -c 500 "$WORK/err")" >&2; }
  local e; e=$(date +%s.%N)
  local after; after=$(cpu)
  kill "$SAMPLER"; wait "$SAMPLER" 2>/dev/null || true; SAMPLER=
  python3 - "$name" "$expected" "$s" "$e" "$before" "$after" "$idle" "$WORK/samples" "$WORK/out" <<'PY'
import json, os, sys
name, expected, s, e, before, after, idle, samples, out = sys.argv[1:]
seconds = float(e) - float(s)
text = open(out, "rb").read()
client = ""
if text.startswith(b"{\"results\""):            # StreamClient's line
    r = json.loads(text); count = r["results"]; seconds = r["seconds"]
    client = f"{r['clientCpuSeconds'] * 1e6 / max(count, 1):.1f}"
elif text.startswith(b"{\"Stats\""):                 # JSON lines: a Stats line, then Item lines
    count = sum(1 for line in text.splitlines() if line.startswith(b"{\"Item\""))
else:
    answer = json.loads(text); count = len(answer["Results"])
    if "Error" in answer: print(f"{name}: Error {answer['Error']}", file=sys.stderr)
ticks = os.sysconf("SC_CLK_TCK")
cpu_us = (int(after) - int(before)) / ticks * 1e6 / max(count, 1)
rss0, anon0 = (int(x) for x in idle.split())
peaks = [tuple(int(x) for x in line.split()) for line in open(samples) if len(line.split()) == 2]
rss1 = max([p[0] for p in peaks] + [rss0]); anon1 = max([p[1] for p in peaks] + [anon0])
ok = "" if count == int(expected) else f" (expected {expected}!)"
print(f"| {name} | {count}{ok} | {seconds:.2f} | {count / seconds:,.0f} | {cpu_us:.1f} | {client} | {anon0 / 1024:.0f} | +{(anon1 - anon0) / 1024:.0f} | {rss0 / 1024:.0f} | +{(rss1 - rss0) / 1024:.0f} |")
PY
}

header() {
  echo "| run | results | seconds | results/s | server CPU µs/result | client CPU µs/result | idle anon MB | peak anon − idle | idle RSS MB | peak RSS − idle |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
}

query() { curl -sf -X POST "$U/databases/$1/$2" -H 'Content-Type: application/json' -d "{\"Query\":\"$3\"$4}"; }

DOCS=$(wc -l < "$WORK/orders.ndjson")
for round in $(seq 1 "$ROUNDS"); do
  start_server
  curl -sf -X PUT "$U/admin/databases?name=o" >/dev/null
  curl -sf -X POST -H 'Transfer-Encoding: chunked' --data-binary @"$WORK/orders.ndjson" "$U/databases/o/bulk_insert" >/dev/null
  query o queries "from Orders where Freight >= 0" ',"WaitForNonStaleResults":true,"WaitForNonStaleResultsTimeout":"00:05:00"' >/dev/null
  echo "round $round (load $(cut -d' ' -f1 /proc/loadavg))"
  header
  run "curl streams/docs (newest first)" "$DOCS" curl -sf "$U/databases/o/streams/docs"
  run "curl streams/docs?startsWith=orders/" "$DOCS" curl -sf "$U/databases/o/streams/docs?startsWith=orders/"
  run "curl streams/queries from Orders" "$DOCS" query o streams/queries "from Orders" ""
  run "curl streams/queries Freight >= 0 (auto-index)" "$DOCS" query o streams/queries "from Orders where Freight >= 0" ""
  run "curl streams/queries Freight >= 0 order by Freight" "$DOCS" query o streams/queries "from Orders where Freight >= 0 order by Freight" ""
  run "curl streams/queries?format=jsonl from Orders" "$DOCS" query o "streams/queries?format=jsonl" "from Orders" ""
  run "client StreamAsync(startsWith: orders/)" "$DOCS" dotnet "$WORK/client/StreamClient.dll" "$U" o prefix orders/
  run "client StreamAsync(from Orders)" "$DOCS" dotnet "$WORK/client/StreamClient.dll" "$U" o query "from Orders"
  run "client StreamAsync(Freight >= 0 order by Freight)" "$DOCS" dotnet "$WORK/client/StreamClient.dll" "$U" o query "from Orders where Freight >= 0 order by Freight"
  run "slow reader: curl --limit-rate 20M streams/docs" "$DOCS" curl -sf --limit-rate 20M "$U/databases/o/streams/docs"
  # The references last: the answer they build whole leaves the server's heap larger.
  run "reference: curl POST /queries from Orders (buffered)" "$DOCS" query o queries "from Orders" ""
  run "reference: client ToListAsync(from Orders)" "$DOCS" dotnet "$WORK/client/StreamClient.dll" "$U" o list "from Orders"
  stop_server
done

if [ "${MILLION:-}" = 1 ]; then
  python3 - "$WORK/million.ndjson" <<'PY'
import sys, random
random.seed(26)
with open(sys.argv[1], "w") as out:
    for i in range(1_000_000):
        out.write('{"Id":"items/%d","Document":{"N":%d,"Name":"item %d","Tag":"t%d","@metadata":{"@collection":"Items"}}}\n' % (i, random.randrange(1_000_000), i, i % 100))
PY
  start_server
  curl -sf -X PUT "$U/admin/databases?name=m" >/dev/null
  curl -sf -X POST -H 'Transfer-Encoding: chunked' --data-binary @"$WORK/million.ndjson" "$U/databases/m/bulk_insert" >/dev/null
  query m queries "from Items where N >= 0" ',"WaitForNonStaleResults":true,"WaitForNonStaleResultsTimeout":"00:10:00"' >/dev/null
  echo "1,000,000 items (load $(cut -d' ' -f1 /proc/loadavg))"
  header
  run "curl streams/docs" 1000000 curl -sf "$U/databases/m/streams/docs"
  run "curl streams/queries from Items" 1000000 query m streams/queries "from Items" ""
  run "curl streams/queries N >= 0 (auto-index)" 1000000 query m streams/queries "from Items where N >= 0" ""
  run "curl streams/queries N >= 0 order by N desc" 1000000 query m streams/queries "from Items where N >= 0 order by N desc" ""
  run "reference: curl POST /queries from Items (buffered)" 1000000 query m queries "from Items" ""
  stop_server
fi
