#!/usr/bin/env bash
# Issue 28's HTTPS targets: a secured Jackdaw against the bare Kestrel app (perf/load/BareKestrel)
# serving a body of the same size over HTTPS with the same server certificate, both asking for and
# requiring a client certificate in the handshake. Both servers run side by side, loaded in turn
# (A B A B), each round:
#   keep-alive   GET of a random document by id out of DOCS (get-random.lua), wrk -t2 -c64
#   new-conn     the same with "Connection: close": a new connection, so a full TLS handshake
#                (server certificate, client certificate), per request; wrk -t2 -c64
# It prints requests/s, p99, the server's CPU per request (utime+stime from /proc), the load
# generator's CPU per request, the load average, and per workload the ratio Jackdaw / bare of
# requests/s and of server CPU per request. The CPU ratio is the one to read when the host is
# busy: on 2 cores the load generator takes a share of the CPU, which pulls the requests/s ratio
# towards 1 (and new-conn is about half the generator's own handshakes).
#
# Load generator: wrk, as every other load script here, given a client certificate. wrk has no
# option for one, so perf/load/wrk-client-cert.c, an LD_PRELOAD library built here with cc, loads
# the client certificate and key into the one OpenSSL context wrk makes (once per wrk process; the
# per-connection and per-request work is wrk's own). wrk sets no session on a new connection, so
# Connection: close is a full handshake each time (the server's CPU per connection shows it: an
# RSA signature and the client certificate's chain, over 1 ms). Rejected: h2load and `openssl
# s_time` (no client certificate either, or handshakes only, no HTTP); a .NET HttpClient generator
# (SocketsHttpHandler with the certificate): several times wrk's CPU per request, and on 2 cores the
# generator's CPU is taken from the servers, which squeezes the ratio towards 1.
#
#   perf/load/https.sh [rounds] [duration]      defaults: 3 rounds, 10s
# Environment:
#   DOCS=10000          documents loaded into Jackdaw (gen-docs.py, ~1 KiB each)
#   KEY=rsa:2048        key of the CA, server and client certificates (openssl -newkey), e.g. ec
#                       with EC_CURVE=P-256
#   CERT_FORM=pfx       the server certificate as a PFX with a password, or pem (certificate and
#                       key files), for both servers
#   SERVER_BUILD=<dir>  a built Jackdaw.Server (folder of Jackdaw.Server.dll); else this tree, Release
#   PLAIN=1             both servers over plain http (no certificates; new-conn is a new TCP
#                       connection per request): the same rounds without TLS, for its cost
#   JACKDAW_PLAIN=1     Jackdaw alone over plain http (unsecured), the bare app over https
#   WITH_HTTP=1         also an unsecured Jackdaw and the bare app over http, loaded in the same
#                       rounds: what TLS (and, for Jackdaw, authorization) adds to each side's CPU
#                       per request, and the difference, Jackdaw's extra cost of being secured
#   WORKLOADS="keep-alive new-conn"   which workloads to run
#   WARMUP=15s          each server's warm-up per workload, before the rounds: on a busy host the
#                       tiered JIT's background compiles get little CPU, and a server with more code
#                       (Jackdaw) reaches its steady state later (a profile after 3 s under load 30:
#                       13% of the samples in the JIT, none after 45 s)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
DURATION=${2:-10s}
DOCS=${DOCS:-10000}
KEY=${KEY:-rsa:2048}
CERT_FORM=${CERT_FORM:-pfx}
PLAIN=${PLAIN:-0}
WORKLOADS=${WORKLOADS:-keep-alive new-conn}
JACKDAW_PORT=${JACKDAW_PORT:-18443}
BARE_PORT=${BARE_PORT:-18444}

need() { # command package
  command -v "$1" >/dev/null && return 0
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq "$2" >/dev/null; else echo "$1 is missing: apt-get install $2" >&2; exit 1; fi
}
need wrk wrk
need openssl openssl
need cc gcc

WORK=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

if [ -z "${SERVER_BUILD:-}" ]; then
  . perf/load/ab-lib.sh
  publish_server "$WORK/jackdaw"
  SERVER_BUILD=$WORK/jackdaw
fi
dotnet build -c Release perf/load/BareKestrel/BareKestrel.csproj -v q -nologo -o "$WORK/bare" >/dev/null
python3 perf/load/gen-docs.py "$DOCS" "$WORK/docs"

# A CA, and a server and a client certificate it signs (the client one for wrk and curl).
if [ "$PLAIN" = 1 ]; then
  SCHEME=http; CURL=(curl -sf); WRK=(wrk)
  JACKDAW_TLS=(); BARE_TLS=()
else
  SCHEME=https
  newkey=(-newkey "$KEY"); [ "$KEY" = ec ] && newkey+=(-pkeyopt "ec_paramgen_curve:${EC_CURVE:-P-256}")
  openssl req -x509 "${newkey[@]}" -nodes -keyout "$WORK/ca.key" -out "$WORK/ca.pem" -days 2 -subj "/CN=Jackdaw perf CA" 2>/dev/null
  for who in server client; do
    openssl req "${newkey[@]}" -nodes -keyout "$WORK/$who.key" -out "$WORK/$who.csr" -subj "/CN=jackdaw-perf-$who" 2>/dev/null
    ext="extendedKeyUsage=clientAuth"; [ $who = server ] && ext="subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth"
    openssl x509 -req -in "$WORK/$who.csr" -CA "$WORK/ca.pem" -CAkey "$WORK/ca.key" -CAcreateserial -out "$WORK/$who.pem" -days 2 \
      -extfile <(printf "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n%b\n" "$ext") 2>/dev/null
  done
  openssl pkcs12 -export -out "$WORK/server.pfx" -inkey "$WORK/server.key" -in "$WORK/server.pem" -certfile "$WORK/ca.pem" -passout pass:perf
  THUMBPRINT=$(openssl x509 -in "$WORK/client.pem" -noout -fingerprint -sha1 | sed 's/.*=//; s/://g')
  cc -shared -fPIC -O2 -o "$WORK/wrk-client-cert.so" perf/load/wrk-client-cert.c -ldl
  CURL=(curl -sf --cacert "$WORK/ca.pem" --cert "$WORK/client.pem" --key "$WORK/client.key")
  WRK=(env LD_PRELOAD="$WORK/wrk-client-cert.so" WRK_CLIENT_CERT="$WORK/client.pem" WRK_CLIENT_KEY="$WORK/client.key" wrk)
  if [ "$CERT_FORM" = pem ]; then
    JACKDAW_TLS=("--Security:Certificate:Path=$WORK/server.pem" "--Security:Certificate:KeyPath=$WORK/server.key")
    BARE_TLS=(--cert "$WORK/server.pem" --cert-key "$WORK/server.key")
  else
    JACKDAW_TLS=("--Security:Certificate:Path=$WORK/server.pfx" "--Security:Certificate:Password=perf")
    BARE_TLS=(--cert "$WORK/server.pfx" --cert-password perf)
  fi
  # The client certificate is a well-known admin: no registration step, every request allowed.
  JACKDAW_TLS+=("--Security:WellKnownAdminCertificates=$THUMBPRINT")
fi
[ "${JACKDAW_PLAIN:-0}" = 1 ] && JACKDAW_TLS=()
JACKDAW=$( [ ${#JACKDAW_TLS[@]} = 0 ] && echo http || echo "$SCHEME")://127.0.0.1:$JACKDAW_PORT
BARE=$SCHEME://127.0.0.1:$BARE_PORT

wait_up() { for _ in $(seq 1 200); do "${CURL[@]}" -o /dev/null "$1" && return 0; sleep 0.1; done; echo "server at $1 did not start" >&2; exit 1; }

# The servers loaded in turn, each round: name, pid, url.
NAMES=(); SERVER_PIDS=(); URLS=()
start_jackdaw() { # name url data-dir [options...]
  local name=$1 url=$2 data=$3; shift 3
  dotnet "$SERVER_BUILD/Jackdaw.Server.dll" --urls "$url" --data-dir "$data" --Logging:LogLevel:Default=Warning "$@" >"$data.log" 2>&1 &
  PIDS+=($!); NAMES+=("$name"); SERVER_PIDS+=($!); URLS+=("$url")
  wait_up "$url/build/version" || { cat "$data.log" >&2; exit 1; }
  "${CURL[@]}" -X PUT "$url/admin/databases?name=bench" >/dev/null
  "${CURL[@]}" -X POST -H 'Content-Type: application/x-ndjson' --data-binary @"$WORK/docs/jackdaw.ndjson" "$url/databases/bench/bulk_insert" >/dev/null
}
start_bare() { # name url [options...]
  local name=$1 url=$2; shift 2
  dotnet "$WORK/bare/BareKestrel.dll" --urls "$url" --body-bytes "$BODY" "$@" >"$WORK/$name.log" 2>&1 &
  PIDS+=($!); NAMES+=("$name"); SERVER_PIDS+=($!); URLS+=("$url")
  wait_up "$url/" || { cat "$WORK/$name.log" >&2; exit 1; }
}
start_jackdaw Jackdaw "$JACKDAW" "$WORK/data" "${JACKDAW_TLS[@]}"
# The bare app answers a body of the mean size of Jackdaw's answers (a sample of the documents).
BODY=$(for i in $(seq 1 $((DOCS / 100 + 1)) "$DOCS"); do "${CURL[@]}" -o /dev/null -w '%{size_download}\n' "$JACKDAW/databases/bench/docs?id=docs/$i"; done |
  awk '{s += $1; n++} END {printf "%d", s / n}')
start_bare bare "$BARE" "${BARE_TLS[@]}"
if [ "${WITH_HTTP:-0}" = 1 ]; then
  start_jackdaw "Jackdaw http" "http://127.0.0.1:$((JACKDAW_PORT + 10))" "$WORK/data-http"
  start_bare "bare http" "http://127.0.0.1:$((BARE_PORT + 10))"
fi

cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
TICK=$(getconf CLK_TCK)
run() { # pid url workload duration -> "rps p99 server-µs/request wrk-µs/request"
  local pid=$1 url=$2 workload=$3 duration=$4 c0 c1 out times args=()
  [ "$workload" = new-conn ] && args=(-H "Connection: close")
  # The same requests to both (the bare app answers any path): wrk's Lua script costs wrk CPU.
  args+=(-s perf/load/get-random.lua "$url" -- "/databases/bench/docs?id=docs/" "$DOCS")
  c0=$(cpu "$pid")
  times=$( { TIMEFORMAT='%U %S'; time "${WRK[@]}" -t2 -c64 -d"$duration" --latency "${args[@]}" >"$WORK/wrk.out"; } 2>&1 | tail -1)
  c1=$(cpu "$pid")
  out=$(cat "$WORK/wrk.out")
  if grep -q "Non-2xx\|Socket errors" <<<"$out"; then grep "Non-2xx\|Socket errors" <<<"$out" | sed "s|^|$workload $url: |" >&2; fi
  local n rps p99
  n=$(awk '/requests in/ {print $1}' <<<"$out")
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  awk -v n="$n" -v rps="$rps" -v p99="$p99" -v c="$((c1 - c0))" -v t="$times" -v tick="$TICK" \
    'BEGIN {split(t, w, " "); printf "%.0f %s %.1f %.1f\n", rps, p99, c * 1e6 / tick / n, (w[1] + w[2]) * 1e6 / n}'
}

echo "# warm-up"
for w in $WORKLOADS; do for i in "${!NAMES[@]}"; do run "${SERVER_PIDS[$i]}" "${URLS[$i]}" "$w" "${WARMUP:-15s}" >/dev/null; done; done

echo "# GET a random document of $DOCS by id, Jackdaw at $JACKDAW, bare at $BARE ($( [ "$PLAIN" = 1 ] && echo "no TLS" || echo "$KEY certificates, $CERT_FORM, client certificate required"))$( [ "${WITH_HTTP:-0}" = 1 ] && echo ", and both over http"), Jackdaw $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes') against bare Kestrel answering $BODY B, wrk -t2 -c64 -d$DURATION, $ROUNDS rounds interleaved"
echo "| round | workload | server | load (1m) | req/s | p99 | server CPU µs/request | wrk CPU µs/request |"
echo "|---|---|---|---|---|---|---|---|"
declare -A RATIOS TLS_COST
for r in $(seq 1 "$ROUNDS"); do
  for w in $WORKLOADS; do
    rps=(); cpus=()
    for i in "${!NAMES[@]}"; do
      read -r rr rp rc rw < <(run "${SERVER_PIDS[$i]}" "${URLS[$i]}" "$w" "$DURATION")
      echo "| $r | $w | ${NAMES[$i]} | $(cut -d' ' -f1 /proc/loadavg) | $rr | $rp | $rc | $rw |"
      rps+=("$rr"); cpus+=("$rc")
    done
    RATIOS[$w]+="$(awk -v a="${rps[0]}" -v b="${rps[1]}" -v ca="${cpus[0]}" -v cb="${cpus[1]}" 'BEGIN {printf "%.2f/%.2f ", a / b, cb / ca}')"
    if [ ${#NAMES[@]} = 4 ]; then
      TLS_COST[$w]+="$(awk -v j="${cpus[0]}" -v b="${cpus[1]}" -v jh="${cpus[2]}" -v bh="${cpus[3]}" 'BEGIN {printf "%.1f-%.1f=%.1f ", j - jh, b - bh, (j - jh) - (b - bh)}')"
    fi
  done
done
for w in $WORKLOADS; do
  echo "$w, Jackdaw / bare per round, req/s / inverse CPU per request (≥ 0.8 is the target): ${RATIOS[$w]}" |
    awk '{print} {for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+\/[0-9.]+$/) {split($i, x, "/"); s += log(x[1]); c += log(x[2]); n++}} END {if (n) printf "  geometric mean: req/s %.2f, CPU %.2f\n", exp(s / n), exp(c / n)}'
  if [ -n "${TLS_COST[$w]:-}" ]; then
    echo "$w, CPU µs/request added over http per round, Jackdaw's - bare's = what being secured costs Jackdaw beyond TLS: ${TLS_COST[$w]}"
  fi
done
