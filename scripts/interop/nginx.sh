#!/usr/bin/env bash
# Starts (or stops) the nginx used by the interop tests, on high loopback ports, with a PKI made
# here by the openssl command line, an OCSP staple made by `openssl ocsp`, and a live
# `openssl ocsp` responder that two more nginx servers' leaves name in their AIA.
#
#   scripts/interop/nginx.sh start DIR   # writes DIR/{pki,conf,…} and DIR/interop.env, starts nginx
#   scripts/interop/nginx.sh stop DIR    # stops it by PID
#
# Two more servers test client certificates (mutual TLS): one that requires a certificate issued
# by the client CA made here (base + 8), one that only asks for one and answers with what it
# received (base + 9), the target of the first one's /redirect-elsewhere.
#
# The four plain servers also serve /compressed/interop.txt (a few KB of text written here) with
# nginx's gzip filter on, for the session's response decompression.
# They also answer /upload, after reading the whole request body (up to
# 64 MiB), with "received N bytes by METHOD" (streamed uploads over HTTP/1.1 and HTTP/2).
#
# interop.env (sourced by .ci/run, read by the tests through SERVERTRUST_INTEROP_DIR) names
# every port. Base port: SERVERTRUST_NGINX_BASE_PORT (default 18440).
set -euo pipefail
action=${1:?usage: nginx.sh start|stop DIR}
dir=$(mkdir -p "${2:?usage: nginx.sh start|stop DIR}" && cd "$2" && pwd)
base=${SERVERTRUST_NGINX_BASE_PORT:-}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
choose_base() {  # the first base from 18440 whose nine ports are all free
    local candidate port busy
    for candidate in $(seq 18440 10 18990); do
        busy=0
        for port in $(seq $((candidate + 1)) $((candidate + 9))); do
            if port_in_use "$port"; then busy=1; break; fi
        done
        [ $busy -eq 0 ] && { echo "$candidate"; return 0; }
    done
    echo "nginx.sh: no free port range between 18441 and 18999" >&2
    return 1
}

stop() {
    # SIGKILL: the responder does not end on SIGTERM while it is busy.
    if [ -f "$dir/ocsp.pid" ]; then
        kill -9 "$(cat "$dir/ocsp.pid")" 2>/dev/null || true
        rm -f "$dir/ocsp.pid"
    fi
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
command -v nginx >/dev/null || { echo "nginx.sh: nginx is not installed (scripts/setup.sh installs nginx-light)" >&2; exit 1; }
stop
[ -n "$base" ] || base=$(choose_base)

pki="$dir/pki"
rm -rf "$pki" && mkdir -p "$pki" "$dir/logs"
cd "$pki"
cat > ext.cnf <<'CNF'
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
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:interop.servertrust.test, DNS:localhost, IP:127.0.0.1
authorityKeyIdentifier = keyid
authorityInfoAccess = OCSP;URI:http://127.0.0.1:1/ocsp
CNF
ossl() { local out; out=$(openssl "$@" 2>&1) || { echo "$out" >&2; return 1; }; }
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout root.key -out root.pem \
    -subj "/O=ServerTrust Interop/CN=Interop Root" -days 30 -extensions root_ext -config <(cat /etc/ssl/openssl.cnf ext.cnf)
ossl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout intermediate.key -out intermediate.csr \
    -subj "/O=ServerTrust Interop/CN=Interop Intermediate"
ossl x509 -req -in intermediate.csr -CA root.pem -CAkey root.key -CAcreateserial -days 30 \
    -extfile ext.cnf -extensions intermediate_ext -out intermediate.pem
for kind in ecdsa rsa; do
    if [ $kind = ecdsa ]; then keyopts=(-newkey ec -pkeyopt ec_paramgen_curve:P-256); else keyopts=(-newkey rsa:2048); fi
    ossl req "${keyopts[@]}" -nodes -keyout leaf-$kind.key -out leaf-$kind.csr -subj "/CN=interop.servertrust.test"
    ossl x509 -req -in leaf-$kind.csr -CA intermediate.pem -CAkey intermediate.key -CAcreateserial -days 30 \
        -extfile ext.cnf -extensions leaf_ext -out leaf-$kind.pem
    cat leaf-$kind.pem intermediate.pem > chain-$kind.pem
done
# An OCSP response for the ECDSA leaf, signed by its issuer, made by the real `openssl ocsp`.
serial=$(openssl x509 -in leaf-ecdsa.pem -noout -serial | cut -d= -f2)
expiry=$(date -u -d '+30 days' +%y%m%d%H%M%SZ)
printf 'V\t%s\t\t%s\tunknown\t/CN=interop.servertrust.test\n' "$expiry" "$serial" > index.txt
ossl ocsp -issuer intermediate.pem -cert leaf-ecdsa.pem -no_nonce -reqout ocsp-request.der
ossl ocsp -index index.txt -CA intermediate.pem -rsigner intermediate.pem -rkey intermediate.key \
    -reqin ocsp-request.der -respout leaf-ecdsa.ocsp -ndays 7

# Two leaves whose AIA names the live responder (base + 5): one good, one revoked for key
# compromise an hour ago. The responder is OpenSSL's own, answering from live-index.txt, so
# requests, nonces and signatures are checked against an implementation that is not ours. The
# URL has no path: OpenSSL 3.0's responder cannot decode a GET with one (it answers 400 and then
# stops listening), which the client's GET-then-POST fallback handles but the responder does not
# survive.
ocsp_port=$((base + 5))
printf '[live_ext]\nbasicConstraints = critical, CA:false\nkeyUsage = critical, digitalSignature\nextendedKeyUsage = serverAuth\nsubjectAltName = DNS:interop.servertrust.test\nauthorityKeyIdentifier = keyid\nauthorityInfoAccess = OCSP;URI:http://127.0.0.1:%s/\n' \
    "$ocsp_port" > live-ext.cnf
: > live-index.txt
revoked_at=$(date -u -d '-1 hour' +%y%m%d%H%M%SZ)
for status in good revoked; do
    ossl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout leaf-live-$status.key -out leaf-live-$status.csr \
        -subj "/CN=interop.servertrust.test"
    ossl x509 -req -in leaf-live-$status.csr -CA intermediate.pem -CAkey intermediate.key -CAcreateserial -days 30 \
        -extfile live-ext.cnf -extensions live_ext -out leaf-live-$status.pem
    cat leaf-live-$status.pem intermediate.pem > chain-live-$status.pem
    serial=$(openssl x509 -in leaf-live-$status.pem -noout -serial | cut -d= -f2)
    if [ $status = good ]; then
        printf 'V\t%s\t\t%s\tunknown\t/CN=live-good\n' "$expiry" "$serial" >> live-index.txt
    else
        printf 'R\t%s\t%s,keyCompromise\t%s\tunknown\t/CN=live-revoked\n' "$expiry" "$revoked_at" "$serial" >> live-index.txt
    fi
done
# The client side of mutual TLS: a client CA of its own (never the server PKI's), a client leaf
# with clientAuth, its key also encrypted with a passphrase, and both as PKCS#12.
printf '[client_ext]\nbasicConstraints = critical, CA:false\nkeyUsage = critical, digitalSignature\nextendedKeyUsage = clientAuth\nauthorityKeyIdentifier = keyid\n' > client-ext.cnf
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout client-ca.key -out client-ca.pem \
    -subj "/O=ServerTrust Interop/CN=Interop Client CA" -days 30 -extensions root_ext -config <(cat /etc/ssl/openssl.cnf ext.cnf)
ossl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout client.key -out client.csr \
    -subj "/O=ServerTrust Interop/CN=interop-client"
ossl x509 -req -in client.csr -CA client-ca.pem -CAkey client-ca.key -CAcreateserial -days 30 \
    -extfile client-ext.cnf -extensions client_ext -out client.pem
printf 'interop-passphrase\n' > client-key.passphrase
ossl pkey -in client.key -aes256 -passout file:client-key.passphrase -out client-encrypted.key
ossl pkcs12 -export -in client.pem -inkey client.key -passout file:client-key.passphrase -out client.p12
spki() { openssl x509 -in "$1" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64; }

server() {  # port protocols leaf-chain http2 stapling
    local listen="listen 127.0.0.1:$1 ssl"; [ "$4" = h2 ] && listen="$listen http2"
    cat <<CONF
  server {
    $listen;
    server_name interop.servertrust.test;
    ssl_protocols $2;
    ssl_certificate $pki/chain-$3.pem;
    ssl_certificate_key $pki/leaf-$3.key;
    ssl_session_cache shared:interop$1:1m;
    ssl_session_tickets on;
$( [ "$5" = staple ] && printf '    ssl_stapling on;\n    ssl_stapling_file %s/leaf-ecdsa.ocsp;\n' "$pki" )
    location / { return 200 "interop $1\n"; }
    location /redirect { return 302 https://interop.servertrust.test:$((base + 1))/; }
    location /compressed/ {
      alias $dir/www/;
      default_type text/plain;
      gzip on;
      gzip_types text/plain;
      gzip_min_length 1;
    }
    # Request bodies: nginx reads the whole body (proxy_request_buffering), then the upstream
    # below answers with the length it was forwarded. \$ in an unquoted heredoc: nginx variables.
    location = /upload { client_max_body_size 64m; proxy_pass http://unix:$dir/upload.sock:/upload-length; }
    # Closes the connection (HTTP/2: resets the stream) without a byte of response; logged so
    # the retry tests can count the attempts nginx saw.
    location /drop { access_log $dir/logs/drop.log; return 444; }
  }
CONF
}
mtls_server() {  # port protocols verify-mode
    local listen="listen 127.0.0.1:$1 ssl"; [ "$2" = TLSv1.3 ] && listen="$listen http2"
    cat <<CONF
  server {
    $listen;
    server_name interop.servertrust.test localhost;
    ssl_protocols $2;
    ssl_certificate $pki/chain-ecdsa.pem;
    ssl_certificate_key $pki/leaf-ecdsa.key;
    ssl_session_cache shared:interop$1:1m;
    ssl_session_tickets on;
    ssl_verify_client $3;
    ssl_client_certificate $pki/client-ca.pem;
    location / { return 200 "client-verify=\$ssl_client_verify client-dn=\$ssl_client_s_dn\n"; }
    location /redirect-elsewhere { return 302 https://localhost:$((base + 9))/; }
  }
CONF
}
# Compressible text for /compressed/ (gzip), 100 numbered lines.
mkdir -p "$dir/www"
for i in $(seq 100); do printf 'line %03d: ServerTrust interop text, compressed by nginx gzip on the way out.\n' "$i"; done > "$dir/www/interop.txt"
{
    # Workers run as whoever started nginx: as root, nginx would otherwise drop them to an
    # unprivileged user that can neither read files in a private (mktemp -d, 0700) directory nor
    # connect to the upload backend's socket there. Ignored (with a notice) when not root.
    [ "$(id -u)" = 0 ] && echo "user $(id -un) $(id -gn);"
    cat <<CONF
daemon off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  # Kept-alive connections outlive a sanitizer-slowed test's pauses (the default is 75 s; the
  # HTTP/2 reuse tests count one handshake for several requests).
  keepalive_timeout 10m;
  keepalive_requests 100000;
  http2_max_requests 100000;
CONF
    server $((base + 1)) "TLSv1.3" ecdsa h2 staple
    server $((base + 2)) "TLSv1.2" ecdsa h1 staple
    server $((base + 3)) "TLSv1.3" rsa h2 none
    server $((base + 4)) "TLSv1.2" rsa h1 none
    server $((base + 6)) "TLSv1.3" live-good h1 none
    server $((base + 7)) "TLSv1.2" live-revoked h1 none
    cat <<CONF
  server {
    listen unix:$dir/upload.sock;
    client_max_body_size 64m;
    location = /upload-length { return 200 "received \$content_length bytes by \$request_method\n"; }
  }
CONF
    mtls_server $((base + 8)) "TLSv1.3" on
    mtls_server $((base + 9)) "TLSv1.2" optional
    echo "}"
} > "$dir/nginx.conf"

nginx -c "$dir/nginx.conf" -p "$dir" -e "$dir/logs/error.log" >"$dir/logs/stdout.log" 2>&1 &
for _ in $(seq 100); do
    [ -f "$dir/nginx.pid" ] && port_in_use $((base + 1)) && break
    sleep 0.1
done
[ -f "$dir/nginx.pid" ] || { echo "nginx.sh: nginx did not start:" >&2; cat "$dir/logs/error.log" >&2; exit 1; }

# The live responder. Never probe its port with a bare connect: OpenSSL 3.0's responder spins on
# a connection closed before a request arrives and answers nobody after that. Readiness is a
# real query instead.
(cd "$pki" && exec openssl ocsp -index live-index.txt -port "$ocsp_port" -CA intermediate.pem \
    -rsigner intermediate.pem -rkey intermediate.key -nmin 60 </dev/null >"$dir/logs/ocsp.log" 2>&1) &
echo $! > "$dir/ocsp.pid"
ready=0
for _ in $(seq 50); do
    if openssl ocsp -issuer "$pki/intermediate.pem" -cert "$pki/leaf-live-good.pem" -url "http://127.0.0.1:$ocsp_port/" \
        -CAfile "$pki/root.pem" -timeout 2 2>/dev/null </dev/null | grep -q ': good'; then ready=1; break; fi
    sleep 0.1
done
[ $ready -eq 1 ] || { echo "nginx.sh: the openssl ocsp responder did not answer:" >&2; cat "$dir/logs/ocsp.log" >&2; stop; exit 1; }

cat > "$dir/interop.env" <<ENV
SERVERTRUST_INTEROP_DIR=$dir
SERVERTRUST_INTEROP_HOST=interop.servertrust.test
SERVERTRUST_INTEROP_TLS13_ECDSA_H2_STAPLED=$((base + 1))
SERVERTRUST_INTEROP_TLS12_ECDSA_H1_STAPLED=$((base + 2))
SERVERTRUST_INTEROP_TLS13_RSA_H2=$((base + 3))
SERVERTRUST_INTEROP_TLS12_RSA_H1=$((base + 4))
SERVERTRUST_INTEROP_OCSP_RESPONDER=$ocsp_port
SERVERTRUST_INTEROP_TLS13_LIVE_OCSP_GOOD=$((base + 6))
SERVERTRUST_INTEROP_TLS12_LIVE_OCSP_REVOKED=$((base + 7))
SERVERTRUST_INTEROP_MTLS_REQUIRED=$((base + 8))
SERVERTRUST_INTEROP_MTLS_OPTIONAL=$((base + 9))
SERVERTRUST_INTEROP_COMPRESSIBLE_FILE=$dir/www/interop.txt
SERVERTRUST_INTEROP_DROP_LOG=$dir/logs/drop.log
SERVERTRUST_INTEROP_ROOT=$pki/root.pem
SERVERTRUST_INTEROP_CLIENT_CERT=$pki/client.pem
SERVERTRUST_INTEROP_CLIENT_KEY=$pki/client.key
SERVERTRUST_INTEROP_CLIENT_ENCRYPTED_KEY=$pki/client-encrypted.key
SERVERTRUST_INTEROP_CLIENT_PKCS12=$pki/client.p12
SERVERTRUST_INTEROP_CLIENT_PASSPHRASE_FILE=$pki/client-key.passphrase
SERVERTRUST_INTEROP_INTERMEDIATE_PIN=sha256/$(spki intermediate.pem)
SERVERTRUST_INTEROP_ECDSA_LEAF_PIN=sha256/$(spki leaf-ecdsa.pem)
SERVERTRUST_INTEROP_RSA_LEAF_PIN=sha256/$(spki leaf-rsa.pem)
ENV
echo "nginx started (pid $(cat "$dir/nginx.pid")) on ports $((base + 1))-$((base + 4)), $((base + 6))-$((base + 9)); openssl ocsp (pid $(cat "$dir/ocsp.pid")) on $ocsp_port; see $dir/interop.env"
