import Foundation

/// Round 2, live CRLs: downloads the certificate's distribution points (and their deltas)
/// within the time budget, one flight per URL across concurrent evaluations.
extension RevocationChecker {
    func fetchCRL(
        _ urls: [String], certificate: Certificate, issuer: Certificate, fetcher: any RevocationFetcher, attempts: inout Attempts
    ) -> Answer? {
        for url in urls {
            guard hasTimeLeft(&attempts, for: "CRL download from \(url)") else { return nil }
            let outcome = cache.fetchOnce(.crl(issuer: issuer, url: url), deadline: deadline) {
                fetchCRLData(url, certificate: certificate, issuer: issuer, asDelta: false, fetcher: fetcher)
            }
            switch outcome {
            case .failed(let reason, let explanation):
                attempts.failed(reason, explanation)
                if reason == .timeout { return nil }
            case .stored(let data):
                guard let crl = data.crl else { continue }
                let delta = cachedDelta(for: certificate, base: crl, issuer: issuer)
                    ?? fetchedDelta(for: certificate, base: crl, issuer: issuer, fetcher: fetcher)
                let verified = crlVerifier.verify(crl, delta: delta, for: certificate, issuedBy: issuer, at: time)
                if verified.status.isDecisive {
                    return Answer(
                        status: verified.status, source: .crl(url), fromCache: false, explanation: verified.explanation,
                        validUntil: acceptedUntil(verified.nextUpdate), thisUpdate: verified.thisUpdate, nextUpdate: verified.nextUpdate)
                }
                attempts.failed(verified.status.unknownReason ?? .malformed, "CRL \(url): \(verified.explanation)")
            }
        }
        return nil
    }

    /// Fetches, parses and checks a CRL (everything but the lookup), for the cache to store.
    func fetchCRLData(
        _ url: String, certificate: Certificate, issuer: Certificate, asDelta: Bool, fetcher: any RevocationFetcher
    ) -> RevocationCache.FetchOutcome {
        let what = asDelta ? "Delta CRL" : "CRL"
        guard ContinuousClock.now < deadline else {
            return .failed(.timeout, "The time budget ran out before the \(what) at \(url) was fetched.")
        }
        cache.noteFetch()
        switch fetcher.fetch(.crl(url: url, maximumSize: options.effectiveMaximumCRLSize), deadline: deadline) {
        case .failure(let error):
            return .failed(error.unknownReason, "\(what) \(url): \(error).")
        case .success(let bytes):
            guard bytes.count <= options.effectiveMaximumCRLSize else {
                return .failed(.responseTooLarge, "\(what) \(url) is \(bytes.count) bytes, over the \(options.effectiveMaximumCRLSize)-byte limit.")
            }
            let crl: CertificateRevocationList
            do {
                crl = try CertificateRevocationList(bytes: bytes)
            } catch {
                return .failed(.malformed, "\(what) \(url) does not parse: \((error as? TrustError)?.reason ?? "\(error)")")
            }
            let profiled = ProfiledCRL(crl)
            do throws(RevocationFailure) {
                try crlVerifier.checkUsable(profiled, for: certificate, issuedBy: issuer, at: time, asDelta: asDelta)
            } catch {
                return .failed(error.reason, "\(what) \(url): \(error.explanation)")
            }
            return .stored(CachedRevocationData(crl: profiled, der: bytes, origin: url))
        }
    }

    /// Where deltas for `base` are published: the certificate's freshestCRL, else the CRL's own.
    func deltaURLs(for certificate: Certificate, base: ProfiledCRL) -> [String] {
        let fromCertificate = certificate.freshestCRLPoints.filter(\.isUsable).flatMap(\.fetchableURLs)
        return fromCertificate.isEmpty ? base.freshestURIs : fromCertificate
    }

    func fetchedDelta(
        for certificate: Certificate, base: ProfiledCRL, issuer: Certificate, fetcher: any RevocationFetcher
    ) -> ProfiledCRL? {
        guard !options.networkAccessDisabled else { return nil }
        for url in deltaURLs(for: certificate, base: base) where ContinuousClock.now < deadline {
            let outcome = cache.fetchOnce(.crl(issuer: issuer, url: url), deadline: deadline) {
                fetchCRLData(url, certificate: certificate, issuer: issuer, asDelta: true, fetcher: fetcher)
            }
            if case .stored(let data) = outcome, let delta = data.crl { return delta }
        }
        return nil
    }
}
