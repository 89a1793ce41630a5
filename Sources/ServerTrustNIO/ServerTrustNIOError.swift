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
    /// The host evaluated, normalised (`NormalizedHost`).
    public let host: String
    /// The pattern of the trust manager that matched the host, or `nil` when none did (no
    /// match with `allHostsMustBeEvaluated == false`: default validation) or the lookup failed.
    public let pattern: String?
    /// The evaluator that ran (its `ServerTrustEvaluating.name`), or `nil` when
    /// none was chosen.
    public let evaluator: String?
    /// The error swift-nio-ssl reported for the handshake (`handshakeFailed`), when
    /// ``ServerTrustGuardHandler`` passed this error on in its place.
    public let underlying: NIOSSLError?

    init(trustError: TrustError, host: String, pattern: String?, evaluator: String?, underlying: NIOSSLError? = nil) {
        self.trustError = trustError
        self.host = host
        self.pattern = pattern
        self.evaluator = trustError.evaluator ?? evaluator
        self.underlying = underlying
    }

    /// A copy that records what swift-nio-ssl reported in its place.
    func replacing(_ error: NIOSSLError) -> ServerTrustNIOError {
        ServerTrustNIOError(trustError: trustError, host: host, pattern: pattern, evaluator: evaluator, underlying: error)
    }

    /// The host, the pattern and evaluator, then the `TrustError`'s own description.
    public var description: String {
        let policy = pattern.map { " (pattern \"\($0)\", \(evaluator ?? "no evaluator"))" } ?? evaluator.map { " (\($0))" } ?? ""
        return "ServerTrustNIO refused \(host)\(policy): \(trustError)"
    }
}
#endif
