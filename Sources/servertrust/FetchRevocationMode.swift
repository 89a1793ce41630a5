import ArgumentParser
import ServerTrust

/// `fetch --revocation`: whether and how the URL's host is checked for revocation.
enum FetchRevocationMode: String, ExpressibleByArgument, CaseIterable {
    /// No revocation check.
    case off
    /// Stapled OCSP, then live OCSP, then CRL; a revoked certificate rejects, unknown is accepted.
    case soft
    /// As `soft`, but only a verified "good" passes (`requirePositiveResponse`).
    case hard

    /// `base` with revocation checking added, or `base` itself for `off`.
    func evaluator(wrapping base: any ServerTrustEvaluating) throws -> any ServerTrustEvaluating {
        switch self {
        case .off: base
        case .soft: try CompositeTrustEvaluator([base, RevocationTrustEvaluator(options: .softFail)])
        case .hard: try CompositeTrustEvaluator([base, RevocationTrustEvaluator(options: .hardFail)])
        }
    }
}
