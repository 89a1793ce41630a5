#!/usr/bin/env bash
# Starts (or stops) the one nginx every benchmark workload talks to: ECDSA P-256, TLS 1.3 only,
# on loopback (127.0.0.1 and ::1, so https://localhost:PORT/ works whichever address a client
# tries first), with a PKI made here by the openssl command line and a stapled OCSP response.
#
#   Benchmarks/nginx.sh start DIR   # writes DIR/{pki,nginx.conf,bench.env}, starts nginx
#   Benchmarks/nginx.sh stop DIR    # stops it by PID
#
# Ports (base: SERVERTRUST_BENCH_BASE_PORT, default 18640):
#   base+1  HTTP/2 and HTTP/1.1 (ALPN), kept alive, staple       multiplexed workloads
#   base+2  HTTP/1.1 only, kept alive, staple                   kept-alive and pool workloads
#   base+3  HTTP/1.1, one request per connection, no session cache and no tickets, staple:
#           every request is a full handshake whatever the client does
#   base+4  plain HTTP: /ocsp answers every GET or POST with the leaf's OCSP response (the
#           leaf's Authority Information Access points here), for live-OCSP workloads
#   base+5  as base+3 but staples nothing: live-OCSP handshakes must fetch
#   base+6  as base+3 but with the session cache and tickets on: a client that keeps sessions
#           resumes one on every connection after its first (resumed-handshake workloads)
#   base+7  as base+5 (full handshakes, no staple) but serving ct-leaf.pem: the leaf's key and
#           names with embedded SCTs from test logs of distinct operators, listed in
#           ct-log-list.json (Certificate Transparency workloads, scripts/ct.sh)
#
# SERVERTRUST_BENCH_CT_SCTS: how many SCTs ct-leaf.pem embeds (2, the default, as a certificate
# valid 180 days or less needs; 3 for a longer one); each from its own log and operator.
#
# SERVERTRUST_BENCH_GROUPS, if set, is every TLS server's ssl_ecdh_curve (X25519, say, to keep
# OpenSSL 3.5 off its default X25519MLKEM768). SERVERTRUST_BENCH_LOG_GROUPS=1 logs each TLS
# request's port, protocol, key-exchange group and whether its session was resumed ("r") to
# DIR/logs/tls.log; off by default, so the server does no more work in timed runs.
#
# bench.env names the ports, the files and the pins; run.sh sources it.
set -euo pipefail
action=${1:?usage: nginx.sh start|stop DIR}
dir=$(mkdir -p "${2:?usage: nginx.sh start|stop DIR}" && cd "$2" && pwd)
base=${SERVERTRUST_BENCH_BASE_PORT:-18640}
scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")/scripts" && pwd)

stop() {
    if [ -f "$dir/nginx.pid" ]; then
        pid=$(cat "$dir/nginx.pid")
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
        rm -f "$dir/nginx.pid"
    fi
}

if [ "$action" = stop ]; then stop; exit 0; fi
[ "$action" = start ] || { echo "usage: nginx.sh start|stop DIR" >&2; exit 2; }
command -v nginx >/dev/null || { echo "nginx.sh: nginx is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
stop

pki="$dir/pki"
rm -rf "$pki" && mkdir -p "$pki" "$dir/logs"
cd "$pki"
cat > ext.cnf <<CNF
[root_ext]
basicConstraints = critical, CA:true
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[intermediate_ext]
basicConstraints = critical, CA:true, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[leaf_ext]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:bench.servertrust.test, DNS:localhost, IP:127.0.0.1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
authorityInfoAccess = OCSP;URI:http://127.0.0.1:$((base + 4))/ocsp
CNF
ossl() { local out; out=$(openssl "$@" 2>&1) || { echo "$out" >&2; return 1; }; }
ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256)
ossl req -x509 "${ec[@]}" -nodes -keyout root.key -out root.pem \
    -subj "/O=ServerTrust Bench/CN=Bench Root" -days 60 -extensions root_ext -config <(cat /etc/ssl/openssl.cnf ext.cnf)
ossl req "${ec[@]}" -nodes -keyout intermediate.key -out intermediate.csr -subj "/O=ServerTrust Bench/CN=Bench Intermediate"
ossl x509 -req -in intermediate.csr -CA root.pem -CAkey root.key -CAcreateserial -days 60 \
    -extfile ext.cnf -extensions intermediate_ext -out intermediate.pem
ossl req "${ec[@]}" -nodes -keyout leaf.key -out leaf.csr -subj "/CN=bench.servertrust.test"
ossl x509 -req -in leaf.csr -CA intermediate.pem -CAkey intermediate.key -CAcreateserial -days 60 \
    -extfile ext.cnf -extensions leaf_ext -out leaf.pem
cat leaf.pem intermediate.pem > chain.pem
# Certificate Transparency: the leaf again (same key, names and extensions, another serial),
# with SCTs over its TBS as a precertificate's (RFC 6962 §3.2) from logs made here (make-ct.py).
ct_keys=()
for n in $(seq "${SERVERTRUST_BENCH_CT_SCTS:-2}"); do
    ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "ct-log$n.key"
    ct_keys+=("ct-log$n.key")
done
ct_serial=0x$(openssl rand -hex 8)
ossl x509 -req -in leaf.csr -CA intermediate.pem -CAkey intermediate.key -set_serial "$ct_serial" -days 60 \
    -extfile ext.cnf -extensions leaf_ext -out ct-precert.pem
python3 "$scripts/make-ct.py" ct-precert.pem intermediate.pem intermediate.key ct-leaf.pem ct-log-list.json "${ct_keys[@]}"
cat ct-leaf.pem intermediate.pem > ct-chain.pem
# The stapled (and served) OCSP response for the leaf, signed by its issuer.
serial=$(openssl x509 -in leaf.pem -noout -serial | cut -d= -f2)
printf 'V\t%s\t\t%s\tunknown\t/CN=bench.servertrust.test\n' "$(date -u -d '+60 days' +%y%m%d%H%M%SZ)" "$serial" > ocsp-index.txt
ossl ocsp -issuer intermediate.pem -cert leaf.pem -no_nonce -reqout ocsp-request.der
ossl ocsp -index ocsp-index.txt -CA intermediate.pem -rsigner intermediate.pem -rkey intermediate.key \
    -reqin ocsp-request.der -respout leaf.ocsp -ndays 7
# The system bundle plus our root: the anchors of the "system CA bundle" workloads, bind-mounted
# over the system path in a private mount namespace.
cat /etc/ssl/certs/ca-certificates.crt root.pem > system-plus-root.pem
spki() { openssl x509 -in "$1" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64; }

server() {  # port http2|h1 keepalive|close|resume staple|none [chain]
    local options="ssl"; [ "$2" = h2 ] && options="ssl http2"
    cat <<CONF
  server {
    listen 127.0.0.1:$1 $options;
    listen [::1]:$1 $options;
    ssl_protocols TLSv1.3;
    ssl_certificate $pki/${5:-chain.pem};
    ssl_certificate_key $pki/leaf.key;
CONF
    [ "$4" = staple ] && printf '    ssl_stapling on;\n    ssl_stapling_file %s/leaf.ocsp;\n' "$pki"
    [ -n "${SERVERTRUST_BENCH_GROUPS:-}" ] && printf '    ssl_ecdh_curve %s;\n' "$SERVERTRUST_BENCH_GROUPS"
    [ "${SERVERTRUST_BENCH_LOG_GROUPS:-}" = 1 ] && printf '    access_log %s/logs/tls.log tls;\n' "$dir"
    if [ "$3" = close ]; then
        printf '    keepalive_timeout 0;\n    ssl_session_cache off;\n    ssl_session_tickets off;\n'
    elif [ "$3" = resume ]; then
        printf '    keepalive_timeout 0;\n    ssl_session_cache shared:bench%s:1m;\n    ssl_session_tickets on;\n' "$1"
    else
        printf '    ssl_session_cache shared:bench%s:1m;\n' "$1"
    fi
    printf '    location / { return 200 "ok\\n"; }\n  }\n'
}
{
    cat <<CONF
daemon off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/logs/error.log error;
events { worker_connections 4096; }
http {
  access_log off;
  default_type text/plain;
  keepalive_requests 10000000;
  keepalive_timeout 300s;
  http2_max_concurrent_streams 256;
  log_format tls '\$server_port \$ssl_protocol \$ssl_curve \$ssl_session_reused';
CONF
    server $((base + 1)) h2 keepalive staple
    server $((base + 2)) h1 keepalive staple
    server $((base + 3)) h1 close staple
    server $((base + 5)) h1 close none
    server $((base + 6)) h1 resume staple
    server $((base + 7)) h1 close none ct-chain.pem
    cat <<CONF
  server {
    listen 127.0.0.1:$((base + 4));
    # Every GET (/ocsp/<base64 request>) and POST to /ocsp gets the leaf's response. Static
    # files answer GET only; error_page's internal redirect turns a POST into a GET.
    location /ocsp { rewrite ^ /ocsp-response last; }
    location = /ocsp-response {
      internal;
      error_page 405 =200 /ocsp-file;
      default_type application/ocsp-response;
      alias $pki/leaf.ocsp;
    }
    location = /ocsp-file { internal; default_type application/ocsp-response; alias $pki/leaf.ocsp; }
  }
}
CONF
} > "$dir/nginx.conf"

nginx -t -c "$dir/nginx.conf" -p "$dir" -e "$dir/logs/error.log" >"$dir/logs/test.log" 2>&1 \
    || { echo "nginx.sh: bad configuration:" >&2; cat "$dir/logs/test.log" >&2; exit 1; }
nginx -c "$dir/nginx.conf" -p "$dir" -e "$dir/logs/error.log" >"$dir/logs/stdout.log" 2>&1 &
for _ in $(seq 100); do
    [ -f "$dir/nginx.pid" ] && (exec 3<>"/dev/tcp/127.0.0.1/$((base + 4))") 2>/dev/null && break
    sleep 0.1
done
[ -f "$dir/nginx.pid" ] || { echo "nginx.sh: nginx did not start:" >&2; cat "$dir/logs/error.log" >&2; exit 1; }

cat > "$dir/bench.env" <<ENV
BENCH_DIR=$dir
BENCH_PKI=$pki
BENCH_H2_PORT=$((base + 1))
BENCH_H1_PORT=$((base + 2))
BENCH_HANDSHAKE_PORT=$((base + 3))
BENCH_OCSP_PORT=$((base + 4))
BENCH_HANDSHAKE_NO_STAPLE_PORT=$((base + 5))
BENCH_RESUME_PORT=$((base + 6))
BENCH_CT_PORT=$((base + 7))
BENCH_CT_LOG_LIST=$pki/ct-log-list.json
BENCH_ROOT=$pki/root.pem
BENCH_SYSTEM_PLUS_ROOT=$pki/system-plus-root.pem
BENCH_LEAF_PIN=sha256/$(spki leaf.pem)
BENCH_INTERMEDIATE_PIN=sha256/$(spki intermediate.pem)
ENV
echo "nginx started (pid $(cat "$dir/nginx.pid")) on 127.0.0.1:$((base + 1))-$((base + 7)); see $dir/bench.env"
