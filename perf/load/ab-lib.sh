# Shared by the A B A B load scripts (bulk.sh, put-ab.sh); source it after `cd` to the repository root.
# Needs WORK (a temp folder) and PORT set; keeps the running server's pid in PID for the caller's cleanup.

# publish_server <out> [source-root]: the server as it is shipped, into <out>: `dotnet publish` for this
# machine, ReadyToRun where the revision's csproj asks for it (as `dotnet run -c Release` and the
# Dockerfile do; a revision before issue 33 publishes plain IL, as it shipped).
publish_server() {
  dotnet publish -c Release "${2:-.}/server/Jackdaw.Server.csproj" -r "$(machine_rid)" --self-contained false -v q -nologo -o "$1" >/dev/null
}

# machine_rid: this machine's runtime identifier, for a publish (linux-x64 or linux-arm64).
machine_rid() {
  case "$(uname -m)" in aarch64|arm64) echo linux-arm64 ;; *) echo linux-x64 ;; esac
}

# build_pair <baseline-rev>: the baseline (from `git archive`) into $WORK/base, the working tree into $WORK/head.
# BASE_BUILD / HEAD_BUILD: folders already holding a published server, used instead (no build).
build_pair() {
  if [ -n "${BASE_BUILD:-}" ]; then
    ln -s "$BASE_BUILD" "$WORK/base"
  else
    mkdir -p "$WORK/base-src"
    git archive "$1" | tar -x -C "$WORK/base-src"
    publish_server "$WORK/base" "$WORK/base-src"
  fi
  if [ -n "${HEAD_BUILD:-}" ]; then ln -s "$HEAD_BUILD" "$WORK/head"; else publish_server "$WORK/head"; fi
}

# cpu <pid>: user + system clock ticks the process has used.
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# start_server <build-dir> [env...]: a server on a fresh $WORK/data, waited for; its pid in PID.
# SERVER_ENV (e.g. "DOTNET_TieredPGO=0") is put in every server's environment, before [env...].
start_server() {
  local dir=$1; shift
  rm -rf "$WORK/data"
  env ${SERVER_ENV:-} "$@" dotnet "$dir/Jackdaw.Server.dll" --urls "http://127.0.0.1:$PORT" --data-dir "$WORK/data" --Logging:LogLevel:Default=Warning >"$WORK/log" 2>&1 &
  PID=$!
  for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$PORT/build/version" >/dev/null && break; sleep 0.1; done
}

# stop_server: stops the server started last.
stop_server() { kill "$PID"; wait "$PID" 2>/dev/null || true; PID=; }

# corpus_ndjson <corpus.jsonl.gz> <out>: the corpus as bulk_insert's NDJSON lines ({"Id","Document"}).
corpus_ndjson() {
  python3 - "$1" "$2" <<'PY'
import gzip, json, sys
with gzip.open(sys.argv[1], "rt", encoding="utf-8") as f, open(sys.argv[2], "w", encoding="utf-8") as out:
    for line in f:
        doc = json.loads(line)
        out.write(json.dumps({"Id": doc["@metadata"]["@id"], "Document": doc}, separators=(",", ":"), ensure_ascii=False) + "\n")
PY
}
