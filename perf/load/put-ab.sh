#!/usr/bin/env bash
# Durable PUT of new ~1 KiB documents (perf/load/put-new.lua), A B A B against a baseline revision
# of this repository built from `git archive`: requests/s with 1 and 64 connections, c64/c1, and the
# server's CPU per request at 64 connections (utime+stime of the server process, /proc). Each server
# runs alone on a fresh data folder and is warmed by a short run first.
#
#   perf/load/put-ab.sh [rounds] [baseline-rev] [duration]      defaults: 3 rounds, HEAD~1, 10s
# BASE_ENV / HEAD_ENV: extra environment for each server ("NAME=value ..."), e.g. to compare two
# runtime settings on the same code: BASE_ENV= HEAD_ENV="DOTNET_gcServer=0" perf/load/put-ab.sh 3 HEAD
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
BASE=${2:-HEAD~1}
DURATION=${3:-10s}
PORT=${PORT:-18097}

command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
WORK=$(mktemp -d)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

. perf/load/ab-lib.sh
build_pair "$BASE"

put() { # connections duration -> "rps p99"
  local out
  out=$(wrk -t"$(( $1 < 2 ? 1 : 2 ))" -c"$1" -d"$2" --latency -s perf/load/put-new.lua "http://127.0.0.1:$PORT" -- "/databases/bench/docs?id=new/")
  if grep -q "Non-2xx" <<<"$out"; then echo "non-2xx answers:" >&2; grep "Non-2xx" <<<"$out" >&2; fi
  echo "$(awk '/Requests\/sec/ {print $2}' <<<"$out") $(awk '$1=="99%" {print $2}' <<<"$out")"
}
measure() { # build-dir label round env
  # shellcheck disable=SC2086 # the env setting is a list of NAME=value words
  start_server "$1" $4
  curl -sf -X PUT "http://127.0.0.1:$PORT/admin/databases?name=bench" >/dev/null
  put 64 3s >/dev/null
  local c0 c1 r1 p1 r64 p64
  read -r r1 p1 < <(put 1 "$DURATION")
  c0=$(cpu "$PID")
  read -r r64 p64 < <(put 64 "$DURATION")
  c1=$(cpu "$PID")
  python3 -c "r1=$r1; r64=$r64; d=float('${DURATION%s}'); print(f'| $3 | $2 | {r1:.0f} | $p1 | {r64:.0f} | $p64 | {r64 / r1:.1f} | {($c1 - $c0) * 10000 / (r64 * d):.1f} |')"
  stop_server
}

echo "# durable PUT, baseline $(git rev-parse --short "$BASE") vs working tree $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes'), -d$DURATION"
echo "| round | build | c1 req/s | p99 | c64 req/s | p99 | c64/c1 | server CPU µs/request (c64) |"
echo "|---|---|---|---|---|---|---|---|"
for r in $(seq 1 "$ROUNDS"); do
  measure "$WORK/base" "baseline${BASE_ENV:+ $BASE_ENV}" "$r" "${BASE_ENV:-}"
  measure "$WORK/head" "working tree${HEAD_ENV:+ $HEAD_ENV}" "$r" "${HEAD_ENV:-}"
done
