#!/usr/bin/env bash
# libcurl 7.88's own instructions per kept-alive request for each choice ServerTrust's session
# makes (scripts/curl-floor.c), under callgrind: (I(3000) - I(1000)) / 2000 per option set, each
# set adding one choice to the one before. What no Swift client over this libcurl can go below.
#
#   Benchmarks/scripts/curl-floor.sh      (needs gcc, libcurl4-openssl-dev, valgrind, nginx)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(mktemp -d /tmp/curl-floor.XXXXXX)
trap '"$here/nginx.sh" stop "$out/nginx" >/dev/null 2>&1 || true; rm -rf "$out"' EXIT
command -v valgrind >/dev/null || { echo "curl-floor.sh: valgrind is not installed" >&2; exit 1; }
gcc -O2 -o "$out/curl-floor" "$here/scripts/curl-floor.c" -lcurl
"$here/nginx.sh" start "$out/nginx" >/dev/null
# shellcheck disable=SC1091
. "$out/nginx/bench.env"
url=https://localhost:$BENCH_H1_PORT/
instructions() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$out/curl-floor" "$url" "$BENCH_ROOT" "$1" "$2" 2>&1 \
        | awk '/Collected :/ { print $NF }'
}
printf '%-12s %-70s %12s %8s\n' flags "what is added" instructions "÷ easy"
base=0
while read -r flags what; do
    [ "$flags" = - ] && flags=""
    a=$(instructions 1000 "$flags")
    b=$(instructions 3000 "$flags")
    per=$(((b - a) / 2000))
    [ "$base" = 0 ] && base=$per
    printf '%-12s %-70s %12s %8s\n' "${flags:--}" "$what" "$per" "$(awk -v a="$per" -v b="$base" 'BEGIN { printf "%.3f", a / b }')"
done <<'SETS'
- curl_easy_perform loop (libcurl-bench keepalive)
m the multi interface, one transfer added and removed per request
mu + User-Agent (CURLOPT_USERAGENT)
mU  User-Agent as a CURLOPT_HTTPHEADER line instead
muh + header callback
muhs + share handle for TLS sessions
muhsl + CURLOPT_MAXLIFETIME_CONN
muhslp + CURLOPT_PREREQFUNCTION
muhslpo + the per-request options (EasyHandleConfigurator.prepare)
muhslpoa + ACCEPT_ENCODING NULL, HTTP_CONTENT_DECODING 0: a session's choices before #17
mUhslpoa the same with the User-Agent as a header line: a session's choices now
SETS
