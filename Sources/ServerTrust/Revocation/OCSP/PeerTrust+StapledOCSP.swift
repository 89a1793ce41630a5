internal import COpenSSL

extension PeerTrust {
    /// Verifies the stapled OCSP response about the leaf of the validated chain, at
    /// ``validationTime``.
    ///
    /// The issuer that identifies the leaf is the second certificate of the validated chain;
    /// when the leaf is itself an anchor (a one-certificate chain) it is looked up among the
    /// anchors. No staple gives `RevocationStatus.UnknownReason.noResponse`; a staple that
    /// does not parse gives `RevocationStatus.UnknownReason.malformed`.
    ///
    /// - Throws: what ``validatedChain()`` throws: path validation runs first, and a status is
    ///   only worth having for a chain that validates.
    package func stapledOCSPStatus(using verifier: OCSPVerifier = OCSPVerifier()) throws -> OCSPVerificationResult {
        let chain = try validatedChain()
        return stapledOCSPStatus(ofValidatedChain: chain, using: verifier)
    }

    /// As ``stapledOCSPStatus(using:)`` for a chain an evaluator validated with its own anchors.
    func stapledOCSPStatus(ofValidatedChain chain: [Certificate], using verifier: OCSPVerifier) -> OCSPVerificationResult {
        guard let staple = stapledOCSPResponse else {
            return OCSPVerificationResult(status: .unknown(.noResponse), explanation: "The server stapled no OCSP response.")
        }
        guard let leaf = chain.first, let issuer = issuer(ofLeafIn: chain) else {
            return OCSPVerificationResult(
                status: .unknown(.issuerUnavailable),
                explanation: "The issuer of \(chain.first?.subject ?? "the leaf") is neither in the validated chain nor among the anchors.")
        }
        return verifier.verify(derEncoded: staple, for: leaf, issuedBy: issuer, at: validationTime)
    }

    /// The issuer of `chain[0]`: `chain[1]`, or for a leaf that is itself an anchor, the anchor
    /// that issued it (names, key identifiers, key usage and signature checked), or the leaf
    /// itself when it is self-signed.
    func issuer(ofLeafIn chain: [Certificate]) -> Certificate? {
        guard let leaf = chain.first else { return nil }
        if chain.count > 1 { return chain[1] }
        clearOpenSSLErrors()
        defer { _ = drainOpenSSLErrors() }
        let issuingAnchor = anchors.certificates.first { candidate in
            guard candidate != leaf, X509_check_issued(candidate.x509, leaf.x509) == X509_V_OK,
                let key = X509_get0_pubkey(candidate.x509)
            else { return false }
            return X509_verify(leaf.x509, key) == 1
        }
        if let issuingAnchor { return issuingAnchor }
        // A self-signed server certificate is its own issuer, whatever its key usage says.
        guard leaf.isSelfIssued, let key = X509_get0_pubkey(leaf.x509), X509_verify(leaf.x509, key) == 1 else { return nil }
        return leaf
    }
}
