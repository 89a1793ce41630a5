#!/usr/bin/env bash
# App Store signed-transaction verification (#52 item 8): ServerTrustPurchases'
# AppStoreSignedDataVerifier.verifyTransaction beside its crypto floor (one ES256 check of the
# signing input with the leaf's key, the base64url decodes it needs and one JSONSerialization
# decode of the payload) and beside Apple's SignedDataVerifier (app-store-server-library-swift),
# all three on the same JWS, offline (ours `revocation: .disabled`, Apple's
# `enableOnlineChecks: false`), in the sandbox environment, so Apple's verifier checks the chain.
#
#   Benchmarks/scripts/purchases.sh [--callgrind] [N] [ROUNDS]
#       N: timed verifications per run (default 2000; cold runs N/10), after 50 untimed ones
#       ROUNDS: interleaved wall-clock rounds (default 3; the order of the clients rotates)
#       --callgrind: instructions per verification instead, (I(N2) - I(N1)) / (N2 - N1) with
#       N1/N2 = 100/300 after the same 50-verification warm-up in each process, so start-up,
#       fixture reading, the warm-up and the first chain verification cancel.
#   APPLE_LIB (default /work/apple-lib): a copy of Apple's library, MIT, never vendored here.
#   OUT (default Benchmarks/.build-apple): the throwaway folder (git ignores .build-*/).
#
# The JWS and its root come from `purchases-bench write-fixture` (ServerTrustLab's AppStoreLab,
# a chain made like Apple's, P-384 root and intermediate, P-256 leaf): Apple's mock data cannot
# serve both, since Apple's tests trust testCA.der for it while its x5c[2] is another
# certificate (same name and key, version 1) that ServerTrust compares by bytes and refuses.
# Modes: steady state (one verifier, the same JWS each time: both verifiers remember a chain
# they have verified, so this is what a new transaction from the same signer costs) and cold
# (a new verifier for each verification, the chain verified every time). Also ours with hard-
# fail revocation on, the chain's OCSP answers (from `openssl ocsp`, asked in the warm-up)
# cached (warm), and legacy receipts: AppStoreReceiptVerifier on a ReceiptLab receipt beside
# its floor, one RSA PKCS#1 v1.5 SHA-256 check of the content (receipt, receipt-floor; Apple's
# library verifies no receipt, so there is no Apple row).
#
# Apple's Package.swift caps swift-crypto below 4.0.0; this script widens the cap in its own
# copy ("3.0.0"..<"5.0.0", which jwt-kit 5.x needs here) and builds a tiny package,
# apple-purchases-bench, beside it. Nothing of it is committed.
set -euo pipefail
shopt -s inherit_errexit
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
callgrind=0
if [ "${1:-}" = --callgrind ]; then callgrind=1; shift; fi
count=${1:-2000}
rounds=${2:-3}
apple_src=${APPLE_LIB:-/work/apple-lib}
out=$(mkdir -p "${OUT:-$here/.build-apple}" && cd "${OUT:-$here/.build-apple}" && pwd)

# Ours.
(cd "$here" && swift build -c release --product purchases-bench)
ours=$out/purchases-bench
cp "$here/.build/release/purchases-bench" "$ours"

# Apple's, in the throwaway folder: the library with the cap widened, and the bench package.
[ -f "$apple_src/Package.swift" ] || { echo "purchases.sh: no Apple library at $apple_src (APPLE_LIB)" >&2; exit 1; }
lib=$out/app-store-server-library-swift
# (Timestamps kept, and files rewritten only when they change, so a second run rebuilds nothing.)
# update FILE: FILE from standard input, unless it already holds that.
update() {
    local new
    new=$(cat)
    [ -f "$1" ] && [ "$(cat "$1")" = "$new" ] || printf '%s\n' "$new" >"$1"
}
mkdir -p "$lib"
rm -rf "$lib/Sources"
cp -R -p "$apple_src/Sources" "$apple_src/LICENSE.txt" "$lib/"
sed 's|"https://github.com/apple/swift-crypto.git", "1.0.0" ..< "4.0.0"|"https://github.com/apple/swift-crypto.git", "3.0.0" ..< "5.0.0"|' "$apple_src/Package.swift" | update "$lib/Package.swift"
grep -q '"3.0.0" ..< "5.0.0"' "$lib/Package.swift" || { echo "purchases.sh: Apple's swift-crypto cap not found in $lib/Package.swift" >&2; exit 1; }
bench=$out/apple-purchases-bench
mkdir -p "$bench/Sources/apple-purchases-bench"
update "$bench/Package.swift" <<'SWIFT'
// swift-tools-version:6.0
// Throwaway (scripts/purchases.sh writes it): Apple's SignedDataVerifier on ServerTrust's fixture.
import PackageDescription
let package = Package(
    name: "apple-purchases-bench",
    platforms: [.macOS(.v13)],
    dependencies: [.package(name: "AppStoreServerLibrary", path: "../app-store-server-library-swift")],
    targets: [.executableTarget(name: "apple-purchases-bench", dependencies: [.product(name: "AppStoreServerLibrary", package: "AppStoreServerLibrary")])],
    swiftLanguageModes: [.v5]
)
SWIFT
update "$bench/Sources/apple-purchases-bench/main.swift" <<'SWIFT'
// apple-purchases-bench apple|apple-cold --jws FILE --root DER [--bundle ID] [--count N] [--warmup W] [--time]
// The same protocol as purchases-bench: W + N verifications of the same JWS, each checked.
import AppStoreServerLibrary
import Foundation

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("apple-purchases-bench: " + message + "\n").utf8))
    exit(1)
}
var arguments = Array(CommandLine.arguments.dropFirst())
guard let mode = arguments.first, mode == "apple" || mode == "apple-cold" else { fail("mode: apple or apple-cold") }
arguments.removeFirst()
func number(_ text: String, _ name: String) -> Int {
    guard let n = Int(text), n >= 0 else { fail("\(name) needs a number") }
    return n
}
var jwsPath = "", rootPath = "", bundleID = "com.example.app", count = 1000, warmup = 50, timed = false
while !arguments.isEmpty {
    let name = arguments.removeFirst()
    guard name == "--time" || !arguments.isEmpty else { fail("\(name) needs a value") }
    switch name {
    case "--jws": jwsPath = arguments.removeFirst()
    case "--root": rootPath = arguments.removeFirst()
    case "--bundle": bundleID = arguments.removeFirst()
    case "--count": count = number(arguments.removeFirst(), name)
    case "--warmup": warmup = number(arguments.removeFirst(), name)
    case "--time": timed = true
    default: fail("unknown option \(name)")
    }
}
let jws = try String(contentsOfFile: jwsPath, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
let root = try Data(contentsOf: URL(fileURLWithPath: rootPath))
func makeVerifier() -> SignedDataVerifier {
    do {
        return try SignedDataVerifier(rootCertificates: [root], bundleId: bundleID, appAppleId: nil, environment: .sandbox, enableOnlineChecks: false)
    } catch { fail("verifier: \(error)") }
}
let shared = makeVerifier()
var expected: String?
func verify() async -> String {
    let verifier = mode == "apple" ? shared : makeVerifier()
    switch await verifier.verifyAndDecodeTransaction(signedTransaction: jws) {
    case .valid(let transaction):
        guard let id = transaction.transactionId, expected == nil || id == expected else { fail("wrong transactionId") }
        return id
    case .invalid(let error): fail("invalid: \(error)")
    }
}
// No async main: under valgrind 3.19 the main thread parked in dispatch_main crashes valgrind
// itself (SIGSEGV), so the work runs in a task and the main thread waits, then exits.
func run() async {
    expected = await verify()
    for _ in 1..<max(warmup, 1) { _ = await verify() }
    func now(_ clock: clockid_t) -> UInt64 {
        var t = timespec()
        clock_gettime(clock, &t)
        return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
    }
    let wall0 = now(CLOCK_MONOTONIC), cpu0 = now(CLOCK_PROCESS_CPUTIME_ID)
    for _ in 0..<count { _ = await verify() }
    let wall = now(CLOCK_MONOTONIC) - wall0, cpu = now(CLOCK_PROCESS_CPUTIME_ID) - cpu0
    if timed && count > 0 {
        print("wall_ns \(wall / UInt64(count))")
        print("cpu_ns \(cpu / UInt64(count))")
        print("per_second \(Int(Double(count) / (Double(wall) / 1e9)))")
    }
}
let done = DispatchSemaphore(value: 0)
Task.detached { await run(); done.signal() }
done.wait()
exit(0)
SWIFT
(cd "$bench" && swift build -c release --product apple-purchases-bench)
apple=$out/apple-purchases-bench-bin
cp "$bench/.build/release/apple-purchases-bench" "$apple"

# The fixture, minted once per run; both verifiers trust its root.
rm -rf "$out/fixture"
"$ours" write-fixture "$out/fixture" >/dev/null
# run CLIENT: the command line of CLIENT without counts.
run() {
    case $1 in
        ours | cold | floor | warm | receipt | receipt-floor) echo "$ours $1 --fixture $out/fixture" ;;
        apple | apple-cold) echo "$apple $1 --jws $out/fixture/transaction.jws --root $out/fixture/root.der --bundle com.example.app" ;;
    esac
}
clients=(floor ours warm cold apple apple-cold receipt-floor receipt)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

if [ "$callgrind" = 1 ]; then
    command -v valgrind >/dev/null || { echo "purchases.sh: valgrind is not installed" >&2; exit 1; }
    # valgrind 3.19 cannot read the DWARF 5 that Swift 6.3 writes: copies without debug information.
    strip --strip-debug "$ours" "$apple"
    # instructions CLIENT N: the total of CLIENT with --count N under callgrind.
    instructions() {
        local output cmd
        read -r -a cmd <<<"$(run "$1")"
        output=$(valgrind --tool=callgrind --callgrind-out-file="$out/$1-$2.out" "${cmd[@]}" --warmup 50 --count "$2" 2>&1) || {
            echo "purchases.sh: $1 with --count $2 failed:" >&2
            grep -v '^==' <<<"$output" | tail -n 5 >&2
            return 1
        }
        awk '/Collected :/ { print $NF }' <<<"$output"
    }
    declare -A per
    for client in "${clients[@]}"; do
        if [ "${client%cold}" != "$client" ]; then n1=20 n2=60; else n1=100 n2=300; fi
        a=$(instructions "$client" "$n1")
        b=$(instructions "$client" "$n2")
        per[$client]=$(((b - a) / (n2 - n1)))
    done
    echo "instructions per verification (callgrind; N1/N2 = 100/300 steady, 20/60 cold, after 50 in-process warm-up verifications)"
    printf '%-52s %14s %10s %10s\n' client instructions "÷ floor" "÷ ours"
    printf '%-52s %14s %10s %10s\n' "floor: ES256 + base64url + JSONSerialization" "${per[floor]}" 1.00 "$(ratio "${per[floor]}" "${per[ours]}")"
    printf '%-52s %14s %10s %10s\n' "ServerTrust verifyTransaction, steady" "${per[ours]}" "$(ratio "${per[ours]}" "${per[floor]}")" 1.00
    printf '%-52s %14s %10s %10s\n' "ServerTrust, revocation on, answers cached" "${per[warm]}" "$(ratio "${per[warm]}" "${per[floor]}")" "$(ratio "${per[warm]}" "${per[ours]}")"
    printf '%-52s %14s %10s %10s\n' "Apple SignedDataVerifier, steady" "${per[apple]}" "$(ratio "${per[apple]}" "${per[floor]}")" "$(ratio "${per[apple]}" "${per[ours]}")"
    printf '%-52s %14s %10s %10s\n' "ServerTrust, cold (new verifier each)" "${per[cold]}" "$(ratio "${per[cold]}" "${per[floor]}")" 1.00
    printf '%-52s %14s %10s %10s\n' "Apple, cold (new verifier each)" "${per[apple-cold]}" "$(ratio "${per[apple-cold]}" "${per[floor]}")" "$(ratio "${per[apple-cold]}" "${per[cold]}")"
    printf '%-52s %14s %10s %10s\n' "receipt floor: RSA PKCS#1 v1.5 SHA-256 check" "${per[receipt-floor]}" 1.00 "$(ratio "${per[receipt-floor]}" "${per[receipt]}")"
    printf '%-52s %14s %10s %10s\n' "ServerTrust AppStoreReceiptVerifier.verify" "${per[receipt]}" "$(ratio "${per[receipt]}" "${per[receipt-floor]}")" 1.00
    echo "(cold rows: ÷ ours is ÷ ServerTrust cold; receipt rows: ÷ floor is ÷ the receipt floor, ÷ ours ÷ the receipt verifier)"
    echo "callgrind files: $out (callgrind_annotate --inclusive=yes FILE | swift demangle)"
    exit 0
fi

# Wall clock: ROUNDS interleaved rounds, the order rotating; medians.
: >"$out/wall.txt"
for round in $(seq "$rounds"); do
    order=("${clients[@]:$((round % ${#clients[@]}))}" "${clients[@]:0:$((round % ${#clients[@]}))}")
    for client in "${order[@]}"; do
        read -r -a cmd <<<"$(run "$client")"
        n=$count
        if [ "${client%cold}" != "$client" ]; then n=$((count / 10)); fi
        "${cmd[@]}" --warmup 50 --count "$n" --time | awk -v c="$client" -v r="$round" 'NF == 2 { print c, r, $1, $2 }' >>"$out/wall.txt"
    done
done
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "NA"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
value() { awk -v c="$1" -v k="$2" '$1 == c && $3 == k { print $4 }' "$out/wall.txt" | median; }
echo "wall clock, $rounds interleaved rounds of $count (cold: $((count / 10))) after 50 warm-up, load average $(cut -d' ' -f1-3 /proc/loadavg); medians"
printf '%-40s %14s %10s %10s %10s %10s\n' client "verif./s" "wall µs" "CPU µs" "CPU÷floor" "CPU÷ours"
for client in "${clients[@]}"; do
    cpu=$(value "$client" cpu_ns)
    base=ours floor=floor
    [ "${client%cold}" != "$client" ] && base=cold
    [ "${client#receipt}" != "$client" ] && base=receipt floor=receipt-floor
    printf '%-40s %14s %10.1f %10.1f %10s %10s\n' "$client" "$(value "$client" per_second)" "$(awk -v v="$(value "$client" wall_ns)" 'BEGIN { print v / 1000 }')" \
        "$(awk -v v="$cpu" 'BEGIN { print v / 1000 }')" "$(ratio "$cpu" "$(value "$floor" cpu_ns)")" "$(ratio "$cpu" "$(value "$base" cpu_ns)")"
done
echo "(cold rows: CPU÷ours is ÷ ServerTrust cold; receipt rows: ÷ the receipt floor and the receipt verifier)"
