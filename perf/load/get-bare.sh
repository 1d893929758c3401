#!/usr/bin/env bash
# GET of a random ~1 KiB document by id (perf/load/get-random.lua) against the bare Kestrel
# reference answering a fixed body of the same size (perf/load/BareKestrel), with a baseline
# revision of this repository beside the working tree: the reduced GET part of docs.sh, A B C A B C.
# Prints requests/s, p99, the server's CPU per request (µs) and each Jackdaw build's ratio to the bare
# Kestrel round next to it, with the load average.
#
#   perf/load/get-bare.sh [rounds] [baseline-rev] [duration]      defaults: 3 rounds, HEAD~1, 10s
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
BASE=${2:-HEAD~1}
DURATION=${3:-10s}
PORT=${PORT:-18099}
B_PORT=${B_PORT:-18100}
DOCS=${DOCS:-10000}

command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
WORK=$(mktemp -d)
PID=
BARE=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; [ -n "$BARE" ] && kill "$BARE" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

. perf/load/ab-lib.sh
build_pair "$BASE"
dotnet build -c Release perf/load/BareKestrel/BareKestrel.csproj -v q -nologo -o "$WORK/bare" >/dev/null
python3 perf/load/gen-docs.py "$DOCS" "$WORK/docs"
DOC_BYTES=$(awk 'NR==1 {print length($0); exit}' "$WORK/docs/jackdaw.ndjson")

run_wrk() { # url [script args...] -> "rps p99"
  local url=$1; shift
  local script=()
  if [ $# -gt 0 ]; then script=(-s perf/load/get-random.lua); fi
  local out
  out=$(wrk -t2 -c64 -d"$DURATION" --latency "${script[@]}" "$url" -- "$@")
  if grep -q "Non-2xx" <<<"$out"; then echo "non-2xx answers:" >&2; grep "Non-2xx" <<<"$out" >&2; fi
  echo "$(awk '/Requests\/sec/ {print $2}' <<<"$out") $(awk '$1=="99%" {print $2}' <<<"$out")"
}
jackdaw() { # build-dir -> "rps p99 cpu-µs"
  start_server "$1"
  curl -sf -X PUT "http://127.0.0.1:$PORT/admin/databases?name=bench" >/dev/null
  curl -sf -X POST -H 'Content-Type: application/x-ndjson' --data-binary @"$WORK/docs/jackdaw.ndjson" "http://127.0.0.1:$PORT/databases/bench/bulk_insert" >/dev/null
  DURATION=3s run_wrk "http://127.0.0.1:$PORT" "/databases/bench/docs?id=docs/" "$DOCS" >/dev/null
  local c0 c1 r p
  c0=$(cpu "$PID")
  read -r r p < <(run_wrk "http://127.0.0.1:$PORT" "/databases/bench/docs?id=docs/" "$DOCS")
  c1=$(cpu "$PID")
  stop_server
  echo "$r $p $(python3 -c "print(f'{($c1 - $c0) * 10000 / ($r * float("${DURATION%s}")):.1f}')")"
}
bare() { # -> "rps p99 cpu-µs"
  local c0 c1 r p
  c0=$(cpu "$BARE")
  read -r r p < <(run_wrk "http://127.0.0.1:$B_PORT/")
  c1=$(cpu "$BARE")
  echo "$r $p $(python3 -c "print(f'{($c1 - $c0) * 10000 / ($r * float("${DURATION%s}")):.1f}')")"
}

dotnet "$WORK/bare/BareKestrel.dll" --urls "http://127.0.0.1:$B_PORT" --body-bytes "$((DOC_BYTES + 150))" >"$WORK/bare.log" 2>&1 &
BARE=$!
for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$B_PORT/" >/dev/null && break; sleep 0.1; done
DURATION=3s run_wrk "http://127.0.0.1:$B_PORT/" >/dev/null

echo "# GET random document of $DOCS against bare Kestrel ($((DOC_BYTES + 150)) B body), baseline $(git rev-parse --short "$BASE") vs working tree $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes'), wrk -t2 -c64 -d$DURATION"
echo "| round | baseline req/s | p99 | CPU µs/req | working tree req/s | p99 | CPU µs/req | bare Kestrel req/s | p99 | CPU µs/req | baseline/bare | working tree/bare | load |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for r in $(seq 1 "$ROUNDS"); do
  read -r br bp bc < <(jackdaw "$WORK/base")
  read -r kr kp kc < <(bare)
  read -r hr hp hc < <(jackdaw "$WORK/head")
  python3 -c "print(f'| $r | {$br:.0f} | $bp | $bc | {$hr:.0f} | $hp | $hc | {$kr:.0f} | $kp | $kc | {$br / $kr:.2f} | {$hr / $kr:.2f} | $(cut -d' ' -f1 /proc/loadavg) |')"
done
