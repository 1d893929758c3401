#!/usr/bin/env bash
# Issue 34's replication targets on a three-node cluster on loopback (each node its own process and
# temp data folder, formed as README's "A cluster" does: A lone, B and C passive, then
# PUT /admin/cluster/node on A), measured by perf/ChangesLatency (ClusterRuns.cs: one process sends
# the writes and watches the other nodes' changes feeds, so answers and arrivals share one clock):
#   1. bulk: the 100,000 orders (tests/corpus/orders.jsonl.gz as bulk.sh posts them: one chunked
#      NDJSON bulk_insert) into A of a database with replication factor 3, timed until the last
#      document is on B and on C (watch-doc on each; counts checked after), against the same bulk
#      insert into a lone server (a fourth process, idle while the cluster runs and the other way
#      round), A B A B, each load into a fresh database, each side warmed by one whole load first.
#      Figure: lone seconds / cluster seconds (target >= 0.7), and the last document's lag after A's
#      answer.
#   2. lag: orders PUT to A at LAG_RATE/s (open loop) for LAG_WARMUP + LAG_SECONDS, watchers of
#      Orders on B and C: answer on A -> arrival on B, on C, on both; p50/p99/p99.9/max
#      (target p99 <= 50 ms).
#   3. assurance: bulk_docs of one order, plain against waitForReplicasTimeout=00:00:15&
#      numberOfReplicasToWaitFor=1&throwOnTimeoutInWaitForReplicas=true, alternating phases of
#      ASSURE_SECONDS (ASSURE_ROUNDS of each), closed loop at 1 and 16 connections.
# Prints markdown tables with `uptime`'s load before each figure.
#   perf/load/cluster.sh [rounds]       rounds of the bulk comparison (default 2) and of the lag run (default 2)
# SERVER_BUILD=<folder with Jackdaw.Server.dll> runs a prebuilt server (default: publish the working
# tree as shipped); ORDERS=N takes the corpus's first N orders (a quick look); PARTS="bulk lag assurance".
# SERVER_ENV="DOTNET_X=1 ..." goes into every server's environment. PROFILE=<path> records the three
# nodes with `perf record -g` during the first round's cluster bulk insert into <path> (and starts the
# servers with DOTNET_PerfMapEnabled=1 and DOTNET_EnableWriteXorExecute=0 so that perf can name the
# JIT's code: /tmp/perf-<pid>.map).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-2}
PORT=${PORT:-18140}             # A, B, C on PORT..PORT+2; the lone server on PORT+3
CORPUS=${CORPUS:-tests/corpus/orders.jsonl.gz}
ORDERS=${ORDERS:-}
PARTS=${PARTS:-bulk lag assurance}
LAG_RATE=${LAG_RATE:-1000}
LAG_WARMUP=${LAG_WARMUP:-5}
LAG_SECONDS=${LAG_SECONDS:-25}
LAG_CONNECTIONS=${LAG_CONNECTIONS:-16}
ASSURE_SECONDS=${ASSURE_SECONDS:-5}
ASSURE_ROUNDS=${ASSURE_ROUNDS:-3}
ASSURE_CONNECTIONS=${ASSURE_CONNECTIONS:-1 16}
WORK=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

. perf/load/ab-lib.sh
if [ -z "${SERVER_BUILD:-}" ]; then
  publish_server "$WORK/server"
  SERVER_BUILD="$WORK/server"
fi
dotnet build perf/ChangesLatency -c Release -o "$WORK/cl" -v q -nologo >/dev/null
CL="$WORK/cl/ChangesLatency.dll"

corpus_ndjson "$CORPUS" "$WORK/orders.ndjson"
if [ -n "$ORDERS" ]; then head -n "$ORDERS" "$WORK/orders.ndjson" >"$WORK/part" && mv "$WORK/part" "$WORK/orders.ndjson"; fi
DOCS=$(wc -l <"$WORK/orders.ndjson")
LAST_ID=$(tail -n 1 "$WORK/orders.ndjson" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Id"])')

A=http://127.0.0.1:$PORT B=http://127.0.0.1:$((PORT + 1)) C=http://127.0.0.1:$((PORT + 2)) L=http://127.0.0.1:$((PORT + 3))
loadavg() { cut -d' ' -f1-3 /proc/loadavg | tr ' ' '/'; }
wait_http() { for _ in $(seq 1 300); do curl -sf "$1" >/dev/null && return 0; sleep 0.1; done; echo "no answer from $1" >&2; return 1; }
# poll <seconds> <command...>: until the command succeeds.
poll() { local until=$((SECONDS + $1)); shift; until "$@"; do [ $SECONDS -lt $until ] || { echo "timed out: $*" >&2; return 1; }; sleep 0.2; done; }
# start <name> <url> [args...]: a server on its own data folder; its pid in the variable PID_<name>.
start() {
  local name=$1 url=$2; shift 2
  env ${SERVER_ENV:-} ${PROFILE:+DOTNET_PerfMapEnabled=1 DOTNET_EnableWriteXorExecute=0} dotnet "$SERVER_BUILD/Jackdaw.Server.dll" --ServerUrl "$url" --data-dir "$WORK/data-$name" --Logging:LogLevel:Default=Warning "$@" >"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  printf -v "PID_$name" %s $!
  wait_http "$url/build/version"
}
members() { curl -sf "$1/cluster/topology" | python3 -c 'import json,sys; t=json.load(sys.stdin); sys.exit(0 if len(t["Topology"]["Members"]) == 3 and t.get("Leader") else 1)'; }
# ready <db>: every node holds the database and pushes it to both others, connected.
ready() {
  local u
  for u in "$A" "$B" "$C"; do
    curl -sf "$u/databases/$1/replication/debug" | python3 -c 'import json,sys; o=json.load(sys.stdin)["Outgoing"]; sys.exit(0 if len(o) == 2 and all(x["Connected"] for x in o) else 1)' || return 1
  done
}
create_replicated() { # db
  curl -sf -X PUT "$A/admin/databases?name=$1&replicationFactor=3" >/dev/null
  poll 60 ready "$1"
}
# incoming <db>: per node, what it received by replication (batches/applied/already merged).
incoming() {
  local u
  for u in "$A" "$B" "$C"; do
    curl -sf "$u/databases/$1/replication/debug" | python3 -c 'import json,sys; i=json.load(sys.stdin)["Incoming"]; print("/".join(str(i[k]) for k in ("Batches", "Applied", "AlreadyMerged")), end=" ")'
  done
}
count() { curl -sf "$1/databases/$2/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["CountOfDocuments"])'; }

start a "$A"
start b "$B" --Cluster:Passive=true
start c "$C" --Cluster:Passive=true
curl -sf -X PUT "$A/admin/cluster/node?url=$B&tag=B" >/dev/null
curl -sf -X PUT "$A/admin/cluster/node?url=$C&tag=C" >/dev/null
for u in "$A" "$B" "$C"; do poll 60 members "$u"; done
start l "$L"
NODE_PIDS="$PID_a,$PID_b,$PID_c"

echo "# Jackdaw $SERVER_BUILD ($(git rev-parse --short HEAD)$(git diff --quiet HEAD -- server || echo '+changes')), three nodes + a lone server on loopback; $(nproc) cores; $DOCS orders; started $(date -u '+%F %T') UTC, load $(loadavg)"
RESULTS="$WORK/results.jsonl"

# --- 1. bulk insert: lone server against the cluster, A B A B ---
bulk_lone() { # db round
  curl -sf -X PUT "$L/admin/databases?name=$1" >/dev/null
  local load; load=$(loadavg)
  local out; out=$(dotnet "$CL" bulk --url "$L" --db "$1" --file "$WORK/orders.ndjson" --last-id "$LAST_ID" --server-pids "$PID_l")
  python3 -c "import json,sys; r=json.loads(sys.argv[1]); r.update(side='lone', round=$2, load='$load', counts=[$(count "$L" "$1")]); print(json.dumps(r))" "$out"
}
bulk_cluster() { # db round
  create_replicated "$1"
  local load; load=$(loadavg) recorder=
  if [ -n "${PROFILE:-}" ] && [ "$2" = 1 ]; then
    perf record -F 999 -g -p "$NODE_PIDS" -o "$PROFILE" >/dev/null 2>&1 &
    recorder=$!
    sleep 1
  fi
  local out; out=$(dotnet "$CL" bulk --url "$A" --watch "B=$B,C=$C" --db "$1" --file "$WORK/orders.ndjson" --last-id "$LAST_ID" --server-pids "$NODE_PIDS")
  if [ -n "$recorder" ]; then kill -INT "$recorder"; wait "$recorder" 2>/dev/null || true; fi
  python3 -c "import json,sys; r=json.loads(sys.argv[1]); r.update(side='cluster', round=$2, load='$load', counts=[$(count "$A" "$1"),$(count "$B" "$1"),$(count "$C" "$1")], incoming='$(incoming "$1")'); print(json.dumps(r))" "$out"
}
if [[ " $PARTS " == *" bulk "* ]]; then
  bulk_lone warm 0 >/dev/null
  bulk_cluster warm 0 >/dev/null
  for r in $(seq 1 "$ROUNDS"); do
    if [ $((r % 2)) -eq 1 ]; then bulk_lone "bulk$r" "$r" >>"$RESULTS"; bulk_cluster "bulk$r" "$r" >>"$RESULTS"
    else bulk_cluster "bulk$r" "$r" >>"$RESULTS"; bulk_lone "bulk$r" "$r" >>"$RESULTS"; fi
  done
fi
kill "$PID_l" 2>/dev/null || true; wait "$PID_l" 2>/dev/null || true

# --- 2. replication lag at LAG_RATE PUT/s ---
if [[ " $PARTS " == *" lag "* ]]; then
  for r in $(seq 1 "$ROUNDS"); do
    create_replicated "lag$r"
    load=$(loadavg)
    before=$(head -1 /proc/stat)
    out=$(dotnet "$CL" replication --url "$A" --watch "B=$B,C=$C" --db "lag$r" --rate "$LAG_RATE" --warmup "$LAG_WARMUP" --seconds "$LAG_SECONDS" \
        --connections "$LAG_CONNECTIONS" --server-pids "$NODE_PIDS")
    # How busy the whole machine was (/proc/stat, non-idle cores of all), to set against our own processes' cores.
    python3 - "$out" "$r" "$load" "$before" "$(head -1 /proc/stat)" "$(nproc)" >>"$RESULTS" <<'PY'
import json, sys
r = json.loads(sys.argv[1]); r["round"] = int(sys.argv[2]); r["load"] = sys.argv[3]
a = [int(x) for x in sys.argv[4].split()[1:9]]; b = [int(x) for x in sys.argv[5].split()[1:9]]
d = [y - x for x, y in zip(a, b)]; total = sum(d)
r["hostBusyCores"] = round((total - d[3] - d[4]) / total * int(sys.argv[6]), 2)
print(json.dumps(r))
PY
  done
fi

# --- 3. write assurance against a plain write ---
if [[ " $PARTS " == *" assurance "* ]]; then
  for c in $ASSURE_CONNECTIONS; do
    create_replicated "assure$c"
    load=$(loadavg)
    dotnet "$CL" assurance --url "$A" --db "assure$c" --connections "$c" --seconds "$ASSURE_SECONDS" --rounds "$ASSURE_ROUNDS" \
      | python3 -c "import json,sys; r=json.load(sys.stdin); r.update(load='$load'); print(json.dumps(r))" >>"$RESULTS"
  done
fi
echo "# finished $(date -u '+%F %T') UTC, load $(loadavg)"

python3 - "$RESULTS" "$DOCS" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])] if sys.argv[1] else []
docs = int(sys.argv[2])
def f(v, d=2):
    return "-" if v is None else f"{v:.{d}f}"
bulk = [r for r in rows if r["mode"] == "bulk"]
if bulk:
    print(f"\n## 1. Bulk insert of {docs} orders: a lone server against A of three, until B and C hold the last (target: lone / cluster >= 0.7)\n")
    print("| round | side | load avg 1/5/15 | answer s | on B s | on C s | all s | last document's lag after the answer ms | counts | B, C counts at the answer | server CPU s (to the answer / all) | documents/s | lone / cluster | received by A, B, C: batches/applied/already merged |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    lone = {r["round"]: r["allSeconds"] for r in bulk if r["side"] == "lone"}
    for r in bulk:
        arr = r["arrivalSeconds"] + [None] * (2 - len(r["arrivalSeconds"]))
        ratio = f(lone[r["round"]] / r["allSeconds"]) if r["side"] == "cluster" and r["allSeconds"] and r["round"] in lone else "-"
        cpu = "/".join(f(x, 1) for x in r["serverCpuToAnswer"]) + " ; " + "/".join(f(x, 1) for x in r["serverCpu"])
        print(f"| {r['round']} | {r['side']} | {r['load']} | {f(r['insertSeconds'])} | {f(arr[0])} | {f(arr[1])} | {f(r['allSeconds'])} | {f(r['lastLagMs'], 0) if r['side'] == 'cluster' else '-'} | {'/'.join(map(str, r['counts']))} | {'/'.join(map(str, r['countsAtAnswer'])) or '-'} | {cpu} | {docs / r['allSeconds']:.0f} | {ratio} | {r.get('incoming', '-').strip()} |")
lag = [r for r in rows if r["mode"] == "replication"]
if lag:
    print("\n## 2. Replication lag: PUT answer on A → the document's arrival on B, C, both (target: p99 <= 50 ms)\n")
    print("| round | load avg 1/5/15 | PUT/s offered | achieved | PUT p50 / p99 ms | node | received / expected | missing | p50 ms | p99 ms | p99.9 ms | max ms | drain s | server cores A/B/C | client cores | host busy cores | p99 <= 50 ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in lag:
        for g in r["groups"]:
            ok = "yes" if g["p99Ms"] is not None and g["p99Ms"] <= 50 and g["missing"] == 0 else "no"
            print(f"| {r['round']} | {r['load']} | {r['rate']} | {r['achievedRate']:.0f} | {f(r['putP50Ms'])} / {f(r['putP99Ms'])} | {g['name']} | {g['received']}/{g['expected']} | {g['missing']} | {f(g['p50Ms'])} | {f(g['p99Ms'])} | {f(g['p999Ms'])} | {f(g['maxMs'])} | {f(r['drainSeconds'])} | {'/'.join(f(x) for x in r['serverCores'])} | {f(r['clientCores'])} | {f(r.get('hostBusyCores'))} | {ok} |")
assure = [r for r in rows if r["mode"] == "assurance"]
if assure:
    print("\n## 3. bulk_docs of one order: plain against waitForReplicas=1, alternating phases (reported beside each other)\n")
    print("| connections | load avg 1/5/15 | write | writes | writes/s | errors | p50 ms | p99 ms | p99.9 ms | max ms |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in assure:
        for v in r["variants"]:
            print(f"| {r['connections']} | {r['load']} | {v['name']} | {v['writes']} | {v['writesPerSecond']:.0f} | {v['errors']}{' (' + v['firstError'] + ')' if v['firstError'] else ''} | {f(v['p50Ms'])} | {f(v['p99Ms'])} | {f(v['p999Ms'])} | {f(v['maxMs'])} |")
problems = [r for r in rows if r.get("putErrors") or r.get("unanswered") or (r["mode"] == "bulk" and (r["allSeconds"] is None or any(c != docs for c in r["counts"])))]
if problems:
    print("\nProblems:")
    for p in problems:
        print("-", json.dumps(p)[:600])
print("\n<details><summary>raw</summary>\n")
for r in rows:
    print("    " + json.dumps(r))
print("\n</details>")
PY
