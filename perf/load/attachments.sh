#!/usr/bin/env bash
# PUT and GET of one large attachment (default 100 MB of random bytes) through the server, against
# writing the same bytes to a file with fsync and reading them back, on the same disk, A B A B in one
# run. Also the server's anonymous memory (RssAnon: heap and native, not the page cache of the data
# file it maps) sampled every 20 ms during each transfer: peak minus the idle value before it.
#
#   perf/load/attachments.sh [megabytes] [rounds]      defaults: 100, 3
# SERVER_BUILD: a built server folder to use instead of building the working tree.
set -euo pipefail
cd "$(dirname "$0")/../.."
MB=${1:-100}
ROUNDS=${2:-3}
PORT=${PORT:-18099}
WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/jackdaw-att.XXXXXX")
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
. perf/load/ab-lib.sh
BUILD=${SERVER_BUILD:-}
if [ -z "$BUILD" ]; then
  publish_server "$WORK/head"
  BUILD=$WORK/head
fi
head -c "$((MB * 1000 * 1000))" /dev/urandom >"$WORK/blob"
URL="http://127.0.0.1:$PORT"

rss_anon() { awk '/RssAnon/ {print $2}' "/proc/$1/status"; }
# watch <pid> <file>: writes the highest RssAnon (kB) seen until the file "$2.stop" exists.
watch_rss() {
  local peak=0 v
  while [ ! -e "$2.stop" ]; do
    v=$(rss_anon "$1" 2>/dev/null || echo 0)
    [ "$v" -gt "$peak" ] && peak=$v
    sleep 0.02
  done
  echo "$peak" >"$2"
}
timed() { # command... -> seconds
  python3 - "$@" <<'PY'
import subprocess, sys, time
t = time.perf_counter(); subprocess.run(sys.argv[1:], check=True); print(f"{time.perf_counter() - t:.3f}")
PY
}
file_write() { python3 - "$WORK/blob" "$WORK/copy" <<'PY'
import os, sys, time
src, dst = sys.argv[1], sys.argv[2]
t = time.perf_counter()
with open(src, "rb") as f, open(dst, "wb") as out:
    while chunk := f.read(1 << 20):
        out.write(chunk)
    out.flush(); os.fsync(out.fileno())
print(f"{time.perf_counter() - t:.3f}")
PY
}
file_read() { python3 - "$WORK/copy" <<'PY'
import sys, time
t = time.perf_counter()
with open(sys.argv[1], "rb") as f:
    while f.read(1 << 20):
        pass
print(f"{time.perf_counter() - t:.3f}")
PY
}
# transfer <label> <curl args...>: times one curl while watching the server's memory; prints "seconds peak-above-idle-MB"
transfer() {
  local idle s peak
  shift # the label only names the call: curl must not take it for a first URL (-T and -o bind to that one)
  idle=$(rss_anon "$PID")
  rm -f "$WORK/peak" "$WORK/peak.stop"
  watch_rss "$PID" "$WORK/peak" &
  local watcher=$!
  s=$(timed curl -sf "$@")
  touch "$WORK/peak.stop"; wait "$watcher"
  peak=$(cat "$WORK/peak")
  echo "$s $(( (peak - idle) / 1000 ))"
}

echo "# $MB MB attachment: Jackdaw PUT/GET vs a file written with fsync and read back, same disk ($(df --output=source "$WORK" | tail -1))"
echo "| round | file write+fsync s | PUT s | PUT/file | PUT MB above idle | file read s | GET s | GET/file | GET MB above idle |"
echo "|---|---|---|---|---|---|---|---|---|"
for r in $(seq 1 "$ROUNDS"); do
  start_server "$BUILD"
  curl -sf -X PUT "$URL/admin/databases?name=att" >/dev/null
  curl -sf -X PUT "$URL/databases/att/docs?id=files/1" -H 'Content-Type: application/json' -d '{"Name":"big","@metadata":{"@collection":"Files"}}' >/dev/null
  sleep 1
  fw=$(file_write); rm -f "$WORK/copy"
  read -r put putmem < <(transfer put -X PUT -T "$WORK/blob" -H 'Content-Type: application/octet-stream' "$URL/databases/att/attachments?id=files/1&name=blob-$r.bin&contentType=application/octet-stream" -o /dev/null)
  fw2=$(file_write)
  fr=$(file_read)
  read -r get getmem < <(transfer get "$URL/databases/att/attachments?id=files/1&name=blob-$r.bin" -o /dev/null)
  curl -sf "$URL/databases/att/attachments?id=files/1&name=blob-$r.bin" -o "$WORK/back"
  cmp -s "$WORK/blob" "$WORK/back" || { echo "GET returned other bytes" >&2; exit 1; }
  fr2=$(file_read)
  rm -f "$WORK/back" "$WORK/copy"
  python3 -c "
fw=($fw+$fw2)/2; fr=($fr+$fr2)/2; put=$put; get=$get
print(f'| $r | {fw:.2f} | {put:.2f} | {fw/put:.2f} | $putmem | {fr:.3f} | {get:.3f} | {fr/get:.2f} | $getmem |')"
  stop_server
done
