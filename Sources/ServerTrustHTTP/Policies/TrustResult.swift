public import ServerTrust

/// The trust outcome of one response, read the same way as ``ResponseVerification``.
///
/// An enforced failure never produces a response (the session throws), so ``failed(_:)`` on a
/// response means a report-only failure: an `InformationalTrustEvaluator` whose evaluator
/// rejected the server, or an expired pin set that fell back to default validation. A canary
/// disagreement does not change the result — the enforced policy decided — but is reported.
public enum TrustResult: Hashable, Sendable, CustomStringConvertible {
    /// Nothing was evaluated: a plain-HTTP hop (``Session/Configuration/allowsPlainHTTP``).
    case notRequested
    /// Every evaluator of the host's policy accepted the server.
    case verified
    /// An evaluator rejected the server; the `TrustError` says which and why.
    case failed(TrustError)

    /// Whether every evaluator accepted the server.
    public var isVerified: Bool { self == .verified }

    public var description: String {
        switch self {
        case .notRequested: "not requested"
        case .verified: "verified"
        case .failed(let error): "failed (\(error.code)): \(error.reason)"
        }
    }
}
