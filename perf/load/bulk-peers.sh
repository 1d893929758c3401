#!/usr/bin/env bash
# Bulk insert of the 100,000 orders (tests/corpus/orders.jsonl.gz) through each side's .NET client
# (perf/BulkPeers), issue 33: Jackdaw.Client's BulkInsert into a fresh database of a Jackdaw server
# in its own process (durable, as shipped) vs Marten 9.58's store.BulkInsertAsync(orders) (default
# mode, its table made again before each load) on PostgreSQL 15, A B A B
#                                                                           target: Jackdaw >= 2x
# documents/s of each, the ratio, and the CPU per document of the client process and of the server
# (the Jackdaw process; PostgreSQL's postmaster and its backends). PostgreSQL runs on a temporary
# cluster (initdb + pg_ctl in a temp folder, as the postgres user, fsync and synchronous_commit on)
# and is stopped after; Marten comes from NuGet (restore).
#
#   perf/load/bulk-peers.sh [rounds] [baseline-rev]        defaults: 3 rounds, no baseline
#
# With a baseline revision its server and its client (the tool built from `git archive` of it, with
# this tree's perf/BulkPeers copied in) run too, interleaved with the working tree's round by round:
# each round runs the tool once per build (its own warm-up load of each side, then one timed load
# of Jackdaw and one of Marten), so every Jackdaw figure has a Marten figure from the same minute.
# BASE_ENV / HEAD_ENV: environment for the baseline's / working tree's server (e.g.
# DOTNET_PerfMapEnabled=1 to profile it); CLIENT_ENV: for the tool.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
BASE=${2:-}
PORT=${PORT:-18097}
PG_PORT=${PG_PORT:-18098}
CORPUS=${CORPUS:-tests/corpus/orders.jsonl.gz}
PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/15/bin 2>/dev/null || true)}
read -r -a BASE_ENV <<<"${BASE_ENV:-}"
read -r -a HEAD_ENV <<<"${HEAD_ENV:-}"
read -r -a CLIENT_ENV <<<"${CLIENT_ENV:-}"

[ -x "$PG_BIN/initdb" ] || { echo "PostgreSQL 15 is missing (no /usr/lib/postgresql/15/bin/initdb): apt-get install postgresql-15, or set PG_BIN" >&2; exit 1; }
id postgres >/dev/null 2>&1 || { echo "no 'postgres' user to run PostgreSQL as (initdb refuses root)" >&2; exit 1; }

WORK=$(mktemp -d)
PG=$(mktemp -d)
chown postgres "$PG"
PID=
as_postgres() { runuser -u postgres -- "$@"; }
cleanup() {
  [ -n "$PID" ] && kill "$PID" 2>/dev/null
  [ -f "$PG/data/postmaster.pid" ] && as_postgres "$PG_BIN/pg_ctl" -D "$PG/data" -m fast -w stop >/dev/null 2>&1
  wait 2>/dev/null || true
  rm -rf "$WORK" "$PG"
}
trap cleanup EXIT

. perf/load/ab-lib.sh
# SERVER_BUILD / BASE_BUILD: folders already holding a published server (as ab-lib.sh's build_pair).
if [ -n "${SERVER_BUILD:-}" ]; then ln -s "$SERVER_BUILD" "$WORK/head"; else publish_server "$WORK/head"; fi
dotnet build -c Release perf/BulkPeers/BulkPeers.csproj -v q -nologo -o "$WORK/head-peers" >/dev/null
if [ -n "$BASE" ]; then
  mkdir -p "$WORK/base-src"
  git archive "$BASE" | tar -x -C "$WORK/base-src"
  [ -d "$WORK/base-src/perf/BulkPeers" ] || cp -r perf/BulkPeers "$WORK/base-src/perf/BulkPeers"
  rm -rf "$WORK/base-src/perf/BulkPeers/bin" "$WORK/base-src/perf/BulkPeers/obj"
  if [ -n "${BASE_BUILD:-}" ]; then ln -s "$BASE_BUILD" "$WORK/base"; else publish_server "$WORK/base" "$WORK/base-src"; fi
  dotnet build -c Release "$WORK/base-src/perf/BulkPeers/BulkPeers.csproj" -v q -nologo -o "$WORK/base-peers" >/dev/null
fi

as_postgres "$PG_BIN/initdb" -D "$PG/data" -A trust -U postgres -E UTF8 >/dev/null
as_postgres "$PG_BIN/pg_ctl" -D "$PG/data" -l "$PG/log" -w \
  -o "-p $PG_PORT -k $PG -c listen_addresses=127.0.0.1 -c fsync=on -c synchronous_commit=on" start >/dev/null
CS="Host=127.0.0.1;Port=$PG_PORT;Username=postgres;Database=postgres"
PG_PID=$(head -1 "$PG/data/postmaster.pid")

echo "# Jackdaw working tree $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes')${BASE:+, baseline $(git rev-parse --short "$BASE")}; Marten $(sed -n 's/.*"Marten" Version="\([^"]*\)".*/\1/p' perf/BulkPeers/Directory.Packages.props) on PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}'); load $(cut -d' ' -f1-3 /proc/loadavg)"
run() { # label server-dir tool-dir rounds env...
  local label=$1 server=$2 tool=$3 rounds=$4; shift 4
  start_server "$server" "$@"
  env "${CLIENT_ENV[@]}" JACKDAW_CORPUS="$(cd "$(dirname "$CORPUS")" && pwd)" dotnet "$tool/BulkPeers.dll" run \
    --jackdaw "http://127.0.0.1:$PORT" --postgres "$CS" --rounds "$rounds" --label "$label" \
    --jackdaw-pid "$PID" --postgres-pid "$PG_PID"
  stop_server
}
if [ -z "$BASE" ]; then
  run "Jackdaw" "$WORK/head" "$WORK/head-peers" "$ROUNDS" "${HEAD_ENV[@]}"
else
  for r in $(seq 1 "$ROUNDS"); do
    echo "## round $r"
    run "Jackdaw $(git rev-parse --short "$BASE")" "$WORK/base" "$WORK/base-peers" 1 "${BASE_ENV[@]}"
    run "Jackdaw working tree" "$WORK/head" "$WORK/head-peers" 1 "${HEAD_ENV[@]}"
  done
fi
