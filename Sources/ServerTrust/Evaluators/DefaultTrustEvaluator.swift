/// Standard X.509 validation: a chain to the anchors, validity at the validation time, the TLS
/// server purpose (EKU serverAuth, key usage), and the host name or IP address.
///
/// The `X509_STORE` for explicit anchors is built once, when the evaluator is created; with no
/// explicit anchors the evaluator uses the anchors of the ``PeerTrust`` (the session's, or the
/// system bundle).
public final class DefaultTrustEvaluator: ServerTrustEvaluating {
    let anchors: TrustAnchors?
    private let validateHost: Bool

    /// - Parameter anchors: the CAs to trust; `nil` (the default) trusts the anchors the trust
    ///   carries.
    public convenience init(anchors: TrustAnchors? = nil) {
        self.init(anchors: anchors, checksHost: true)
    }

    /// `checksHost: false` is for the library's offline reports that judge a chain without a host.
    init(anchors: TrustAnchors?, checksHost: Bool) {
        self.anchors = anchors
        self.validateHost = checksHost
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
    public static func `default`(anchors: TrustAnchors? = nil) -> DefaultTrustEvaluator {
        DefaultTrustEvaluator(anchors: anchors)
    }
}
