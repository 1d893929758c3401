#!/usr/bin/env bash
# Load runs with wrk: Jackdaw against the bare Kestrel reference, interleaved (A B A B), on this
# machine's loopback. Prints requests/s, latency percentiles and the ratio per round.
#
#   perf/load/run.sh [rounds] [duration]     defaults: 3 rounds of 10s, wrk -t2 -c64
#
# Needs wrk (Debian package; installed here when missing and running as root).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
DURATION=${2:-10s}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-64}
JACKDAW_PORT=${JACKDAW_PORT:-18080}
BARE_PORT=${BARE_PORT:-18081}

if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq wrk >/dev/null; else echo "wrk is missing: apt-get install wrk" >&2; exit 1; fi
fi

. perf/load/ab-lib.sh
publish_server server/bin/Release/ready-to-run
dotnet build -c Release perf/load/BareKestrel/BareKestrel.csproj -v q -nologo >/dev/null

DATA=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$DATA"; }
trap cleanup EXIT

dotnet server/bin/Release/ready-to-run/Jackdaw.Server.dll --urls "http://127.0.0.1:$JACKDAW_PORT" --data-dir "$DATA/jackdaw" \
  --Logging:LogLevel:Default=Warning >"$DATA/jackdaw.log" 2>&1 &
PIDS+=($!)
dotnet perf/load/BareKestrel/bin/Release/net10.0/BareKestrel.dll --urls "http://127.0.0.1:$BARE_PORT" >"$DATA/bare.log" 2>&1 &
PIDS+=($!)

wait_up() { for _ in $(seq 1 100); do curl -sf "$1" >/dev/null && return 0; sleep 0.1; done; echo "server at $1 did not start" >&2; exit 1; }
wait_up "http://127.0.0.1:$JACKDAW_PORT/build/version"
wait_up "http://127.0.0.1:$BARE_PORT/"

run_wrk() { # url -> "rps p50 p99"
  local out
  out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency "$1")
  local rps p50 p99
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1=="50%" {print $2}' <<<"$out")
  p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  echo "$rps $p50 $p99"
}

echo "# warm-up"
wrk -t"$THREADS" -c"$CONNECTIONS" -d3s "http://127.0.0.1:$JACKDAW_PORT/build/version" >/dev/null
wrk -t"$THREADS" -c"$CONNECTIONS" -d3s "http://127.0.0.1:$BARE_PORT/" >/dev/null

echo "# GET /build/version, wrk -t$THREADS -c$CONNECTIONS -d$DURATION, $ROUNDS rounds interleaved"
printf "| round | Jackdaw req/s | p50 | p99 | bare Kestrel req/s | p50 | p99 | ratio |\n|---|---|---|---|---|---|---|---|\n"
sum_ratio=0
for r in $(seq 1 "$ROUNDS"); do
  read -r jr j50 j99 < <(run_wrk "http://127.0.0.1:$JACKDAW_PORT/build/version")
  read -r br b50 b99 < <(run_wrk "http://127.0.0.1:$BARE_PORT/")
  ratio=$(awk -v a="$jr" -v b="$br" 'BEGIN {printf "%.2f", a/b}')
  sum_ratio=$(awk -v s="$sum_ratio" -v x="$ratio" 'BEGIN {print s+x}')
  printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n" "$r" "$jr" "$j50" "$j99" "$br" "$b50" "$b99" "$ratio"
done
awk -v s="$sum_ratio" -v n="$ROUNDS" 'BEGIN {printf "mean ratio Jackdaw / bare Kestrel: %.2f\n", s/n}'
curl -s "http://127.0.0.1:$JACKDAW_PORT/admin/stats"; echo
