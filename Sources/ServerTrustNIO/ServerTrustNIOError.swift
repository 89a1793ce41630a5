#if NIOAdapter
public import NIOSSL
public import ServerTrust

/// Why ServerTrustNIO refused a server: the `TrustError` and where it came from.
///
/// A verification callback fails its promise with this error, but swift-nio-ssl keeps only
/// "failed" and reports `NIOSSLError.handshakeFailed` (BoringSSL's `CERTIFICATE_VERIFY_FAILED`)
/// to the pipeline. ``ServerTrustGuardHandler``, placed right after the `NIOSSLClientHandler`,
/// puts this error in its place, so the channel's error handlers and a gRPC call's error
/// (as its `cause`) carry the trust failure; ``HostTrustVerification/lastFailure`` holds it too.
public struct ServerTrustNIOError: Error, Sendable, CustomStringConvertible {
    /// The failed check, its reason and evidence (a pin failure lists the chain's pins beside
    /// the configured ones).
    public let trustError: TrustError
    /// The evaluation that refused the server — the core's `TrustEvaluation`, as every client
    /// path makes it — or nil when the connection was refused before any chain was evaluated
    /// (no policy for the host, a setting ServerTrustNIO cannot honour, no certificate, a
    /// handshake that skipped verification).
    public let evaluation: TrustEvaluation?
    /// What was refused when no evaluation ran: the host, and its pattern and evaluator when it
    /// was resolved.
    private let subject: Subject

    struct Subject: Sendable {
        let host: String
        let pattern: HostPattern?
        let evaluator: String?
    }

    /// The host evaluated, normalised (`NormalizedHost`).
    public var host: String { evaluation?.host ?? subject.host }
    /// The pattern of the trust manager that matched the host, or `nil` when none did (no
    /// match with `allHostsMustBeEvaluated == false`: default validation) or the lookup failed.
    public var pattern: HostPattern? { evaluation.map(\.matchedPattern) ?? subject.pattern }
    /// The evaluator that ran (its `ServerTrustEvaluating.name`), or `nil` when
    /// none was chosen.
    public var evaluator: String? { trustError.evaluator ?? evaluation?.evaluator.name ?? subject.evaluator }
    /// The error swift-nio-ssl reported for the handshake (`handshakeFailed`), when
    /// ``ServerTrustGuardHandler`` passed this error on in its place.
    public let underlying: NIOSSLError?

    /// A refusal before any evaluation, of a host resolved to `resolved` or (nil) not resolved.
    init(trustError: TrustError, host: NormalizedHost, resolved: ResolvedHostPolicy?, underlying: NIOSSLError? = nil) {
        self.init(
            trustError: trustError, evaluation: nil,
            subject: Subject(host: host.name, pattern: resolved?.pattern, evaluator: resolved?.evaluator.name), underlying: underlying)
    }

    /// The refusal of an evaluation.
    init(_ evaluation: TrustEvaluation, failure: TrustError) {
        self.init(
            trustError: failure, evaluation: evaluation,
            subject: Subject(host: evaluation.host, pattern: nil, evaluator: nil), underlying: nil)
    }

    private init(trustError: TrustError, evaluation: TrustEvaluation?, subject: Subject, underlying: NIOSSLError?) {
        self.trustError = trustError
        self.evaluation = evaluation
        self.subject = subject
        self.underlying = underlying
    }

    /// A copy that records what swift-nio-ssl reported in its place.
    func replacing(_ error: NIOSSLError) -> ServerTrustNIOError {
        ServerTrustNIOError(trustError: trustError, evaluation: evaluation, subject: subject, underlying: error)
    }

    /// The host, the pattern and evaluator, then the `TrustError`'s own description.
    public var description: String {
        let policy = pattern.map { " (pattern \"\($0)\", \(evaluator ?? "no evaluator"))" } ?? evaluator.map { " (\($0))" } ?? ""
        return "ServerTrustNIO refused \(host)\(policy): \(trustError)"
    }
}
#endif
