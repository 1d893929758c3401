#!/usr/bin/env bash
# Document load runs (issue 5), interleaved in one run so the ratios are fair on a noisy machine:
#   GET a random document by id out of DOCS (default 10,000 ~1 KiB documents):
#       Jackdaw vs the bare Kestrel reference (fixed body of the same size) vs pouchdb-server
#   PUT new ~1 KiB documents, durable: Jackdaw with 1 and 64 connections, pouchdb-server with 64
# Prints requests/s, p50/p99 latency, ratios, and Jackdaw's allocated bytes per GET (/admin/stats).
#
#   perf/load/docs.sh [rounds] [duration]     defaults: 3 rounds of 10s, wrk -t2
#
# Needs wrk (Debian) and Node's npm (pouchdb-server is installed into $PEERS, default ~/.cache/jackdaw-peers).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
DURATION=${2:-10s}
DOCS=${DOCS:-10000}
J_PORT=${J_PORT:-18090}
B_PORT=${B_PORT:-18091}
P_PORT=${P_PORT:-18092}
PEERS=${PEERS:-$HOME/.cache/jackdaw-peers}

command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
if [ ! -x "$PEERS/node_modules/.bin/pouchdb-server" ]; then
  mkdir -p "$PEERS" && npm install --prefix "$PEERS" --silent pouchdb-server@4.2.0 >/dev/null
fi

. perf/load/ab-lib.sh
publish_server server/bin/Release/ready-to-run
dotnet build -c Release perf/load/BareKestrel/BareKestrel.csproj -v q -nologo >/dev/null

DATA=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$DATA"; }
trap cleanup EXIT

python3 perf/load/gen-docs.py "$DOCS" "$DATA/docs"
DOC_BYTES=$(awk 'NR==1 {print length($0); exit}' "$DATA/docs/jackdaw.ndjson")

dotnet server/bin/Release/ready-to-run/Jackdaw.Server.dll --urls "http://127.0.0.1:$J_PORT" --data-dir "$DATA/jackdaw" \
  --Logging:LogLevel:Default=Warning >"$DATA/jackdaw.log" 2>&1 &
PIDS+=($!)
dotnet perf/load/BareKestrel/bin/Release/net10.0/BareKestrel.dll --urls "http://127.0.0.1:$B_PORT" --body-bytes "$((DOC_BYTES + 150))" >"$DATA/bare.log" 2>&1 &
PIDS+=($!)
mkdir -p "$DATA/pouch"
(cd "$DATA/pouch" && "$PEERS/node_modules/.bin/pouchdb-server" --host 127.0.0.1 --port "$P_PORT" --dir "$DATA/pouch" >"$DATA/pouch.log" 2>&1) &
PIDS+=($!)

wait_up() { for _ in $(seq 1 300); do curl -sf "$1" >/dev/null && return 0; sleep 0.1; done; echo "server at $1 did not start" >&2; exit 1; }
wait_up "http://127.0.0.1:$J_PORT/build/version"
wait_up "http://127.0.0.1:$B_PORT/"
wait_up "http://127.0.0.1:$P_PORT/"

# Load the same documents into both databases.
curl -sf -X PUT "http://127.0.0.1:$J_PORT/admin/databases?name=bench" >/dev/null
curl -sf -X POST -H 'Content-Type: application/x-ndjson' --data-binary @"$DATA/docs/jackdaw.ndjson" "http://127.0.0.1:$J_PORT/databases/bench/bulk_insert" >/dev/null
curl -sf -X PUT "http://127.0.0.1:$P_PORT/bench" >/dev/null
for f in "$DATA"/docs/couch-*.json; do
  curl -sf -X POST -H 'Content-Type: application/json' --data-binary @"$f" "http://127.0.0.1:$P_PORT/bench/_bulk_docs" >/dev/null
done
curl -sf "http://127.0.0.1:$J_PORT/databases/bench/docs?id=docs/$DOCS" >/dev/null
curl -sf "http://127.0.0.1:$P_PORT/bench/docs%2F$DOCS" >/dev/null

run_wrk() { # connections url [script [script args...]] -> "rps p50 p99"
  local c=$1 url=$2; shift 2
  local script=()
  if [ $# -gt 0 ]; then script=(-s "$1"); shift; fi
  local out
  out=$(wrk -t"$(( c < 2 ? 1 : 2 ))" -c"$c" -d"$DURATION" --latency "${script[@]}" "$url" -- "$@")
  if grep -q "Non-2xx" <<<"$out"; then echo "non-2xx answers from $url:" >&2; grep "Non-2xx" <<<"$out" >&2; fi
  echo "$(awk '/Requests\/sec/ {print $2}' <<<"$out") $(awk '$1=="50%" {print $2}' <<<"$out") $(awk '$1=="99%" {print $2}' <<<"$out")"
}
stat() { curl -s "http://127.0.0.1:$J_PORT/admin/stats" | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['$1'])"; }

J="http://127.0.0.1:$J_PORT"; B="http://127.0.0.1:$B_PORT/"; P="http://127.0.0.1:$P_PORT"
GET_J=(perf/load/get-random.lua "/databases/bench/docs?id=docs/" "$DOCS")
GET_P=(perf/load/get-random.lua "/bench/docs%2F" "$DOCS")
PUT_J=(perf/load/put-new.lua "/databases/bench/docs?id=new/")
PUT_P=(perf/load/put-new.lua "/bench/new%2F")

echo "# warm-up"
DURATION=3s run_wrk 64 "$J" "${GET_J[@]}" >/dev/null
DURATION=3s run_wrk 64 "$B" >/dev/null
DURATION=3s run_wrk 64 "$P" "${GET_P[@]}" >/dev/null

echo "# GET random document of $DOCS, wrk -t2 -c64 -d$DURATION, $ROUNDS rounds interleaved"
printf "| round | Jackdaw req/s | p50 | p99 | bare Kestrel req/s | p99 | pouchdb-server req/s | p99 | vs bare | vs pouchdb | Jackdaw B allocated/GET |\n|---|---|---|---|---|---|---|---|---|---|---|\n"
for r in $(seq 1 "$ROUNDS"); do
  a0=$(stat AllocatedBytes); n0=$(stat RequestsServed)
  read -r jr j50 j99 < <(run_wrk 64 "$J" "${GET_J[@]}")
  a1=$(stat AllocatedBytes); n1=$(stat RequestsServed)
  read -r br _ b99 < <(run_wrk 64 "$B")
  read -r pr _ p99 < <(run_wrk 64 "$P" "${GET_P[@]}")
  printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" "$r" "$jr" "$j50" "$j99" "$br" "$b99" "$pr" "$p99" \
    "$(awk -v a="$jr" -v b="$br" 'BEGIN {printf "%.2f", a/b}')" "$(awk -v a="$jr" -v b="$pr" 'BEGIN {printf "%.1f", a/b}')" \
    "$(awk -v a="$((a1 - a0))" -v n="$((n1 - n0))" 'BEGIN {printf "%.0f", a/n}')"
done

echo
echo "# PUT new ~1 KiB documents (durable), -d$DURATION, $ROUNDS rounds interleaved"
printf "| round | Jackdaw c1 req/s | p99 | Jackdaw c64 req/s | p99 | pouchdb-server c64 req/s | p99 | c64/c1 | vs pouchdb |\n|---|---|---|---|---|---|---|---|---|\n"
for r in $(seq 1 "$ROUNDS"); do
  read -r j1 _ j1p99 < <(run_wrk 1 "$J" "${PUT_J[@]}")
  read -r j64 _ j64p99 < <(run_wrk 64 "$J" "${PUT_J[@]}")
  read -r p64 _ p64p99 < <(run_wrk 64 "$P" "${PUT_P[@]}")
  printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" "$r" "$j1" "$j1p99" "$j64" "$j64p99" "$p64" "$p64p99" \
    "$(awk -v a="$j64" -v b="$j1" 'BEGIN {printf "%.1f", a/b}')" "$(awk -v a="$j64" -v b="$p64" 'BEGIN {printf "%.1f", a/b}')"
done
curl -s "http://127.0.0.1:$J_PORT/databases/bench/stats"; echo
