#!/usr/bin/env bash
# Durable PUT of ~1 KiB documents over 2,000 ids at random (perf/load/put-update.lua), into a
# database with revisions on (default configuration, MinimumRevisionsToKeep 10) and into one
# without, alternating on the same build: requests/s with 1 and 64 connections and the ratio.
# Each measurement gets a fresh server and data folder, warmed by a short run that also fills
# every document's revisions up to the limit, so the measured run pays the purge.
#
#   perf/load/revisions.sh [rounds] [duration]      defaults: 3, 10s
# SERVER_BUILD: a built server folder to use instead of building the working tree.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
DURATION=${2:-10s}
PORT=${PORT:-18098}
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
WORK=$(mktemp -d)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
. perf/load/ab-lib.sh
BUILD=${SERVER_BUILD:-}
if [ -z "$BUILD" ]; then
  publish_server "$WORK/head"
  BUILD=$WORK/head
fi
URL="http://127.0.0.1:$PORT"
put() { # connections duration -> rps
  local out
  out=$(wrk -t"$(( $1 < 2 ? 1 : 2 ))" -c"$1" -d"$2" -s perf/load/put-update.lua "$URL" -- bench 2000)
  if grep -q "Non-2xx" <<<"$out"; then echo "non-2xx answers:" >&2; grep "Non-2xx" <<<"$out" >&2; fi
  awk '/Requests\/sec/ {print $2}' <<<"$out"
}
measure() { # revisions(0/1) -> "c1 c64"
  start_server "$BUILD"
  curl -sf -X PUT "$URL/admin/databases?name=bench" >/dev/null
  if [ "$1" = 1 ]; then
    curl -sf -X POST "$URL/databases/bench/admin/revisions/config" -H 'Content-Type: application/json' \
      -d '{"Default":{"Disabled":false,"MinimumRevisionsToKeep":10}}' >/dev/null
  fi
  put 64 8s >/dev/null
  local r1 r64
  r1=$(put 1 "$DURATION")
  r64=$(put 64 "$DURATION")
  if [ "$1" = 1 ]; then
    local count
    count=$(curl -sf "$URL/databases/bench/revisions/count?id=bench/7" | python3 -c "import json,sys; print(json.load(sys.stdin)['RevisionsCount'])")
    [ "$count" -le 10 ] || { echo "bench/7 has $count revisions, more than the 10 kept" >&2; exit 1; }
  fi
  stop_server
  echo "$r1 $r64"
}
echo "# durable PUT over 2,000 ids, revisions (keep 10) vs none, same build, -d$DURATION"
echo "| round | none c1 | revisions c1 | ratio | none c64 | revisions c64 | ratio |"
echo "|---|---|---|---|---|---|---|"
for r in $(seq 1 "$ROUNDS"); do
  read -r n1 n64 < <(measure 0)
  read -r v1 v64 < <(measure 1)
  python3 -c "print(f'| $r | {$n1:.0f} | {$v1:.0f} | {$v1/$n1:.2f} | {$n64:.0f} | {$v64:.0f} | {$v64/$n64:.2f} |')"
done
