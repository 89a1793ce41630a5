/// Accepts a server when its validated chain contains one of the pinned certificates.
///
/// Certificates are compared as whole DER encodings. With default validation off, the pinned
/// certificates are the only anchors: the leaf must chain to one of them by signatures, and
/// validity is still checked. The anchor is always the certificate the application configured,
/// never a copy the server sends, so its own validity, path length and name constraints hold
/// as written — which is why this evaluator, unlike the key-pinning ones, may anchor on an
/// intermediate that is not self-signed.
public final class PinnedCertificatesTrustEvaluator: ServerTrustEvaluating {
    private let certificates: Set<Certificate>
    let core: PinningCore

    /// - Parameters:
    ///   - certificates: the pinned certificates; must not be empty.
    ///   - performDefaultValidation: validate the chain to the anchors first. Default `true`.
    public init(certificates: [Certificate], performDefaultValidation: Bool = true) throws {
        self.certificates = Set(certificates)
        core = try PinningCore(
            evaluatorName: "PinnedCertificatesTrustEvaluator", configuredPins: Array(Set(certificates.map(\.spkiPin))).sorted(),
            pinnedCertificates: certificates,
            performDefaultValidation: performDefaultValidation, validateHost: true)
    }

    public func evaluate(_ trust: PeerTrust, forHost host: String) throws {
        try core.evaluate(trust, host: host) { certificates.contains($0) }
    }
}

extension ServerTrustEvaluating where Self == PinnedCertificatesTrustEvaluator {
    /// Certificate pinning.
    public static func pinnedCertificates(
        _ certificates: [Certificate], performDefaultValidation: Bool = true
    ) throws -> PinnedCertificatesTrustEvaluator {
        try PinnedCertificatesTrustEvaluator(certificates: certificates, performDefaultValidation: performDefaultValidation)
    }
}
