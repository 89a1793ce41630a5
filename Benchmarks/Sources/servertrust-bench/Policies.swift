import BenchSupport
import Foundation
import ServerTrust

/// An evaluator under test, with what runs before each request and what is printed at the end,
/// and the host's Certificate Transparency requirement with the manager's log list, if any.
struct Policy {
    let evaluator: any ServerTrustEvaluating
    let prepare: @Sendable () -> Void
    let report: () -> Void
    var certificateTransparency: (requirement: CertificateTransparencyRequirement, logs: CertificateTransparencyLogs)? = nil
}

/// The policies the handshake workloads compare.
///
/// - `default`: ``DefaultTrustEvaluator``.
/// - `pins`: SPKI pins (`--pin`, leaf and intermediate) on top of default validation.
/// - `pins-staple`: pins, then the stapled OCSP response, required good:
///   `RevocationTrustEvaluator(options: .stapleRequired)` — the "full evaluation".
/// - `pins-ocsp-warm`, `pins-ocsp-cold`: pins, then live OCSP (hard-fail) through the session's
///   own fetcher (`CurlRevocationFetcher`), with a cache that is kept (warm: one fetch, then
///   hits) or emptied before every request (cold: one fetch per handshake). Run these against
///   the port that staples nothing, so every answer has to come from the responder or the cache.
/// - `pins-ct`: pins, and Certificate Transparency enforced (`HostPolicy.certificateTransparency`)
///   with the v3 log list `--ct-log-list FILE` (nginx.sh's `ct-log-list.json`), loaded into
///   OpenSSL once, before the first request (a warm log store). Run it, and `pins` beside it,
///   against nginx.sh's CT port, whose leaf embeds SCTs from those logs: the only difference
///   between the two is CT.
enum Policies {
    static func make(_ name: String, pins: [String], options: Options) throws -> Policy {
        let pinned = { try PinnedKeyHashesTrustEvaluator(pins) }
        switch name {
        case "default":
            return Policy(evaluator: DefaultTrustEvaluator(), prepare: {}, report: {})
        case "pins":
            return Policy(evaluator: try pinned(), prepare: {}, report: {})
        case "pins-ct":
            guard let file = options.extra["ct-log-list"] else { Options.fail("pins-ct needs --ct-log-list FILE") }
            let list = try CTLogList(json: [UInt8](Data(contentsOf: URL(fileURLWithPath: file))), fileName: file)
            return Policy(
                evaluator: try pinned(), prepare: {}, report: {},
                certificateTransparency: (.enforced(), try CertificateTransparencyLogs(list)))
        case "pins-staple":
            let staple = RevocationTrustEvaluator(options: .stapleRequired)
            return Policy(evaluator: try CompositeTrustEvaluator([try pinned(), staple]), prepare: {}, report: {})
        case "pins-ocsp-warm", "pins-ocsp-cold":
            let cache = RevocationCache(failureBackoff: .zero)
            let live = RevocationTrustEvaluator(
                options: RevocationOptions(methods: .ocsp, requirePositiveResponse: true, timeBudget: .seconds(2)),
                cache: cache)
            let cold = name == "pins-ocsp-cold"
            return Policy(
                evaluator: try CompositeTrustEvaluator([try pinned(), live]),
                prepare: { if cold { cache.removeAll() } },
                report: {
                    let statistics = cache.statistics
                    note("\(name): \(statistics.fetches) fetches, \(statistics.hits) cache hits, \(statistics.misses) misses")
                })
        default:
            Options.fail("unknown policy \(name)")
        }
    }

    static func note(_ text: String) { FileHandle.standardError.write(Data("servertrust-bench: \(text)\n".utf8)) }
}
