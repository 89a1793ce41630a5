import Foundation

/// Round 1, the staple: the OCSP response the server sent in the handshake (leaf only).
extension RevocationChecker {
    func checkStaple(
        _ staple: [UInt8]?, certificate: Certificate, issuer: Certificate, key: RevocationCacheKey?, attempts: inout Attempts
    ) -> Answer? {
        guard let staple else { return nil }
        guard staple.count <= options.effectiveMaximumResponseSize else {
            attempts.failed(
                .responseTooLarge,
                "The stapled OCSP response is \(staple.count) bytes, over the \(options.effectiveMaximumResponseSize)-byte limit.")
            return nil
        }
        let response: OCSPResponse
        let known = key.flatMap(cache.peek).flatMap { $0.der == staple ? $0.ocspResponse : nil }
        if let known {
            response = known
        } else {
            do {
                response = try OCSPResponse(derEncoded: staple)
            } catch {
                attempts.failed(.malformed, "The stapled OCSP response does not parse: \((error as? TrustError)?.reason ?? "\(error)")")
                return nil
            }
        }
        let verified = ocspVerifier.verify(response, for: certificate, issuedBy: issuer, at: time)
        guard verified.status.isDecisive else {
            attempts.failed(verified.status.unknownReason ?? .malformed, "Stapled OCSP response: \(verified.explanation)")
            return nil
        }
        if let key, known == nil {
            let data = CachedRevocationData(ocsp: response, der: staple, origin: nil, stapled: true, status: verified.status)
            let cache = self.cache
            record.deferUntilHandshakeCompletes { cache.store(key, data) }
        }
        return Answer(status: verified.status, source: .stapledOCSP, fromCache: false, explanation: verified.explanation,
            validUntil: acceptedUntil(verified.freshUntil ?? verified.nextUpdate), thisUpdate: verified.thisUpdate, nextUpdate: verified.nextUpdate)
    }
}
