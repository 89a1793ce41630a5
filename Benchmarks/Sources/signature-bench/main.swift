import Foundation
import ServerTrust

// Verification of signed responses, v1 beside RFC 9421 (issue #36):
//
//   signature-bench --scheme v1|rfc9421 --size 1k|1m [--count N] [--warmup K] [--prepare P]
//                   [--alg ed25519|ecdsa-p256|rsa-pss | --key PEM-FILE] [--time] [--export DIR]
//
// Prepares P (default K + N) responses to P requests of one client, each signed for its own
// request's nonce, over one body of the given size; then verifies K of them untimed and the
// next N, each once, with the client's one verifier — as a session does, replay cache
// included. Preparation (keys, signing) is done before any verification and does not grow
// with N for a fixed P, so under callgrind two runs with the same P and N1, N2 give the
// instructions of one verification as (I(N2) - I(N1)) / (N2 - N1) (scripts/signatures.sh).
//
// --time prints `wall_ns W` and `cpu_ns C` per measured verification (CPU = the process's
// user + system time). --export DIR (rfc9421 only) writes the prepared responses first —
// DIR/responses.json (each request with its Accept-Signature, status, fields, nonce; the
// key's PEM; the warm-up count) and DIR/body.bin — so that rfc9421/bench.py verifies the very
// same responses with the Python library. --alg chooses the RFC 9421 key, generated at start
// (v1 is Ed25519); --key reads it instead, which callgrind runs need for RSA: the instructions
// of an RSA key generation vary from run to run by millions and would not cancel.

struct BenchOptions {
    var scheme = ""
    var size = 1024
    var count = 100
    var warmup = 0
    var prepare: Int?
    var algorithm = "ed25519"
    var keyFile: String?
    var time = false
    var export: String?

    init(arguments: [String] = Array(CommandLine.arguments.dropFirst())) {
        var rest = arguments[...]
        while let option = rest.popFirst() {
            if option == "--time" {
                time = true
                continue
            }
            guard let value = rest.popFirst() else { Self.fail("option \(option) needs a value") }
            switch option {
            case "--scheme": scheme = value
            case "--size":
                switch value {
                case "1k": size = 1024
                case "1m": size = 1024 * 1024
                default: size = Self.number(value, option)
                }
            case "--count": count = Self.number(value, option)
            case "--warmup": warmup = Self.number(value, option)
            case "--prepare": prepare = Self.number(value, option)
            case "--alg": algorithm = value
            case "--key": keyFile = value
            case "--export": export = value
            default: Self.fail("unknown option \(option)")
            }
        }
        guard ["v1", "rfc9421"].contains(scheme) else { Self.fail("--scheme is v1 or rfc9421") }
        guard (prepare ?? warmup + count) >= warmup + count else { Self.fail("--prepare must be at least --warmup + --count") }
        guard export == nil || scheme == "rfc9421" else { Self.fail("--export writes RFC 9421 responses only") }
        guard scheme == "rfc9421" || (algorithm == "ed25519" && keyFile == nil) else { Self.fail("v1 signs with a generated Ed25519 key only") }
    }

    var kind: SignaturePublicKey.Kind {
        switch algorithm {
        case "ed25519": .ed25519
        case "ecdsa-p256": .ecdsaP256
        case "rsa-pss": .rsa
        default: Self.fail("--alg is ed25519, ecdsa-p256 or rsa-pss")
        }
    }

    static func number(_ text: String, _ option: String) -> Int {
        guard let value = Int(text), value >= 0 else { fail("\(option) needs a number, not \(text)") }
        return value
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("signature-bench: \(message)\n".utf8))
        exit(2)
    }
}

func nanoseconds(_ clock: clockid_t) -> Int64 {
    var time = timespec()
    clock_gettime(clock, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}

let options = BenchOptions()
let body = benchBody(size: options.size)
let prepared = options.prepare ?? (options.warmup + options.count)
do {
    let set: any SignedResponseSet
    if options.scheme == "v1" {
        set = try V1Responses(count: prepared, body: body)
    } else {
        let key = try options.keyFile.map { try SignaturePrivateKey(pem: String(contentsOfFile: $0, encoding: .utf8)) }
            ?? SignaturePrivateKey.generate(options.kind)
        let responses = try RFC9421Responses(count: prepared, body: body, key: key)
        if let directory = options.export {
            try Export.write(responses, warmup: options.warmup, count: options.count, to: directory)
        }
        set = responses
    }
    for index in 0..<options.warmup { try set.verify(index) }
    let wall = nanoseconds(CLOCK_MONOTONIC)
    let cpu = nanoseconds(CLOCK_PROCESS_CPUTIME_ID)
    for index in options.warmup..<(options.warmup + options.count) { try set.verify(index) }
    let wallNs = nanoseconds(CLOCK_MONOTONIC) - wall
    let cpuNs = nanoseconds(CLOCK_PROCESS_CPUTIME_ID) - cpu
    if options.time, options.count > 0 {
        print("wall_ns", wallNs / Int64(options.count))
        print("cpu_ns", cpuNs / Int64(options.count))
    }
} catch {
    BenchOptions.fail("\(error)")
}
