#!/usr/bin/env bash
# Issue 20's latency targets, end to end on loopback, with perf/ChangesLatency (one .NET process that
# sends the paced PUTs and runs the receivers, so answers and events share one clock):
#   1. idle: one subscription worker (`from Orders`, each batch acknowledged) and one changes-feed
#      watcher (watch-collection Orders) of Jackdaw while orders are PUT at IDLE_RATE (1,000/s,
#      open loop) for WARMUP + IDLE_SECONDS; latency from each PUT's answer to the event's arrival,
#      p50/p99/p99.9/max. Target: p99 <= 10 ms for each.
#   2. fanout: WATCHERS (64) watchers of Orders while FANOUT_RATE (10,000) PUT/s are offered for
#      WARMUP + FANOUT_SECONDS: every watcher must get every event (missing counted), p99 <= 50 ms.
#      Side by side, the peer: pouchdb-server 4.2.0 (temp folder) with WATCHERS
#      GET /db/_changes?feed=continuous&since=now under the same offered load.
# The load is open loop (perf/ChangesLatency/Program.cs says how it is paced and what "achieved" is).
# A fresh server (and data folder) per measurement. Prints markdown tables with the rate achieved,
# the servers' and the generator's CPU (cores busy during the measured part) and `uptime`'s load.
#   perf/load/changes-latency.sh [rounds]     (SERVER_BUILD=<folder> runs a prebuilt server)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-2}
PORT=${PORT:-18110}
P_PORT=${P_PORT:-18111}
WARMUP=${WARMUP:-5}
IDLE_RATE=${IDLE_RATE:-1000}
IDLE_SECONDS=${IDLE_SECONDS:-30}
FANOUT_RATE=${FANOUT_RATE:-10000}
FANOUT_SECONDS=${FANOUT_SECONDS:-20}
WATCHERS=${WATCHERS:-64}
IDLE_CONNECTIONS=${IDLE_CONNECTIONS:-16}     # PUT connections (HTTP/1.1); at most 8x as many PUTs in flight
FANOUT_CONNECTIONS=${FANOUT_CONNECTIONS:-64}
PEERS=${PEERS:-$HOME/.cache/jackdaw-peers}
WORK=$(mktemp -d)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

if [ ! -x "$PEERS/node_modules/.bin/pouchdb-server" ]; then
  mkdir -p "$PEERS" && npm install --prefix "$PEERS" --silent pouchdb-server@4.2.0 >/dev/null
fi
if [ -z "${SERVER_BUILD:-}" ]; then
  . perf/load/ab-lib.sh
  publish_server "$WORK/server"
  SERVER_BUILD="$WORK/server"
fi
dotnet build perf/ChangesLatency -c Release -o "$WORK/cl" -v q -nologo >/dev/null
RESULTS="$WORK/results.jsonl"

wait_http() { for _ in $(seq 1 150); do curl -sf "$1" >/dev/null && return 0; sleep 0.1; done; echo "no answer from $1" >&2; return 1; }
start_jackdaw() {
  rm -rf "$WORK/data"
  dotnet "$SERVER_BUILD/Jackdaw.Server.dll" --urls "http://127.0.0.1:$PORT" --data-dir "$WORK/data" >"$WORK/server.log" 2>&1 &
  PID=$!
  wait_http "http://127.0.0.1:$PORT/build/version"
  curl -sf -X PUT "http://127.0.0.1:$PORT/admin/databases?name=lat" >/dev/null
}
start_pouch() {
  rm -rf "$WORK/pouch" && mkdir -p "$WORK/pouch"
  (cd "$WORK/pouch" && exec "$PEERS/node_modules/.bin/pouchdb-server" --host 127.0.0.1 --port "$P_PORT" --dir "$WORK/pouch" -n >"$WORK/pouch.log" 2>&1) &
  PID=$!
  wait_http "http://127.0.0.1:$P_PORT/"
}
stop() { kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; PID=; }
# Runs one measurement and appends its JSON with the round, the load average before it, and how
# busy the whole machine was during it (/proc/stat: non-idle cores, and steal, of the 2).
run() {
  local round=$1; shift
  local load; load=$(awk '{print $1"/"$2"/"$3}' /proc/loadavg)
  local before; before=$(head -1 /proc/stat)
  local out
  out=$(dotnet "$WORK/cl/ChangesLatency.dll" "$@" --server-pid "$PID" --warmup "$WARMUP")
  python3 - "$out" "$round" "$load" "$before" "$(head -1 /proc/stat)" "$(nproc)" >>"$RESULTS" <<'PY'
import json, sys
r = json.loads(sys.argv[1]); r["round"] = int(sys.argv[2]); r["loadavg"] = sys.argv[3]
a = [int(x) for x in sys.argv[4].split()[1:9]]; b = [int(x) for x in sys.argv[5].split()[1:9]]
d = [y - x for x, y in zip(a, b)]; total = sum(d); cores = int(sys.argv[6])
r["hostBusyCores"] = round((total - d[3] - d[4]) / total * cores, 2); r["hostStealCores"] = round(d[7] / total * cores, 2)
print(json.dumps(r))
PY
}
idle() { start_jackdaw; run "$1" idle --url "http://127.0.0.1:$PORT" --db lat --rate "$IDLE_RATE" --seconds "$IDLE_SECONDS" --connections "$IDLE_CONNECTIONS"; stop; }
fan_jackdaw() { start_jackdaw; run "$1" fanout --kind jackdaw --url "http://127.0.0.1:$PORT" --db lat --watchers "$WATCHERS" --rate "$FANOUT_RATE" --seconds "$FANOUT_SECONDS" --connections "$FANOUT_CONNECTIONS"; stop; }
fan_pouch() { start_pouch; run "$1" fanout --kind pouch --url "http://127.0.0.1:$P_PORT" --db lat --watchers "$WATCHERS" --rate "$FANOUT_RATE" --seconds "$FANOUT_SECONDS" --connections "$FANOUT_CONNECTIONS"; stop; }

echo "# Jackdaw ${SERVER_BUILD}, pouchdb-server 4.2.0; $(nproc) cores; started $(date '+%F %T'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$ROUNDS"); do
  idle "$round"
  # A B / B A between the two servers of the fan-out.
  if [ $((round % 2)) -eq 1 ]; then fan_jackdaw "$round"; fan_pouch "$round"; else fan_pouch "$round"; fan_jackdaw "$round"; fi
done
echo "# finished $(date '+%F %T'), load average $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$RESULTS" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def f(v, d=2):
    return "-" if v is None else f"{v:.{d}f}"
print("\n## 1. Idle subscription worker and changes watcher, Jackdaw (target: p99 <= 10 ms each)\n")
print("| round | load avg 1/5/15 | PUT/s offered | achieved | PUT p50 / p99 ms | receiver | events | missing | p50 ms | p99 ms | p99.9 ms | max ms | min ms | server cores | generator cores | host busy (steal) cores | batches; ack→Confirm p50/p99/max ms | p99 <= 10 ms |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    if r["mode"] != "idle":
        continue
    for g in r["groups"]:
        ok = "yes" if g["p99Ms"] is not None and g["p99Ms"] <= 10 and g["missing"] == 0 else "no"
        ack = f"{g['batches']}; {f(g['ackP50Ms'])}/{f(g['ackP99Ms'])}/{f(g['ackMaxMs'])}" if g["batches"] else "-"
        print(f"| {r['round']} | {r['loadavg']} | {r['rate']} | {r['achievedRate']:.0f} | {f(r['putP50Ms'])} / {f(r['putP99Ms'])} | {g['name']} | {g['received']}/{g['expected']} | {g['missing']} | {f(g['p50Ms'])} | {f(g['p99Ms'])} | {f(g['p999Ms'])} | {f(g['maxMs'])} | {f(g['minMs'])} | {r['serverCores']:.2f} | {r['clientCores']:.2f} | {r['hostBusyCores']:.2f} ({r['hostStealCores']:.2f}) | {ack} | {ok} |")
print("\n## 2. Fan-out: watchers of one collection under the offered PUT rate (target: none missing, p99 <= 50 ms)\n")
print("| round | load avg 1/5/15 | server | watchers | PUT/s offered | achieved | pacer stalled ms / slots skipped | PUT p50 / p99 ms | events received / expected | missing (watchers short) | p50 ms | p99 ms | p99.9 ms | max ms | min ms | server cores | server CPU µs/PUT | generator cores | host busy (steal) cores | events per frame (WebSocket) / per read (pouch) | met |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    if r["mode"] != "fanout":
        continue
    g = r["groups"][0]
    name = "Jackdaw" if r["kind"] == "jackdaw" else "pouchdb-server"
    ok = "yes" if g["missing"] == 0 and g["p99Ms"] is not None and g["p99Ms"] <= 50 and r["achievedRate"] >= 0.98 * r["rate"] else "no"
    print(f"| {r['round']} | {r['loadavg']} | {name} | {g['receivers']} | {r['rate']} | {r['achievedRate']:.0f} | {r['pacerStallMs']} / {r['skippedSlots']} | {f(r['putP50Ms'])} / {f(r['putP99Ms'])} | {g['received']}/{g['expected']} | {g['missing']} ({g['receiversMissingSome']}) | {f(g['p50Ms'])} | {f(g['p99Ms'])} | {f(g['p999Ms'])} | {f(g['maxMs'])} | {f(g['minMs'])} | {r['serverCores']:.2f} | {r['serverCpuUsPerPut']:.0f} | {r['clientCores']:.2f} | {r['hostBusyCores']:.2f} ({r['hostStealCores']:.2f}) | {f(g.get('eventsPerMessage'), 1)} | {ok} |")
problems = [(r["kind"], r["mode"], r["round"], g["name"], g["closed"], g["errors"], g["duplicates"], g["unknown"], r["putErrors"], r["unanswered"], r["firstError"])
            for r in rows for g in r["groups"] if g["closed"] or g["errors"] or g["duplicates"] or g["unknown"] or r["putErrors"] or r["unanswered"]]
if problems:
    print("\nProblems (kind, mode, round, group, closed, errors, duplicates, unknown ids, PUT errors, unanswered, first error):")
    for p in problems:
        print("-", p)
print("\n<details><summary>raw</summary>\n")
for r in rows:
    print("    " + json.dumps(r))
print("\n</details>")
PY
