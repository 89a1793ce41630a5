/// Standard X.509 validation: a chain to the anchors, validity at the validation time, the TLS
/// server purpose (EKU serverAuth, key usage), and the host name or IP address.
///
/// The `X509_STORE` for explicit anchors is built once, when the evaluator is created; with no
/// explicit anchors the evaluator uses the anchors of the ``PeerTrust`` (the session's, or the
/// system bundle).
public final class DefaultTrustEvaluator: ServerTrustEvaluating {
    private let anchors: TrustAnchors?
    private let validateHost: Bool

    /// - Parameters:
    ///   - anchors: the CAs to trust; `nil` (the default) trusts the anchors the trust carries.
    ///   - validateHost: check the host name or IP address against the leaf. Default `true`.
    ///     - Warning: `false` accepts any certificate from a trusted CA for any host.
    public init(anchors: TrustAnchors? = nil, validateHost: Bool = true) {
        self.anchors = anchors
        self.validateHost = validateHost
    }

    public func evaluate(_ trust: PeerTrust, forHost host: String) throws {
        try attributing(host: host) {
            let chain = try trust.validatedChain(against: (anchors ?? trust.anchors).store)
            if validateHost { try HostNameVerifier.verify(chain[0], host: host) }
        }
    }
}

extension ServerTrustEvaluating where Self == DefaultTrustEvaluator {
    /// Standard validation: chain to the anchors, validity, server purpose, host.
    public static func `default`(anchors: TrustAnchors? = nil, validateHost: Bool = true) -> DefaultTrustEvaluator {
        DefaultTrustEvaluator(anchors: anchors, validateHost: validateHost)
    }
}
