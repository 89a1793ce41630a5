internal import COpenSSL

extension PeerTrust {
    /// The leaf and its issuer as Certificate Transparency verifies embedded SCTs with them
    /// (`CTLogStore.evaluate(_:handshake:requirement:at:timeIsTheClock:)`).
    ///
    /// The validated path is the one an enforcing evaluator may adopt (`adoptableValidatedPath`),
    /// never one only a report-only evaluator built (``validatedChainIfComputed`` may be that
    /// one), so trialling other anchors never changes what CT enforces. When that path ends at
    /// the leaf — the leaf is itself the anchor (pinned material as the only anchors, no
    /// default validation) and OpenSSL kept nothing above it, as when it set an expired
    /// intermediate aside — or when no enforcing evaluator validated, the issuer is the
    /// presented certificate that issued the leaf (names, key identifiers, key usage and
    /// signature checked). A certificate the server sent is safe here: an embedded SCT signs the
    /// issuer's key hash, so any certificate but the real issuer only fails the SCT check.
    var certificateTransparencyChain: [Certificate] {
        Self.certificateTransparencyChain(validated: adoptableValidatedPath?.certificates, presented: presentedChain)
    }

    /// `validated` when it reaches past the leaf, else the presented leaf and the presented
    /// certificate that issued it, if any.
    static func certificateTransparencyChain(validated: [Certificate]?, presented: [Certificate]) -> [Certificate] {
        if let validated, validated.count > 1 { return validated }
        guard let leaf = presented.first else { return [] }
        return [leaf] + presented.dropFirst().filter { issued(leaf, by: $0) }.prefix(1)
    }

    private static func issued(_ leaf: Certificate, by candidate: Certificate) -> Bool {
        clearOpenSSLErrors()
        defer { _ = drainOpenSSLErrors() }  // a failed verification leaves its reason on the queue
        guard candidate != leaf, X509_check_issued(candidate.x509, leaf.x509) == X509_V_OK, let key = X509_get0_pubkey(candidate.x509) else {
            return false
        }
        return X509_verify(leaf.x509, key) == 1
    }
}
