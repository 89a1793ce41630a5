#!/usr/bin/env bash
# Handshake cost on this machine's TLS stack (#43): instructions per request under callgrind for
# ServerTrust and raw libcurl, the subset of profile.sh that compares Debian 12 (OpenSSL 3.0,
# libcurl 7.88) with Debian 13 (OpenSSL 3.5, libcurl 8.14), plus resumed handshakes.
#
#   Benchmarks/scripts/stacks.sh [OUT-DIR]   (after `swift build -c release --product
#                                             servertrust-bench` and `--product libcurl-bench`)
#
# Workloads: full handshakes (raw libcurl; ServerTrust default; pins + stapled OCSP), kept-alive
# requests (raw libcurl; ServerTrust pins + staple, global executor, as profile.sh), and resumed
# handshakes (a new connection per request to nginx.sh's session-cache port: raw libcurl;
# ServerTrust default; pins — a must-staple policy is left out, since a resumed session carries no
# staple and the guard then stops resuming). N1/N2 as profile.sh: 100/300 handshakes, 1000/3000
# kept-alive requests; (I(N2) - I(N1)) / (N2 - N1). With SERVERTRUST_BENCH_GROUPS=X25519 the
# server accepts X25519 alone (the client still makes an X25519MLKEM768 key share on OpenSSL
# 3.5); with SERVERTRUST_BENCH_CLIENT_GROUPS=X25519 the clients offer X25519 alone (OpenSSL's
# system_default Groups, through an OPENSSL_CONF of their own; neither libcurl nor ServerTrust sets
# groups). Ends with what nginx saw: key-exchange group and resumed or not, per port (tls.log).
set -euo pipefail
shopt -s inherit_errexit
export SERVERTRUST_BENCH_LOG_GROUPS=1
# shellcheck source=callgrind-setup.sh
. "$(dirname "${BASH_SOURCE[0]}")/callgrind-setup.sh"
callgrind_setup stacks.sh "${1:-$(dirname "${BASH_SOURCE[0]}")/../.build/stacks}" libcurl-bench servertrust-bench
pins=(--pin "$BENCH_LEAF_PIN" --pin "$BENCH_INTERMEDIATE_PIN")
if [ -n "${SERVERTRUST_BENCH_CLIENT_GROUPS:-}" ]; then
    printf 'openssl_conf = bench\n[bench]\nssl_conf = bench_ssl\n[bench_ssl]\nsystem_default = bench_groups\n[bench_groups]\nGroups = %s\n' \
        "$SERVERTRUST_BENCH_CLIENT_GROUPS" >"$out/client-groups.cnf"
    export OPENSSL_CONF=$out/client-groups.cnf
fi

instructions() {  # NAME N CMD…: the total of CMD --requests N under callgrind
    local name=$1 count=$2 output
    shift 2
    output=$(valgrind --tool=callgrind --callgrind-out-file="$out/$name-$count.out" "$@" --requests "$count" 2>&1) || {
        echo "stacks.sh: $name with --requests $count failed:" >&2
        grep -v '^==' <<<"$output" | tail -n 5 >&2
        return 1
    }
    awk '/Collected :/ { print $NF }' <<<"$output"
}
per_request() {  # NAME N1 N2 CMD…
    local name=$1 n1=$2 n2=$3 a b
    shift 3
    a=$(instructions "$name" "$n1" "$@")
    b=$(instructions "$name" "$n2" "$@")
    echo $(((b - a) / (n2 - n1)))
}
row() { printf '%-44s %12s %8s\n' "$1" "$2" "$(awk -v a="$2" -v b="$3" 'BEGIN { printf "%.2f", a / b }')"; }

lc=("$out/libcurl-bench")
st=("$out/servertrust-bench")
hs=https://localhost:$BENCH_HANDSHAKE_PORT/
h1=https://localhost:$BENCH_H1_PORT/
re=https://localhost:$BENCH_RESUME_PORT/
echo "OpenSSL $(openssl version | cut -d' ' -f2), $(curl --version | head -n 1 | cut -d' ' -f1-2), server groups: ${SERVERTRUST_BENCH_GROUPS:-default}, client groups: ${SERVERTRUST_BENCH_CLIENT_GROUPS:-default}"
lc_hs=$(per_request lc-handshake 100 300 "${lc[@]}" handshake "$hs" --cacert "$BENCH_ROOT")
st_hs=$(per_request st-handshake-default 100 300 "${st[@]}" handshake "$hs" --cacert "$BENCH_ROOT" --policy default)
st_full=$(per_request st-handshake-full 100 300 "${st[@]}" handshake "$hs" --cacert "$BENCH_ROOT" --policy pins-staple "${pins[@]}")
lc_ka=$(per_request lc-keepalive 1000 3000 "${lc[@]}" keepalive "$h1" --cacert "$BENCH_ROOT")
st_ka=$(per_request st-keepalive 1000 3000 "${st[@]}" keepalive "$h1" --cacert "$BENCH_ROOT" --policy pins-staple "${pins[@]}")
lc_re=$(per_request lc-resumed 100 300 "${lc[@]}" handshake "$re" --cacert "$BENCH_ROOT")
st_re=$(per_request st-resumed-default 100 300 "${st[@]}" handshake "$re" --cacert "$BENCH_ROOT" --policy default)
st_re_pins=$(per_request st-resumed-pins 100 300 "${st[@]}" handshake "$re" --cacert "$BENCH_ROOT" --policy pins "${pins[@]}")
printf '%-44s %12s %8s\n' workload instructions ÷libcurl
row "full handshake, raw libcurl" "$lc_hs" "$lc_hs"
row "full handshake, ServerTrust default" "$st_hs" "$lc_hs"
row "full handshake, ServerTrust pins + staple" "$st_full" "$lc_hs"
row "kept-alive request, raw libcurl" "$lc_ka" "$lc_ka"
row "kept-alive request, ServerTrust pins + staple" "$st_ka" "$lc_ka"
row "resumed handshake, raw libcurl" "$lc_re" "$lc_re"
row "resumed handshake, ServerTrust default" "$st_re" "$lc_re"
row "resumed handshake, ServerTrust pins" "$st_re_pins" "$lc_re"
echo "nginx saw (requests, port, protocol, group, r = resumed):"
sort "$work/logs/tls.log" | uniq -c
echo "callgrind files: $out"
