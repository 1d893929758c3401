#!/usr/bin/env bash
# Startup to first answered request: starts the Release server N times and polls /build/version
# until it answers, printing the wall time of each run and the server's own "since process start".
#   perf/load/startup.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${1:-10}
PORT=${PORT:-18085}
dotnet build -c Release server/Jackdaw.Server.csproj -v q -nologo >/dev/null
for i in $(seq 1 "$RUNS"); do
  DATA=$(mktemp -d)
  start=$(date +%s%N)
  dotnet server/bin/Release/net10.0/Jackdaw.Server.dll --urls "http://127.0.0.1:$PORT" --data-dir "$DATA" >"$DATA.log" 2>&1 &
  pid=$!
  until curl -sf "http://127.0.0.1:$PORT/build/version" >/dev/null; do sleep 0.005; done
  end=$(date +%s%N)
  kill "$pid"; wait "$pid" 2>/dev/null || true
  own=$(grep -o '[0-9]* ms since process start' "$DATA.log" | awk '{print $1}')
  echo "run $i: first response after $(( (end - start) / 1000000 )) ms (server reports ${own} ms from process start to listening)"
  rm -rf "$DATA" "$DATA.log"
done
