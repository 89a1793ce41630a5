import Foundation

/// Round 1, the cache: OCSP responses and CRLs fetched (or stapled) for earlier evaluations.
extension RevocationChecker {
    /// Every decisive answer the cache holds for `certificate`: its OCSP entry (unless it is the
    /// staple already consulted) and the CRL of each distribution point, whatever the methods'
    /// order, since a cached "revoked" must be seen even when another source says "good".
    func checkCache(
        certificate: Certificate, issuer: Certificate, ocspKey: RevocationCacheKey?, skipping staple: [UInt8]?
    ) -> [Answer] {
        var answers: [Answer] = []
        for method in options.methods.order {
            switch method {
            case .ocsp:
                guard let ocspKey else { continue }
                _ = cache.cached(ocspKey, maximumSize: options.effectiveMaximumResponseSize) { data in
                    guard let response = data.ocspResponse, data.der != staple else { return false }
                    let verified = ocspVerifier.verify(response, for: certificate, issuedBy: issuer, at: time)
                    guard verified.status.isDecisive else { return false }
                    let source: CertificateRevocationResult.Source =
                        data.stapled ? .stapledOCSP : .ocsp(data.origin ?? certificate.ocspURLs.first ?? "")
                    answers.append(Answer(
                        status: verified.status, source: source, fromCache: true, explanation: verified.explanation,
                        validUntil: acceptedUntil(verified.freshUntil ?? verified.nextUpdate), thisUpdate: verified.thisUpdate, nextUpdate: verified.nextUpdate))
                    return true
                }
            case .crl:
                for url in certificate.distributionPoints.filter(\.isUsable).flatMap(\.fetchableURLs) {
                    _ = cache.cached(.crl(issuer: issuer, url: url), maximumSize: options.effectiveMaximumCRLSize) { data in
                        guard let crl = data.crl else { return false }
                        let verified = crlVerifier.verify(
                            crl, delta: cachedDelta(for: certificate, base: crl, issuer: issuer), for: certificate,
                            issuedBy: issuer, at: time)
                        guard verified.status.isDecisive else { return false }
                        answers.append(Answer(
                            status: verified.status, source: .crl(url), fromCache: true, explanation: verified.explanation,
                            validUntil: acceptedUntil(verified.nextUpdate), thisUpdate: verified.thisUpdate, nextUpdate: verified.nextUpdate))
                        return true
                    }
                }
            }
        }
        return answers
    }

    /// A cached delta CRL for `base` that is usable now, or `nil`; shared with the live CRL
    /// source, which fetches a delta only when the cache holds none.
    func cachedDelta(for certificate: Certificate, base: ProfiledCRL, issuer: Certificate) -> ProfiledCRL? {
        for url in deltaURLs(for: certificate, base: base) {
            var found: ProfiledCRL?
            _ = cache.cached(.crl(issuer: issuer, url: url), maximumSize: options.effectiveMaximumCRLSize) { data in
                guard let delta = data.crl, delta.deltaBase != nil else { return false }
                do throws(RevocationFailure) {
                    try crlVerifier.checkUsable(delta, for: certificate, issuedBy: issuer, at: time, asDelta: true)
                } catch {
                    return false
                }
                found = delta
                return true
            }
            if let found { return found }
        }
        return nil
    }
}
