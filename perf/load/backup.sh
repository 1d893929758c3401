#!/usr/bin/env bash
# Backups and restore of the 100,000-order corpus (issue 29), one Release server on a temp data
# folder, the corpus loaded through bulk_insert, one auto-index made by two queries (Company,
# Freight) and waited for. Every backup and restore goes through HTTP; its time is the server's
# own (the operation's DurationInMs: from the start of the run to the file renamed and its folder
# synced), the wall time seen by polling the operation is printed beside it.
#   1. snapshot vs cp: a full snapshot (POST /databases/bench/admin/backup, BackupType Snapshot)
#      against `cp -r` of the database's folder to the same disk followed by an fsync of every
#      copied file (`sync FILE...`; the snapshot fsyncs its one file), both read cold (`sync` and
#      `echo 3 > /proc/sys/vm/drop_caches` before each; skipped with a note if not allowed), order
#      alternated per round. MB/s of each = the folder's bytes (what cp copies) / time, so the
#      ratio is cp's time / the snapshot's.                                target >= 0.5x
#      Also the snapshot file's size against the folder's (LZ4 compression).
#   4. restore of that snapshot into a new database (POST /admin/restore/database), cold, beside
#      the snapshot's time (no target: reported).
#   3. minimal incremental vs incremental: two periodic tasks (journals kept; one with
#      MinimalIncremental) each take a snapshot; the same 1,000 orders are then PUT 100 times each
#      (perf/load/put-same.lua, wrk -t2 -c16, 100,000 durable PUTs); each task takes its
#      incremental. Both files' sizes (and their storage entries'), each chain's restore time and
#      the snapshot-only restore of the same chain.                       target minimal <= 0.2x
#   2. durable PUT of new ~1 KiB documents (perf/load/put-new.lua, wrk -t2 -c64) into the same
#      database for the same duration with snapshots running back to back (each file deleted once
#      written) and without, order alternated per round.                   target >= 0.8x
# Each figure is printed with the load average (the machine is shared).
#
#   perf/load/backup.sh [rounds] [duration]      defaults: 3 rounds, 10s PUT runs
# SERVER_BUILD: a folder holding an already built Jackdaw.Server.dll instead of the working tree.
# SKIP: sections to leave out, e.g. SKIP="2 3".
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
DURATION=${2:-10s}
PORT=${PORT:-18098}
CORPUS=${CORPUS:-tests/corpus/orders.jsonl.gz}
SKIP=${SKIP:-}

command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
command -v jq >/dev/null || { echo "jq is missing: apt-get install jq" >&2; exit 1; }
WORK=$(mktemp -d)
PID=
LOOP=
cleanup() {
  [ -n "$LOOP" ] && kill "$LOOP" 2>/dev/null
  [ -n "$PID" ] && kill "$PID" 2>/dev/null
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

python3 - "$CORPUS" "$WORK/orders.ndjson" "$WORK/same.txt" <<'PY'
import gzip, json, sys
with gzip.open(sys.argv[1], "rt", encoding="utf-8") as f, open(sys.argv[2], "w", encoding="utf-8") as out, open(sys.argv[3], "w", encoding="utf-8") as same:
    for i, line in enumerate(f):
        doc = json.loads(line)
        out.write(json.dumps({"Id": doc["@metadata"]["@id"], "Document": doc}, separators=(",", ":"), ensure_ascii=False) + "\n")
        if i < 1000:  # the first 1,000 orders, as put-same.lua takes them: "<id> <JSON without its closing brace>"
            body = dict(doc)
            body["@metadata"] = {"@collection": doc["@metadata"].get("@collection", "Orders")}
            same.write(doc["@metadata"]["@id"] + " " + json.dumps(body, separators=(",", ":"), ensure_ascii=False)[:-1] + "\n")
PY

. perf/load/ab-lib.sh
SERVER=${SERVER_BUILD:-$WORK/head}
[ -n "${SERVER_BUILD:-}" ] || publish_server "$WORK/head"

J="http://127.0.0.1:$PORT"
DB="$WORK/data/Databases/bench"
DEST="$WORK/dest"   # on the same disk as $WORK/data
mkdir -p "$DEST"
load() { cut -d' ' -f1-3 /proc/loadavg; }
mb() { python3 -c "print(f'{$1 / 1e6:.1f}')"; }

COLD="sync + drop_caches"
cold() { # both sides read from the disk, not the page cache
  sync
  if ! { echo 3 > /proc/sys/vm/drop_caches; } 2>/dev/null; then COLD="sync only (drop_caches not allowed: the folder may be read from the page cache)"; fi
}

# wait_op <state-url>: polls an operation until it ends; prints "<wall seconds> <state JSON>"; fails on a fault.
wait_op() {
  local t0 state status
  t0=$(date +%s.%N)
  while :; do
    state=$(curl -sf "$1")
    status=$(jq -r .Status <<<"$state")
    [ "$status" = InProgress ] || break
    sleep 0.02
  done
  [ "$status" = Completed ] || { echo "operation $1 ended $status: $state" >&2; return 1; }
  echo "$(echo "$(date +%s.%N) - $t0" | bc) $state"
}
# snapshot <folder> -> "<server ms> <wall s> <file size> <file path>"
snapshot() {
  local id out
  id=$(curl -sf -X POST "$J/databases/bench/admin/backup" -d "{\"BackupType\":\"Snapshot\",\"LocalSettings\":{\"FolderPath\":\"$1\"}}" | jq -r .OperationId)
  out=$(wait_op "$J/databases/bench/operations/state?id=$id")
  jq -r --arg wall "${out%% *}" '"\(.Result.DurationInMs) \($wall) \(.Result.SizeInBytes) \(.Result.FilePath)"' <<<"${out#* }"
}
# restore <name> <chain folder> [last file] -> "<server ms> <wall s> <files> <orders/1000's Revision> <orders>"; the database is deleted after.
restore() {
  local id out last=""
  [ -n "${3:-}" ] && last=",\"LastFileNameToRestore\":\"$3\""
  id=$(curl -sf -X POST "$J/admin/restore/database" -d "{\"DatabaseName\":\"$1\",\"BackupLocation\":\"$2\"$last}" | jq -r .OperationId)
  out=$(wait_op "$J/operations/state?id=$id")
  local revision orders
  revision=$(curl -sf "$J/databases/$1/docs?id=orders/1000" | jq -r '.Results[0].Revision // "none"')
  orders=$(curl -sf "$J/databases/$1/collections/stats" | jq -r '.Collections.Orders // "?"')
  curl -sf -X DELETE "$J/admin/databases?name=$1" >/dev/null
  jq -r --arg wall "${out%% *}" --arg revision "$revision" --arg orders "$orders" '"\(.Result.DurationInMs) \($wall) \(.Result.Files | length) \($revision) \($orders)"' <<<"${out#* }"
}
# storage_entry <backup file>: the stored bytes of its storage entry (the manifest at the file's tail).
storage_entry() {
  python3 - "$1" <<'PY'
import json, struct, sys
with open(sys.argv[1], "rb") as f:
    f.seek(-32, 2)
    offset, length = struct.unpack("<qq", f.read(16))
    f.seek(offset)
    manifest = json.loads(f.read(length))
print(next(e["StoredLength"] for e in manifest["Entries"] if e["Name"] == "storage"))
PY
}

start_server "$SERVER"
curl -sf -X PUT "$J/admin/databases?name=bench" >/dev/null
curl -sf -X POST -H 'Content-Type: application/x-ndjson' -H 'Transfer-Encoding: chunked' \
  --data-binary @"$WORK/orders.ndjson" "$J/databases/bench/bulk_insert" >/dev/null
for q in "from Orders where Company = 'companies/1'" "from Orders where Freight >= 10 order by Freight limit 10"; do
  curl -sf -G "$J/databases/bench/queries" --data-urlencode "query=$q" \
    --data-urlencode waitForNonStaleResults=true --data-urlencode waitForNonStaleResultsTimeout=00:05:00 >/dev/null
done
echo "# ${SERVER_BUILD:-working tree $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes')}, $(nproc) cores, $(date -u +%F)"
echo "# indexes: $(curl -sf "$J/databases/bench/indexes/stats" | jq -r '[.Results[] | "\(.Name) (\(.EntriesCount) entries, stale \(.IsStale))"] | join(", ")')"

if [[ " $SKIP " != *" 1 "* ]]; then
  FOLDER=$(du -sb --apparent-size "$DB" | cut -f1)
  echo
  echo "## 1 and 4. snapshot vs cp -r of the database folder ($(mb "$FOLDER") MB: $(cd "$DB/Storage" && find . -type f -size +0 -printf '%P %s B, ')indexes $(du -sb --apparent-size "$DB/Indexes" | cut -f1) B), restore of the snapshot"
  SNAPROWS=()
  CPROWS=()
  RESTOREROWS=()
  for r in $(seq 1 "$ROUNDS"); do
    sides=(snapshot cp)
    (( r % 2 == 0 )) && sides=(cp snapshot)
    for side in "${sides[@]}"; do
      cold
      if [ "$side" = snapshot ]; then
        read -r ms wall size path < <(snapshot "$DEST/snap")
        SNAPROWS+=("$r $ms $wall $size $(load)")
        cold
        read -r rms rwall _ _ orders < <(restore "restored" "$DEST/snap")
        RESTOREROWS+=("$r $rms $rwall $orders $(load)")
        rm -rf "$DEST/snap"
      else
        t0=$(date +%s.%N)
        cp -r "$DB" "$DEST/cp"
        find "$DEST/cp" -type f -print0 | xargs -0 sync
        ms=$(echo "($(date +%s.%N) - $t0) * 1000 / 1" | bc)
        CPROWS+=("$r $ms $(load)")
        rm -rf "$DEST/cp"
      fi
    done
  done
  echo "# reading cold: $COLD"
  echo "| round | snapshot ms (server; wall) | snapshot MB/s | cp -r + fsync ms | cp MB/s | snapshot / cp speed | file MB / folder MB | restore ms (server; wall) | restore / snapshot time | load (snapshot; cp) |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  for i in "${!SNAPROWS[@]}"; do
    read -r r ms wall size l1 l2 l3 <<<"${SNAPROWS[$i]}"
    read -r _ cms c1 c2 c3 <<<"${CPROWS[$i]}"
    read -r _ rms rwall orders _ <<<"${RESTOREROWS[$i]}"
    python3 -c "f=$FOLDER; ms=$ms; cms=$cms; s=$size; rms=$rms; print(f'| $r | {ms} ({$wall:.2f} s) | {f / ms / 1e3:.0f} | {cms} | {f / cms / 1e3:.0f} | {cms / ms:.2f} | {s / 1e6:.1f} / {f / 1e6:.1f} = {s / f:.2f} | {rms} ({$rwall:.2f} s, $orders orders) | {rms / ms:.2f} | $l1 $l2 $l3; $c1 $c2 $c3 |')"
  done
fi

task() { # <task id> <full true|false> -> "<server ms> <size> <path>"
  local id out
  id=$(curl -sf -X POST "$J/databases/bench/admin/backup/database?isFullBackup=$2&taskId=$1" | jq -r .OperationId)
  out=$(wait_op "$J/databases/bench/operations/state?id=$id")
  jq -r '"\(.Result.DurationInMs) \(.Result.SizeInBytes) \(.Result.FilePath) \(.Result.Kind)"' <<<"${out#* }"
}
if [[ " $SKIP " != *" 3 "* ]]; then
  echo
  echo "## 3. minimal incremental vs incremental: the same 1,000 orders PUT 100 times each after a snapshot (journals kept by periodic tasks)"
  for kind in journal minimal; do
    minimal=false
    [ "$kind" = minimal ] && minimal=true
    curl -sf -X POST "$J/databases/bench/admin/periodic-backup" -d "{\"Name\":\"$kind\",\"BackupType\":\"Backup\",\"FullBackupFrequency\":\"0 0 1 1 *\",\"IncrementalBackupFrequency\":\"0 0 1 1 *\",\"MinimalIncremental\":$minimal,\"LocalSettings\":{\"FolderPath\":\"$DEST/$kind\"}}" >/dev/null
  done
  read -r full1 _ path1 _ < <(task 1 true)
  read -r full2 _ _ _ < <(task 2 true)
  rm -f "$WORK/done"
  t0=$(date +%s.%N)
  wrk -t2 -c16 -d30m -s perf/load/put-same.lua "$J" -- bench "$WORK/same.txt" 100 "$WORK/done" 2 >/dev/null
  puts=$(echo "$(date +%s.%N) - $t0" | bc)
  echo "# workload: 100,000 PUTs in $(printf %.1f "$puts") s ($(python3 -c "print(f'{100000 / $puts:.0f}')") PUT/s), load $(load); snapshots took $full1 / $full2 ms"
  read -r ims isize ipath ikind < <(task 1 false)
  read -r mms msize mpath mkind < <(task 2 false)
  [ "$ikind" = Incremental ] && [ "$mkind" = MinimalIncremental ] || echo "unexpected kinds: $ikind, $mkind" >&2
  istore=$(storage_entry "$ipath")
  mstore=$(storage_entry "$mpath")
  cold
  read -r frms _ _ < <(restore "restored" "$(dirname "$path1")" "$(basename "$path1")")
  cold
  read -r irms _ ifiles irev _ < <(restore "restored" "$(dirname "$ipath")")
  cold
  read -r mrms _ mfiles mrev _ < <(restore "restored" "$(dirname "$mpath")")
  echo "| file | backup ms | size KB | storage entry KB | restore of the chain ms (files) | minus the snapshot-only restore ($frms ms) | orders/1000 Revision after restore | load |"
  echo "|---|---|---|---|---|---|---|---|"
  echo "| incremental | $ims | $((isize / 1024)) | $((istore / 1024)) | $irms ($ifiles) | $((irms - frms)) | $irev | $(load) |"
  echo "| minimal incremental | $mms | $((msize / 1024)) | $((mstore / 1024)) | $mrms ($mfiles) | $((mrms - frms)) | $mrev | $(load) |"
  python3 -c "print(f'# minimal / incremental: file {$msize / $isize:.3f}, storage entry {$mstore / $istore:.3f}')"
  for t in 1 2; do curl -sf -X DELETE "$J/databases/bench/admin/tasks?id=$t&type=Backup" >/dev/null; done
  rm -rf "$DEST/journal" "$DEST/minimal"
fi

put() { # duration -> "rps p99"
  local out
  out=$(wrk -t2 -c64 -d"$1" --latency -s perf/load/put-new.lua "$J" -- "/databases/bench/docs?id=new/")
  if grep -q "Non-2xx" <<<"$out"; then echo "non-2xx answers:" >&2; grep "Non-2xx" <<<"$out" >&2; fi
  echo "$(awk '/Requests\/sec/ {print $2}' <<<"$out") $(awk '$1=="99%" {print $2}' <<<"$out")"
}
# snapshots_loop: snapshot after snapshot into $DEST/loop (each file deleted once written) until $WORK/stop exists; counts them in $WORK/count.
snapshots_loop() {
  local n=0
  while [ ! -e "$WORK/stop" ]; do
    snapshot "$DEST/loop" >/dev/null
    rm -rf "$DEST/loop"
    n=$((n + 1))
    echo "$n" >"$WORK/count"
  done
}
if [[ " $SKIP " != *" 2 "* ]]; then
  echo
  echo "## 2. durable PUT of new ~1 KiB documents, wrk -t2 -c64 -d$DURATION, into the same database, with snapshots back to back and without"
  put 3s >/dev/null
  echo "| round | run | req/s | p99 | snapshots taken | load |"
  echo "|---|---|---|---|---|---|"
  for r in $(seq 1 "$ROUNDS"); do
    runs=(without with)
    (( r % 2 == 0 )) && runs=(with without)
    for run in "${runs[@]}"; do
      if [ "$run" = with ]; then
        rm -f "$WORK/stop" "$WORK/count"
        snapshots_loop &
        LOOP=$!
        sleep 0.2
      fi
      read -r rps p99 < <(put "$DURATION")
      taken=-
      if [ "$run" = with ]; then
        touch "$WORK/stop"
        wait "$LOOP"
        LOOP=
        taken=$(cat "$WORK/count" 2>/dev/null || echo 0)
      fi
      echo "| $r | $run | ${rps%.*} | $p99 | $taken | $(load) |"
    done
  done
fi
