#!/usr/bin/env bash
# Queries by an indexed field against the peers (issue 18), the same 100,000 orders in each, the
# same field indexed (Company), the same companies asked for (1-10 orders each, fixed seed):
#   1. over HTTP with wrk -t2 -c16: Jackdaw `from Orders where Company = '<c>'` (an auto-index) vs
#      pouchdb-server 4.2.0 Mango `_find` {"selector":{"Company":c}} on a `_index` of Company,
#      interleaved in each round                                            target: Jackdaw >= 30x
#   2. through each side's .NET client (perf/QueryPeers): Jackdaw vs Marten 9.58 (Npgsql) on
#      PostgreSQL 15 with a computed index on Company, 16 concurrent query loops, A B A B
#                                                                           target: Jackdaw >= 1.5x
# PostgreSQL runs on a temporary cluster (initdb + pg_ctl in a temp folder, as the postgres user,
# fsync and synchronous_commit on) and is stopped after. pouchdb-server is installed with npm into
# $PEERS (default ~/.cache/jackdaw-peers, as docs.sh); Marten comes from NuGet (restore).
#
#   perf/load/query-peers.sh [rounds] [duration] [connections]   defaults: 3 rounds of 10s, 16
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
DURATION=${2:-10s}
CONNS=${3:-16}
PORT=${PORT:-18083}
P_PORT=${P_PORT:-18084}
PG_PORT=${PG_PORT:-18085}
PEERS=${PEERS:-$HOME/.cache/jackdaw-peers}
CORPUS=${CORPUS:-tests/corpus/orders.jsonl.gz}
PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/15/bin 2>/dev/null || true)}

command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
[ -x "$PG_BIN/initdb" ] || { echo "PostgreSQL 15 is missing (no /usr/lib/postgresql/15/bin/initdb): apt-get install postgresql-15, or set PG_BIN" >&2; exit 1; }
id postgres >/dev/null 2>&1 || { echo "no 'postgres' user to run PostgreSQL as (initdb refuses root)" >&2; exit 1; }
if [ ! -x "$PEERS/node_modules/.bin/pouchdb-server" ]; then
  mkdir -p "$PEERS" && npm install --prefix "$PEERS" --silent pouchdb-server@4.2.0 >/dev/null
fi

WORK=$(mktemp -d)
PG=$(mktemp -d)
chown postgres "$PG"
PID=
PIDS=()
as_postgres() { runuser -u postgres -- "$@"; }
cleanup() {
  [ -n "$PID" ] && kill "$PID" 2>/dev/null
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -f "$PG/data/postmaster.pid" ] && as_postgres "$PG_BIN/pg_ctl" -D "$PG/data" -m fast -w stop >/dev/null 2>&1
  wait 2>/dev/null || true
  rm -rf "$WORK" "$PG"
}
trap cleanup EXIT

. perf/load/ab-lib.sh
# SERVER_BUILD: a folder holding an already built Jackdaw.Server.dll (e.g. a patched copy) instead of the working tree.
SERVER=${SERVER_BUILD:-$WORK/head}
[ -n "${SERVER_BUILD:-}" ] || publish_server "$WORK/head"
dotnet build -c Release perf/QueryPeers/QueryPeers.csproj -v q -nologo -o "$WORK/peers" >/dev/null

python3 - "$CORPUS" "$WORK" <<'PY'
import gzip, json, sys
corpus, work = sys.argv[1], sys.argv[2]
with gzip.open(corpus, "rt", encoding="utf-8") as f, open(f"{work}/orders.ndjson", "w", encoding="utf-8") as out, \
        open(f"{work}/couch.ndjson", "w", encoding="utf-8") as couch:
    for line in f:
        doc = json.loads(line)
        out.write(json.dumps({"Id": doc["@metadata"]["@id"], "Document": doc}, separators=(",", ":"), ensure_ascii=False) + "\n")
        plain = {"_id": doc["@metadata"]["@id"], **{k: v for k, v in doc.items() if k != "@metadata"}}
        couch.write(json.dumps(plain, separators=(",", ":"), ensure_ascii=False) + "\n")
PY
python3 perf/load/query-paths.py "$CORPUS" "$WORK" bench
secs() { python3 -c "import time; print(time.monotonic())"; }

echo "# Jackdaw ${SERVER_BUILD:-working tree $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes')}, pouchdb-server 4.2.0, Marten $(sed -n 's/.*"Marten" Version="\([^"]*\)".*/\1/p' perf/QueryPeers/Directory.Packages.props) on PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}')"
# Jackdaw: the corpus and the auto-index on Company.
J="http://127.0.0.1:$PORT"
start_server "$SERVER"
curl -sf -X PUT "$J/admin/databases?name=bench" >/dev/null
curl -sf -X POST -H 'Content-Type: application/x-ndjson' -H 'Transfer-Encoding: chunked' \
  --data-binary @"$WORK/orders.ndjson" "$J/databases/bench/bulk_insert" >/dev/null
curl -sf "$J$(head -1 "$WORK/equality.txt")&waitForNonStaleResults=true&waitForNonStaleResultsTimeout=00:05:00" >/dev/null
echo "# Jackdaw: $(curl -sf "$J/databases/bench/indexes/stats" | python3 -c "import json,sys; print(', '.join(f\"{r['Name']} ({r['EntriesCount']} entries)\" for r in json.load(sys.stdin)['Results']))")"

# pouchdb-server: the same orders (ids as _id, without @metadata) and a Mango index on Company.
P="http://127.0.0.1:$P_PORT"
mkdir -p "$WORK/pouch"
(cd "$WORK/pouch" && exec "$PEERS/node_modules/.bin/pouchdb-server" --host 127.0.0.1 --port "$P_PORT" --dir "$WORK/pouch" >"$WORK/pouch.log" 2>&1) &
PIDS+=($!)
for _ in $(seq 1 300); do curl -sf "$P/" >/dev/null && break; sleep 0.1; done
curl -sf -X PUT "$P/bench" >/dev/null
t0=$(secs)
python3 - "$WORK/couch.ndjson" "$P/bench/_bulk_docs" <<'PY'
import json, sys, urllib.request
def post(docs):
    body = json.dumps({"docs": docs}).encode()
    request = urllib.request.Request(sys.argv[2], data=body, method="POST", headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=600).read()
batch = []
for line in open(sys.argv[1], encoding="utf-8"):
    batch.append(json.loads(line))
    if len(batch) == 2000:
        post(batch); batch = []
if batch:
    post(batch)
PY
t1=$(secs)
POUCH_DOCS=$(curl -sf "$P/bench" | python3 -c "import json,sys; print(json.load(sys.stdin)['doc_count'])")
curl -sf -X POST -H 'Content-Type: application/json' "$P/bench/_index" \
  -d '{"index":{"fields":["Company"]},"ddoc":"by-company","name":"by-company","type":"json"}' >/dev/null
first=$(head -1 "$WORK/company-values.txt")
curl -sf -X POST -H 'Content-Type: application/json' "$P/bench/_find" \
  -d "{\"selector\":{\"Company\":\"$first\"},\"use_index\":\"by-company\"}" >/dev/null
t2=$(secs)
echo "# pouchdb-server: $POUCH_DOCS orders loaded in $(python3 -c "print(f'{$t1 - $t0:.0f}')") s, index on Company built by the first _find in $(python3 -c "print(f'{$t2 - $t1:.0f}')") s"
python3 - "$J" "$P" "$WORK/company-values.txt" <<'PY'
import json, sys, urllib.parse, urllib.request
j, p, values = sys.argv[1], sys.argv[2], [v for v in open(sys.argv[3]).read().split("\n") if v][:50]
for v in values:
    a = json.load(urllib.request.urlopen(j + "/databases/bench/queries?query=" + urllib.parse.quote(f"from Orders where Company = '{v}'", safe="")))
    body = json.dumps({"selector": {"Company": v}, "use_index": "by-company"}).encode()
    b = json.load(urllib.request.urlopen(urllib.request.Request(p + "/bench/_find", data=body, headers={"Content-Type": "application/json"})))
    if sorted(d["@metadata"]["@id"] for d in a["Results"]) != sorted(d["_id"] for d in b["docs"]):
        sys.exit(f"Company {v}: Jackdaw and pouchdb-server disagree")
print("# the first 50 companies: same orders from both")
PY

run_wrk() { # duration url script args... -> "rps p50 p99"
  local d=$1 url=$2 out; shift 2
  out=$(wrk -t2 -c"$CONNS" -d"$d" --latency -s "$@" "$url" -- "${WRK_ARGS[@]}")
  if grep -q "Non-2xx" <<<"$out"; then echo "non-2xx answers from $url:" >&2; grep "Non-2xx" <<<"$out" >&2; fi
  echo "$(awk '/Requests\/sec/ {print $2}' <<<"$out") $(awk '$1=="50%" {print $2}' <<<"$out") $(awk '$1=="99%" {print $2}' <<<"$out")"
}
jackdaw_wrk() { WRK_ARGS=("$WORK/equality.txt"); run_wrk "$1" "$J" perf/load/paths-random.lua; }
pouch_wrk() { WRK_ARGS=(/bench/_find Company "$WORK/company-values.txt" by-company); run_wrk "$1" "$P" perf/load/find-random.lua; }
jackdaw_wrk 3s >/dev/null
pouch_wrk 3s >/dev/null

echo
echo "# over HTTP: query by Company, wrk -t2 -c$CONNS -d$DURATION, $ROUNDS rounds interleaved, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| round | Jackdaw q/s | p50 | p99 | pouchdb-server _find q/s | p50 | p99 | Jackdaw / pouchdb |"
echo "|---|---|---|---|---|---|---|---|"
for r in $(seq 1 "$ROUNDS"); do
  read -r jr j50 j99 < <(jackdaw_wrk "$DURATION")
  read -r pr p50 p99 < <(pouch_wrk "$DURATION")
  python3 -c "print(f'| $r | {$jr:.0f} | $j50 | $j99 | {$pr:.0f} | $p50 | $p99 | {$jr / $pr:.1f} |')"
done
kill "${PIDS[0]}"; wait "${PIDS[0]}" 2>/dev/null || true; PIDS=()

# PostgreSQL 15 on a temporary cluster, and Marten's copy of the orders.
as_postgres "$PG_BIN/initdb" -D "$PG/data" -A trust -U postgres -E UTF8 >/dev/null
as_postgres "$PG_BIN/pg_ctl" -D "$PG/data" -l "$PG/log" -w \
  -o "-p $PG_PORT -k $PG -c listen_addresses=127.0.0.1 -c fsync=on -c synchronous_commit=on -c max_connections=200" start >/dev/null
CS="Host=127.0.0.1;Port=$PG_PORT;Username=postgres;Database=postgres;Maximum Pool Size=64"
JACKDAW_CORPUS=$(cd "$(dirname "$CORPUS")" && pwd) dotnet "$WORK/peers/QueryPeers.dll" load-marten --postgres "$CS"
echo
dotnet "$WORK/peers/QueryPeers.dll" run --jackdaw "$J" --database bench --postgres "$CS" \
  --values "$WORK/company-values.txt" --rounds "$ROUNDS" --seconds "${DURATION%s}" --concurrency "$CONNS" \
  --jackdaw-pid "$PID" --postgres-pid "$(head -1 "$PG/data/postmaster.pid")"
