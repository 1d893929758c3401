#!/usr/bin/env bash
# Map-reduce indexes on the 100,000-order corpus (issue 30), end to end on a real server; the
# helper perf/load/map-reduce.py does the timing, each figure beside a reference of the same run:
#   build:  Orders/ByCompany (count and sum of line totals per company) built in a fresh process,
#           documents/s (target >= 20,000/s); reference, interleaved A B A B: the map index
#           Orders/CompanyTotals with the same map and no reduce, also in a fresh process.
#   update: one group of 100,000 entries (every order's Company set to companies/big) and one of
#           10 (small/1..10): an update of one order, the time from the write to the index having
#           reduced it (bulk_docs with waitForSpecificIndex), big and small alternating, REPS each
#           per round; median and p90 (target: big <= 2x small).
#   query:  from index 'Orders/ByCompany' where Company = $c vs the same equality query on the map
#           index Orders/CompanyTotals, same server, wrk -t2 -cCONNS alternating (target >= 0.8x).
#           The map index answers the orders (1-10 documents), the map-reduce one result row.
#
#   perf/load/map-reduce.sh [rounds] [parts] [reps] [duration] [connections]
#       defaults: 3 rounds, "build update query", 100 updates per group per round, 10s, 16
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
PARTS=${2:-build update query}
REPS=${3:-100}
DURATION=${4:-10s}
CONNS=${5:-16}
PORT=${PORT:-18097}
CORPUS=${CORPUS:-tests/corpus/orders.jsonl.gz}

WORK=$(mktemp -d)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

. perf/load/ab-lib.sh
corpus_ndjson "$CORPUS" "$WORK/orders.ndjson"
DOCS=$(wc -l < "$WORK/orders.ndjson")
# SERVER_BUILD: a folder holding an already built Jackdaw.Server.dll instead of the working tree.
SERVER=${SERVER_BUILD:-$WORK/head}
[ -n "${SERVER_BUILD:-}" ] || publish_server "$WORK/head"
J="http://127.0.0.1:$PORT"
MR=perf/load/map-reduce.py
VERSION="${SERVER_BUILD:-working tree $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes')}"

load_corpus() { # db
  curl -sf -X PUT "$J/admin/databases?name=$1" >/dev/null
  curl -sf -X POST -H 'Content-Type: application/x-ndjson' -H 'Transfer-Encoding: chunked' \
    --data-binary @"$WORK/orders.ndjson" "$J/databases/$1/bulk_insert" >/dev/null
  sleep 1 # the bulk insert's last commits settle
}

if [[ " $PARTS " == *" build "* ]]; then
  echo "# build, $DOCS orders, each index in a fresh process, $VERSION, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "| round | index | seconds | documents/s | / target 20,000 | server CPU µs/document | stats polls |"
  echo "|---|---|---|---|---|---|---|"
  declare -A LABEL=([mr]="Orders/ByCompany (map-reduce)" [map]="Orders/CompanyTotals (map, reference)")
  for r in $(seq 1 "$ROUNDS"); do
    for kind in mr map; do
      start_server "$SERVER"
      load_corpus bench
      read -r t rate us polls < <(python3 $MR build "$J" bench "$PID" "$kind" "$DOCS")
      if [ "$t" = "-" ]; then
        echo "| $r | ${LABEL[$kind]} | failed | | | | |"
      else
        python3 -c "print(f'| $r | ${LABEL[$kind]} | $t | $rate | {$rate / 20000:.2f} | $us | $polls |')"
      fi
      stop_server
    done
  done
fi

if [[ " $PARTS " == *" update "* ]]; then
  start_server "$SERVER"
  curl -sf -X PUT "$J/admin/databases?name=groups" >/dev/null
  python3 $MR groups "$J" groups "$CORPUS"
  python3 $MR build "$J" groups "$PID" mr "$((DOCS + 10))" >/dev/null
  python3 $MR update "$J" groups 20 "$DOCS" >/dev/null # warm-up
  echo "# update latency (write to index reduced), $REPS updates per group per round, alternating, $VERSION, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "| round | group of 100,000: median ms | p90 ms | group of 10: median ms | p90 ms | median ratio (target <= 2) | p90 ratio |"
  echo "|---|---|---|---|---|---|---|"
  for r in $(seq 1 "$ROUNDS"); do
    read -r bm b90 sm s90 rm r90 < <(python3 $MR update "$J" groups "$REPS" "$DOCS")
    echo "| $r | $bm | $b90 | $sm | $s90 | $rm | $r90 |"
  done
  stop_server
fi

if [[ " $PARTS " == *" query "* ]]; then
  command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
  python3 $MR paths "$CORPUS" "$WORK" bench
  start_server "$SERVER"
  load_corpus bench
  python3 $MR build "$J" bench "$PID" mr "$DOCS" >/dev/null
  python3 $MR build "$J" bench "$PID" map "$DOCS" >/dev/null
  run_wrk() { # duration paths-file -> "rps p50 p99"
    local out
    out=$(wrk -t2 -c"$CONNS" -d"$1" --latency -s perf/load/paths-random.lua "$J" -- "$2")
    if grep -q "Non-2xx" <<<"$out"; then echo "non-2xx answers:" >&2; grep "Non-2xx" <<<"$out" >&2; fi
    echo "$(awk '/Requests\/sec/ {print $2}' <<<"$out") $(awk '$1=="50%" {print $2}' <<<"$out") $(awk '$1=="99%" {print $2}' <<<"$out")"
  }
  run_wrk 3s "$WORK/mr.txt" >/dev/null
  run_wrk 3s "$WORK/map.txt" >/dev/null
  echo "# equality queries, wrk -t2 -c$CONNS -d$DURATION, alternating, $VERSION, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "| round | map-reduce q/s | p50 | p99 | map index q/s (reference) | p50 | p99 | map-reduce / map (target >= 0.8) |"
  echo "|---|---|---|---|---|---|---|---|"
  for r in $(seq 1 "$ROUNDS"); do
    read -r mr m50 m99 < <(run_wrk "$DURATION" "$WORK/mr.txt")
    read -r mp p50 p99 < <(run_wrk "$DURATION" "$WORK/map.txt")
    python3 -c "print(f'| $r | {$mr:.0f} | $m50 | $m99 | {$mp:.0f} | $p50 | $p99 | {$mr / $mp:.2f} |')"
  done
  stop_server
fi
