import BenchSupport
import Foundation
import ServerTrust

/// CRL costs for CRLs of several sizes, by the two ways ServerTrust takes local CRLs:
///
/// - `TrustAnchors(revocationLists:)`: OpenSSL's own CRL checking inside path validation.
///   `crl_load_ms_N` (parse + store build) and `crl_validation_us_N` (one `validatedChain()` on
///   a new trust, so nothing is cached between iterations).
/// - `RevocationTrustEvaluator(revocationLists:)` (CRL method, whole chain, no network) after
///   default validation: `crl_evaluator_load_ms_N` (parse + evaluator) and
///   `crl_evaluator_us_N` (one composite evaluation on a new trust).
///
/// `--crl-dir` holds what `run.sh` made with `openssl ca -gencrl`: `root.pem`,
/// `intermediate.pem`, `leaf.pem`, `root.crl.der` (empty) and `intermediate-N.crl.der` with N
/// revoked serials (the leaf not among them, so every lookup is a full search that finds
/// nothing, the common case).
///
/// `validation_us_no_crl` is the baseline: the per-handshake lookup cost is the difference. It is
/// a full path validation: a store without CRLs reuses the chain it validated for identical
/// certificates (`ValidatedChainCache`), so every baseline iteration asks with other (equally
/// permissive) options, a cache miss each time. Stores with CRLs never cache; the evaluator
/// rows run on `plain` anchors, so their default validation is a cache hit, as in a session.
enum CRLWorkload {
    static func run(_ options: Options) throws {
        guard let directory = options.extra["crl-dir"] else { Options.fail("crl needs --crl-dir") }
        let sizes = (options.extra["sizes"] ?? "1000,100000,1000000").split(separator: ",").compactMap { Int($0) }
        let seconds = options.seconds
        func file(_ name: String) -> String { directory + "/" + name }
        let root = try Certificate.certificates(contentsOfFile: file("root.pem"))
        let presented = try Certificate.certificates(contentsOfFile: file("leaf.pem"))
            + Certificate.certificates(contentsOfFile: file("intermediate.pem"))
        let rootCRL = try CertificateRevocationList(contentsOfFile: file("root.crl.der"))

        let plain = try TrustAnchors(root)
        let baseline = try perValidation(seconds: seconds, presented: presented, anchors: plain, missingTheCache: true)
        print("validation_us_no_crl \(format(baseline))")

        for size in sizes {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file("intermediate-\(size).crl.der"))))
            // Load: parse + store build, best of a few (the first also faults the pages in).
            var loads: [Double] = []
            var anchors: TrustAnchors?
            let repeats = size >= 1_000_000 ? 2 : 5
            for _ in 0..<repeats {
                let start = ContinuousClock.now
                let crl = try CertificateRevocationList(bytes: bytes)
                anchors = try TrustAnchors(root, revocationLists: [crl, rootCRL])
                loads.append(milliseconds(ContinuousClock.now - start))
            }
            print("crl_load_ms_\(size) \(format(loads.sorted()[loads.count / 2]))")
            let cost = try perValidation(seconds: seconds, presented: presented, anchors: anchors!)
            print("crl_validation_us_\(size) \(format(cost))")

            var evaluatorLoads: [Double] = []
            var evaluator: CompositeTrustEvaluator?
            for _ in 0..<repeats {
                let start = ContinuousClock.now
                let crl = try CertificateRevocationList(bytes: bytes)
                evaluator = try CompositeTrustEvaluator([
                    DefaultTrustEvaluator(),
                    RevocationTrustEvaluator(
                        options: RevocationOptions(
                            methods: .crl, requirePositiveResponse: true, networkAccessDisabled: true, scope: .wholeChain,
                            maximumCRLSize: CertificateRevocationList.maximumSize),
                        cache: RevocationCache(), revocationLists: [crl, rootCRL]),
                ])
                evaluatorLoads.append(milliseconds(ContinuousClock.now - start))
            }
            print("crl_evaluator_load_ms_\(size) \(format(evaluatorLoads.sorted()[evaluatorLoads.count / 2]))")
            let evaluated = try perEvaluation(seconds: seconds, presented: presented, anchors: plain, evaluator: evaluator!)
            print("crl_evaluator_us_\(size) \(format(evaluated))")
        }
    }

    /// Microseconds per evaluation of `evaluator` on a new `PeerTrust`.
    private static func perEvaluation(
        seconds: Double, presented: [Certificate], anchors: TrustAnchors, evaluator: any ServerTrustEvaluating
    ) throws -> Double {
        try evaluator.evaluate(PeerTrust(presentedChain: presented, anchors: anchors), forHost: "crl.servertrust.test")
        let clock = ContinuousClock()
        let end = clock.now + .milliseconds(Int(seconds * 1000))
        var count = 0
        let start = clock.now
        while count < 3 || clock.now < end {
            try evaluator.evaluate(PeerTrust(presentedChain: presented, anchors: anchors), forHost: "crl.servertrust.test")
            count += 1
        }
        return milliseconds(clock.now - start) * 1000 / Double(count)
    }

    /// Microseconds per `validatedChain()` on a new `PeerTrust`, for `seconds` (at least 3 runs).
    /// `missingTheCache`: each iteration with a maximum depth of its own (all far above the
    /// chain's), so the validated-chain cache never answers.
    private static func perValidation(
        seconds: Double, presented: [Certificate], anchors: TrustAnchors, missingTheCache: Bool = false
    ) throws -> Double {
        let first = PeerTrust(presentedChain: presented, anchors: anchors)
        _ = try first.validatedChain()  // warm-up, and proof the chain validates (not revoked)
        let clock = ContinuousClock()
        let end = clock.now + .milliseconds(Int(seconds * 1000))
        var count = 0
        let start = clock.now
        while count < 3 || clock.now < end {
            let options = PathValidationOptions(maximumDepth: missingTheCache ? 11 + count : 10)
            let trust = PeerTrust(presentedChain: presented, anchors: anchors, validationOptions: options)
            _ = try trust.validatedChain()
            count += 1
        }
        return milliseconds(clock.now - start) * 1000 / Double(count)
    }

    private static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    private static func format(_ value: Double) -> String { String(format: "%.2f", value) }
}
