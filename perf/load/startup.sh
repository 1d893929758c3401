#!/usr/bin/env bash
# Startup to first answered request, Jackdaw against the bare Kestrel app (perf/load/BareKestrel),
# alternating: each run starts the server on a fresh data folder and polls /build/version every
# 5 ms until it answers, timing from just before the process is started. Both are published as
# Jackdaw is shipped (publish_server: ReadyToRun, the csproj's runtime settings; the bare app with
# the same). Prints each run, then the medians and their ratio (target: Jackdaw <= 1.15x).
#   perf/load/startup.sh [runs]                default 10 pairs
# SERVER_BUILD=<folder>: an already built Jackdaw instead of the working tree; SERVER_ENV as in ab-lib.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${1:-10}
PORT=${PORT:-18085}
WORK=$(mktemp -d)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

. perf/load/ab-lib.sh
SERVER=${SERVER_BUILD:-$WORK/jackdaw}
[ -n "${SERVER_BUILD:-}" ] || publish_server "$WORK/jackdaw"
dotnet publish -c Release perf/load/BareKestrel/BareKestrel.csproj -r "$(machine_rid)" --self-contained false \
  -p:PublishReadyToRun=true -v q -nologo -o "$WORK/bare" >/dev/null

once() { # dll [args...] -> milliseconds to the first answer
  local dll=$1; shift
  local start end
  rm -rf "$WORK/data"
  start=$(date +%s%N)
  env ${SERVER_ENV:-} dotnet "$dll" --urls "http://127.0.0.1:$PORT" "$@" >"$WORK/log" 2>&1 &
  PID=$!
  until curl -sf "http://127.0.0.1:$PORT/build/version" >/dev/null; do sleep 0.005; done
  end=$(date +%s%N)
  kill "$PID"; wait "$PID" 2>/dev/null || true; PID=
  echo $(( (end - start) / 1000000 ))
}

echo "# startup to first answer, ${SERVER_BUILD:-working tree $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes')} against bare Kestrel, load $(cut -d' ' -f1-3 /proc/loadavg)"
J=(); B=()
for i in $(seq 1 "$RUNS"); do
  j=$(once "$SERVER/Jackdaw.Server.dll" --data-dir "$WORK/data")
  b=$(once "$WORK/bare/BareKestrel.dll")
  J+=("$j"); B+=("$b")
  echo "run $i: Jackdaw $j ms, bare Kestrel $b ms"
done
python3 - "${J[*]}" "${B[*]}" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import statistics, sys
j = [int(x) for x in sys.argv[1].split()]; b = [int(x) for x in sys.argv[2].split()]
mj, mb = statistics.median(j), statistics.median(b)
print(f"median: Jackdaw {mj:.0f} ms ({min(j)}-{max(j)}), bare Kestrel {mb:.0f} ms ({min(b)}-{max(b)}), ratio {mj / mb:.2f} (load {sys.argv[3]})")
PY
