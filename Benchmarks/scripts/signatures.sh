#!/usr/bin/env bash
# Verification of signed responses (#36): RFC 9421 beside v1, both ServerTrust, at 1 KiB and
# 1 MiB bodies, and RFC 9421 beside the Python library http-message-signatures 3.0.0 verifying
# the very same responses, in one run.
#
#   Benchmarks/scripts/signatures.sh [OUT-DIR] [WALL-RUNS]   (after `swift build -c release
#                                    --product signature-bench` in Benchmarks/; WALL-RUNS
#                                    default 7, 0 for none; ALGS="ed25519 ecdsa-p256 rsa-pss"
#                                    adds RFC 9421 rows for the other keys, default ed25519)
#
# Instructions (callgrind), as trust-updates.sh counts requests: signature-bench pre-signs
# P = N2 responses for N2 distinct nonces and verifies N of them, each once, with the client's
# one verifier (replay cache included); runs with N1 and N2 do the same start-up and the same
# preparation, so (I(N2) - I(N1)) / (N2 - N1) is one verification. The RFC 9421 keys are made
# once by `openssl genpkey` and read with --key: an RSA key generation in each process would
# not cancel (its instruction count varies by millions). N1/N2 = 100/300 at 1 KiB,
# 10/30 at 1 MiB. Each row is split into the signature check (EVP_DigestVerify, inclusive) and
# the SHA-256 and SHA-512 block functions (self), found by running `openssl dgst` on 1 MiB
# under callgrind, since Debian's libcrypto has no symbols for them. Under valgrind OpenSSL
# runs without SHA-NI, so these counts weigh SHA-256 more than this CPU does natively.
#
# Then WALL-RUNS interleaved rounds of wall-clock and CPU time per verification (supporting
# evidence; the order of the two schemes and of the two sizes rotates from round to round):
# ours v1; ours RFC 9421, which first exports its prepared responses (`--export`); the
# Python library on that export (Benchmarks/rfc9421/bench.py), right after. 1 KiB: 50 warm-up
# + 1,000 timed verifications; 1 MiB: 5 + 100. Each ratio is the median over rounds of the
# per-round ratio. The .out files stay in OUT-DIR for `callgrind_annotate --inclusive=yes FILE
# | swift demangle`.
set -euo pipefail
shopt -s inherit_errexit
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
repo=$(cd "$here/.." && pwd)
out=$(mkdir -p "${1:-$here/.build/signatures}" && cd "${1:-$here/.build/signatures}" && pwd)
wall_runs=${2:-7}
read -r -a algs <<<"${ALGS:-ed25519}"
command -v valgrind >/dev/null || { echo "signatures.sh: valgrind is not installed" >&2; exit 1; }
[ -x "$here/.build/release/signature-bench" ] || { echo "signatures.sh: build first (swift build -c release --product signature-bench)" >&2; exit 1; }
# valgrind 3.19 cannot read the DWARF 5 that Swift 6.3 writes: a copy without debug information.
cp "$here/.build/release/signature-bench" "$out/signature-bench"
strip --strip-debug "$out/signature-bench"
bench=("$out/signature-bench")
python=${PYTHON:-$repo/.venv-tuf/bin/python}
if [ "$wall_runs" -gt 0 ] && [ -z "${PYTHON:-}" ] && [ ! -x "$python" ]; then "$repo/scripts/setup.sh"; fi

# block_function ALGORITHM: the callgrind name of libcrypto's block function for ALGORITHM.
block_function() {
    head -c 1048576 /dev/zero >"$out/zero.bin"
    valgrind --tool=callgrind --callgrind-out-file="$out/dgst-$1.out" openssl dgst "-$1" "$out/zero.bin" >/dev/null 2>&1
    callgrind_annotate "$out/dgst-$1.out" 2>/dev/null | awk '/^ *[0-9,]+ \(/ && !/PROGRAM TOTALS/ && !done { sub(/^ *[0-9,]+ \([ 0-9.]+%\)  /, ""); print; done = 1 }'
}
for alg in "${algs[@]}"; do
    case $alg in
        ed25519) key_options=(-algorithm ed25519) ;;
        ecdsa-p256) key_options=(-algorithm EC -pkeyopt ec_paramgen_curve:P-256) ;;
        rsa-pss) key_options=(-algorithm RSA -pkeyopt rsa_keygen_bits:3072) ;;
        *) echo "signatures.sh: ALGS holds ed25519, ecdsa-p256 and rsa-pss, not $alg" >&2; exit 1 ;;
    esac
    openssl genpkey "${key_options[@]}" -out "$out/key-$alg.pem" 2>/dev/null
done
sha256_fn=$(block_function sha256)
sha512_fn=$(block_function sha512)

# instructions NAME N P ARGS…: signature-bench ARGS --count N --prepare P under callgrind; the total.
instructions() {
    local name=$1 count=$2 prepare=$3 output
    shift 3
    output=$(valgrind --tool=callgrind --callgrind-out-file="$out/$name-$count.out" "${bench[@]}" "$@" --count "$count" --prepare "$prepare" 2>&1) || {
        echo "signatures.sh: $name with --count $count failed:" >&2
        grep -v '^==' <<<"$output" | tail -n 5 >&2
        return 1
    }
    awk '/Collected :/ { print $NF }' <<<"$output"
}
# (The awk programs read to the end: an early exit would stop callgrind_annotate with SIGPIPE.)
# cost FILE FUNCTION [inclusive]: FUNCTION's instructions in FILE (self, or inclusive), 0 if absent.
cost() {
    callgrind_annotate ${3:+--inclusive=yes} --threshold=100 "$1" 2>/dev/null |
        awk -v f="$2" '{ line = $0; sub(/^ *[0-9,]+ \([ 0-9.]+%\)  /, "", line) } line == f && !found { gsub(",", "", $1); print $1; found = 1 } END { if (!found) print 0 }'
}
# row NAME N1 N2 ARGS…: one row of the instruction table; sets per_verification.
row() {
    local name=$1 n1=$2 n2=$3 a b
    shift 3
    a=$(instructions "$name" "$n1" "$n2" "$@")
    b=$(instructions "$name" "$n2" "$n2" "$@")
    per_verification=$(((b - a) / (n2 - n1)))
    local f1=$out/$name-$n1.out f2=$out/$name-$n2.out d=$((n2 - n1)) verify s256 s512
    verify=$((($(cost "$f2" "???:EVP_DigestVerify [$libcrypto]" inclusive) - $(cost "$f1" "???:EVP_DigestVerify [$libcrypto]" inclusive)) / d))
    s256=$((($(cost "$f2" "$sha256_fn") - $(cost "$f1" "$sha256_fn")) / d))
    s512=$((($(cost "$f2" "$sha512_fn") - $(cost "$f1" "$sha512_fn")) / d))
    printf '%-26s %14s %14s %12s %12s %12s\n' "$name" "$per_verification" "$verify" "$s256" "$s512" "$((per_verification - verify - s256 - s512))"
}
libcrypto=$(sed -n 's/.*\[\(.*libcrypto[^]]*\)\].*/\1/p' <<<"$sha256_fn")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

echo "instructions per verification (callgrind; N1/N2 = 100/300 at 1 KiB, 10/30 at 1 MiB; columns after the total are parts of it)"
printf '%-26s %14s %14s %12s %12s %12s\n' case total "EVP_DigestVerify" "SHA-256" "SHA-512" rest
declare -A total
for size in 1k 1m; do
    if [ "$size" = 1k ]; then n1=100 n2=300; else n1=10 n2=30; fi
    row "v1-$size" "$n1" "$n2" --scheme v1 --size "$size"
    total[v1-$size]=$per_verification
    for alg in "${algs[@]}"; do
        row "rfc9421-$alg-$size" "$n1" "$n2" --scheme rfc9421 --key "$out/key-$alg.pem" --size "$size"
        total[rfc9421-$alg-$size]=$per_verification
    done
done
for alg in "${algs[@]}"; do
    for size in 1k 1m; do
        printf 'ratio RFC 9421 (%s) / v1, %s: %s\n' "$alg" "$size" "$(ratio "${total[rfc9421-$alg-$size]}" "${total[v1-$size]}")"
    done
done
printf 'ratio 1 MiB / 1 KiB: v1 %s' "$(ratio "${total[v1-1m]}" "${total[v1-1k]}")"
for alg in "${algs[@]}"; do printf ', RFC 9421 (%s) %s' "$alg" "$(ratio "${total[rfc9421-$alg-1m]}" "${total[rfc9421-$alg-1k]}")"; done
echo
echo "callgrind files: $out"

[ "$wall_runs" -gt 0 ] || exit 0
# sample CLIENT SIZE RUN ARGS…: appends `CLIENT SIZE RUN KEY VALUE` for each line printed.
sample() {
    local client=$1 size=$2 run=$3
    shift 3
    "$@" | awk -v c="$client" -v s="$size" -v r="$run" 'NF == 2 { print c, s, r, $1, $2 }' >>"$out/wall.txt"
}
timing() { if [ "$1" = 1k ]; then echo "--warmup 50 --count 1000"; else echo "--warmup 5 --count 100"; fi; }
# ours_v1 SIZE RUN; ours_rfc9421_and_python SIZE RUN: one sample of each client.
ours_v1() {
    local counts
    read -r -a counts <<<"$(timing "$1")"
    sample v1 "$1" "$2" "${bench[@]}" --scheme v1 --size "$1" "${counts[@]}" --time
}
ours_rfc9421_and_python() {
    local counts alg
    read -r -a counts <<<"$(timing "$1")"
    for alg in "${algs[@]}"; do
        sample "rfc9421-$alg" "$1" "$2" "${bench[@]}" --scheme rfc9421 --key "$out/key-$alg.pem" --size "$1" "${counts[@]}" --time --export "$out/export-$alg-$1"
        sample "python-$alg" "$1" "$2" "$python" "$here/rfc9421/bench.py" "$out/export-$alg-$1"
    done
}
: >"$out/wall.txt"
for run in $(seq "$wall_runs"); do
    sizes=(1k 1m)
    ((run % 2)) || sizes=(1m 1k)
    for index in 0 1; do
        size=${sizes[$index]}
        if (((run / 2 + index) % 2)); then
            ours_v1 "$size" "$run"; ours_rfc9421_and_python "$size" "$run"
        else
            ours_rfc9421_and_python "$size" "$run"; ours_v1 "$size" "$run"
        fi
    done
done
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "NA"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
value() { awk -v c="$1" -v s="$2" -v k="$3" '$1 == c && $2 == s && $4 == k { print $5 / 1000 }' "$out/wall.txt" | median; }
wall_ratio() {  # A B SIZE KEY: median over rounds of A's KEY ÷ B's
    awk -v a="$1" -v b="$2" -v s="$3" -v k="$4" '$2 == s && $4 == k && $1 == a { A[$3] = $5 } $2 == s && $4 == k && $1 == b { B[$3] = $5 }
        END { for (r in A) if ((r in B) && B[r] > 0) print A[r] / B[r] }' "$out/wall.txt" | median
}
echo "wall clock (supporting), $wall_runs interleaved rounds, load average $(cut -d' ' -f1-3 /proc/loadavg); µs per verification, medians"
printf '%-32s %5s %10s %10s %14s %14s %14s %14s\n' client size "wall µs" "CPU µs" "wall ÷ v1" "CPU ÷ v1" "wall ÷ Python" "CPU ÷ Python"
for size in 1k 1m; do
    printf '%-32s %5s %10.1f %10.1f\n' "ServerTrust v1" "$size" "$(value v1 "$size" wall_ns)" "$(value v1 "$size" cpu_ns)"
    for alg in "${algs[@]}"; do
        printf '%-32s %5s %10.1f %10.1f %14.3f %14.3f %14.3f %14.3f\n' "ServerTrust RFC 9421 $alg" "$size" \
            "$(value "rfc9421-$alg" "$size" wall_ns)" "$(value "rfc9421-$alg" "$size" cpu_ns)" \
            "$(wall_ratio "rfc9421-$alg" v1 "$size" wall_ns)" "$(wall_ratio "rfc9421-$alg" v1 "$size" cpu_ns)" \
            "$(wall_ratio "rfc9421-$alg" "python-$alg" "$size" wall_ns)" "$(wall_ratio "rfc9421-$alg" "python-$alg" "$size" cpu_ns)"
        printf '%-32s %5s %10.1f %10.1f\n' "Python $alg" "$size" "$(value "python-$alg" "$size" wall_ns)" "$(value "python-$alg" "$size" cpu_ns)"
    done
done
