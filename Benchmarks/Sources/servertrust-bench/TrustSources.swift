import BenchSupport
import Foundation
import ServerTrust
import ServerTrustHTTP

/// Where a workload's session takes its trust manager from, and the deny-list that manager
/// holds (issue #35: trust updates):
///
/// - `--trust compiled` (the default): `Session(configuration:trustManager:)`, the manager
///   given once — the compiled-in policy.
/// - `--trust live`: a ``LiveTrustManager`` whose first manager is replaced once, after the
///   session is made, by a manager built the same way: every request runs under generation 2,
///   the policy "from an update" (the session remakes its tables at its first request, a
///   one-off that the two-count difference of profile.sh and trust-updates.sh cancels).
/// - `--deny-list K,C`: the manager (each one, for `live`) holds a ``KeyDenyList`` of K SPKI
///   hashes and C issuer + serial entries, none of which lists a certificate of the benchmark
///   chain, so every evaluation checks them all and passes; `0,0` (the default) is the empty
///   list, whose check returns at once.
enum TrustSources {
    static func session(
        _ options: Options, configuration: Session.Configuration, host: String, policy: Policy
    ) throws -> Session {
        let denyList = try self.denyList(options.extra["deny-list"] ?? "0,0")
        let hostPolicy = HostPolicy.custom(policy.evaluator, certificateTransparency: policy.certificateTransparency?.requirement)
        let make = {
            try ServerTrustManager(
                policies: [try HostPattern(host): hostPolicy], denyList: denyList, certificateTransparencyLogs: policy.certificateTransparency?.logs)
        }
        switch options.extra["trust"] {
        case nil, "compiled":
            return try Session(configuration: configuration, trustManager: make())
        case "live":
            let live = LiveTrustManager(try make())
            let session = try Session(configuration: configuration, liveTrustManager: live)
            guard live.replace(with: try make()) == 2 else { Options.fail("the replaced manager is not generation 2") }
            return session
        case let other?:
            Options.fail("--trust is compiled or live, not \(other)")
        }
    }

    /// `K,C`: K SPKI hashes and C issuer + serial entries, the same for every run.
    static func denyList(_ spelling: String) throws -> KeyDenyList {
        let counts = spelling.split(separator: ",").compactMap { Int($0) }
        guard counts.count == 2, counts.allSatisfy({ $0 >= 0 }) else { Options.fail("--deny-list is K,C (SPKI hashes, issuer+serial entries), not \(spelling)") }
        var random = SplitMix(seed: 35)
        var keys = Set<Pin>()
        while keys.count < counts[0] {
            let digest = (0..<4).flatMap { _ in withUnsafeBytes(of: random.next()) { Array($0) } }
            keys.insert(try Pin("sha256/" + Data(digest).base64EncodedString()))
        }
        // Issuers of the benchmark chain (nginx.sh), so an entry differs from a chain's
        // certificate by its serial number only: the check compares every entry's serial.
        let issuers = ["CN=Bench Intermediate,O=ServerTrust Bench", "CN=Bench Root,O=ServerTrust Bench"]
        var certificates = Set<KeyDenyList.IssuerAndSerial>()
        while certificates.count < counts[1] {
            let serial = String(random.next(), radix: 16, uppercase: true) + String(random.next(), radix: 16, uppercase: true)
            certificates.insert(try KeyDenyList.IssuerAndSerial(issuer: issuers[certificates.count % 2], serial: serial))
        }
        return KeyDenyList(keys: keys, certificates: certificates)
    }

    /// A fixed sequence of 64-bit values (SplitMix64), so every run lists the same entries.
    struct SplitMix {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
