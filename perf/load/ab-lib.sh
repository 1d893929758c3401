# Shared by the A B A B load scripts (bulk.sh, put-ab.sh); source it after `cd` to the repository root.
# Needs WORK (a temp folder) and PORT set; keeps the running server's pid in PID for the caller's cleanup.

# build_pair <baseline-rev>: the baseline (from `git archive`) into $WORK/base, the working tree into $WORK/head.
build_pair() {
  mkdir -p "$WORK/base-src"
  git archive "$1" | tar -x -C "$WORK/base-src"
  dotnet build -c Release "$WORK/base-src/server/Jackdaw.Server.csproj" -v q -nologo -o "$WORK/base" >/dev/null
  dotnet build -c Release server/Jackdaw.Server.csproj -v q -nologo -o "$WORK/head" >/dev/null
}

# cpu <pid>: user + system clock ticks the process has used.
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# start_server <build-dir> [env...]: a server on a fresh $WORK/data, waited for; its pid in PID.
start_server() {
  local dir=$1; shift
  rm -rf "$WORK/data"
  env "$@" dotnet "$dir/Jackdaw.Server.dll" --urls "http://127.0.0.1:$PORT" --data-dir "$WORK/data" --Logging:LogLevel:Default=Warning >"$WORK/log" 2>&1 &
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
