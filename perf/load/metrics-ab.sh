#!/usr/bin/env bash
# Metrics on against metrics off (issue 32): the same build, A B A B, each server alone on a fresh
# data folder. A = default settings (metrics recorded, /metrics scraped every 5 s as Prometheus
# would), B = JACKDAW_METRICS__ENABLED=false (no listener, nothing recorded). Two loads per server:
# GET of a random ~1 KiB document by id (wrk -c64, perf/load/get-random.lua) and durable PUT of new
# documents (wrk -c64, perf/load/put-new.lua). Target: A ≥ 0.97 × B for both.
#
#   perf/load/metrics-ab.sh [rounds] [duration]      defaults: 3 rounds, 10s
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
DURATION=${2:-10s}
PORT=${PORT:-18096}
DOCS=${DOCS:-10000}

command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
WORK=$(mktemp -d)
PID=
SCRAPER=
cleanup() { [ -n "$SCRAPER" ] && kill "$SCRAPER" 2>/dev/null; [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

. perf/load/ab-lib.sh
publish_server "$WORK/head"
python3 perf/load/gen-docs.py "$DOCS" "$WORK/docs"

wrk_run() { # script path duration -> "rps p99"
  local out
  out=$(wrk -t2 -c64 -d"$3" --latency -s "$1" "http://127.0.0.1:$PORT" -- "$2" "$DOCS")
  if grep -q "Non-2xx" <<<"$out"; then echo "non-2xx answers:" >&2; grep "Non-2xx" <<<"$out" >&2; fi
  echo "$(awk '/Requests\/sec/ {print $2}' <<<"$out") $(awk '$1=="99%" {print $2}' <<<"$out")"
}
measure() { # label round env
  # shellcheck disable=SC2086 # the env setting is a list of NAME=value words
  start_server "$WORK/head" $3
  curl -sf -X PUT "http://127.0.0.1:$PORT/admin/databases?name=bench" >/dev/null
  curl -sf -X POST -H 'Content-Type: application/x-ndjson' --data-binary @"$WORK/docs/jackdaw.ndjson" "http://127.0.0.1:$PORT/databases/bench/bulk_insert" >/dev/null
  ( while sleep 5; do curl -s -o /dev/null "http://127.0.0.1:$PORT/metrics"; done ) &
  SCRAPER=$!
  wrk_run perf/load/get-random.lua "/databases/bench/docs?id=docs/" 3s >/dev/null
  local rg pg rp pp series
  read -r rg pg < <(wrk_run perf/load/get-random.lua "/databases/bench/docs?id=docs/" "$DURATION")
  wrk_run perf/load/put-new.lua "/databases/bench/docs?id=new/" 3s >/dev/null
  read -r rp pp < <(wrk_run perf/load/put-new.lua "/databases/bench/docs?id=new/" "$DURATION")
  series=$(curl -s "http://127.0.0.1:$PORT/metrics" | grep -c '^jackdaw_' || true)
  kill "$SCRAPER"; wait "$SCRAPER" 2>/dev/null || true; SCRAPER=
  echo "| $2 | $1 | $rg | $pg | $rp | $pp | $series |"
  stop_server
}

echo "# metrics on (A) vs off (B), build $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes'), wrk -t2 -c64 -d$DURATION, $DOCS documents"
echo "| round | metrics | GET req/s | GET p99 | durable PUT req/s | PUT p99 | jackdaw_ samples in /metrics |"
echo "|---|---|---|---|---|---|---|"
for r in $(seq 1 "$ROUNDS"); do
  measure "on (A)" "$r" ""
  measure "off (B)" "$r" "JACKDAW_METRICS__ENABLED=false"
done
