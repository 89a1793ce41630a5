import Foundation

/// Establishes the status of one certificate for one evaluation from its sources, in two rounds.
///
/// 1. **Every source that costs no network is consulted**: the staple (leaf only, when the
///    methods use staples or the leaf is must-staple), the CRLs the application supplied
///    (always, whatever ``RevocationOptions/methods`` says) and the cache. A verified "revoked"
///    from any of them is the answer, whichever source gave it; otherwise the first verified
///    "good" is. So a still-valid "good" staple obtained before a revocation cannot outrank the
///    application's own CRL or a cached "revoked" (second audit, finding 2).
/// 2. Only when none of them answered: live OCSP and CRL fetches in the order of
///    ``RevocationOptions/methods``, until one gives a verified answer.
///
/// Every failure is noted; when no source answers, the result is unknown with the last
/// failure's reason. A verified staple enters the cache only once the handshake has proven
/// the server holds the key (``ServerTrust/handshakeCompleted()``).
struct RevocationChecker {
    let options: RevocationOptions
    let fetcher: (any RevocationFetcher)?
    let cache: RevocationCache
    let localCRLs: [ProfiledCRL]
    let time: Date
    let deadline: ContinuousClock.Instant
    /// Where a verified staple's cache write waits for the end of the handshake.
    let record: RevocationRecord

    private var ocspVerifier: OCSPVerifier { options.ocspVerifier }
    private var crlVerifier: CRLVerifier {
        CRLVerifier(clockSkewTolerance: options.clockSkew, maximumAgeWithoutNextUpdate: options.maximumResponseAge)
    }

    /// What has been tried for one certificate.
    private struct Attempts {
        var notes: [String] = []
        var last: (reason: RevocationStatus.UnknownReason, explanation: String)?

        mutating func failed(_ reason: RevocationStatus.UnknownReason, _ explanation: String) {
            notes.append(explanation)
            last = (reason, explanation)
        }
    }

    /// A verified answer from one source.
    private struct Answer {
        let status: RevocationStatus
        let source: CertificateRevocationResult.Source
        let fromCache: Bool
        let explanation: String
        let thisUpdate: Date?
        let nextUpdate: Date?

        var isRevoked: Bool {
            if case .revoked = status { return true }
            return false
        }
    }

    func check(_ certificate: Certificate, depth: Int, issuer: Certificate?, staple: [UInt8]?) -> CertificateRevocationResult {
        var attempts = Attempts()
        func result(_ answer: Answer) -> CertificateRevocationResult {
            CertificateRevocationResult(
                certificate: certificate, depth: depth, status: answer.status, source: answer.source,
                fromCache: answer.fromCache, explanation: answer.explanation, attempts: attempts.notes,
                thisUpdate: answer.thisUpdate, nextUpdate: answer.nextUpdate)
        }
        func unknown(_ fallback: RevocationStatus.UnknownReason, _ explanation: String) -> CertificateRevocationResult {
            let (reason, text) = attempts.last ?? (fallback, explanation)
            if attempts.last == nil { attempts.notes.append(text) }
            return CertificateRevocationResult(
                certificate: certificate, depth: depth, status: .unknown(reason), source: .none, explanation: text,
                attempts: attempts.notes)
        }

        guard let issuer else {
            return unknown(.issuerUnavailable, "The issuer of \(certificate.subject) is not available, so its status cannot be looked up.")
        }
        let ocspKey = RevocationCacheKey.ocsp(certificate: certificate, issuer: issuer)
        let mustStaple = depth == 0 && certificate.hasMustStaple

        // Round 1: the sources without network access, all of them; "revoked wins" is decided here only.
        var offline: [Answer] = []
        var stapleAnswered = false
        if depth == 0 && (options.methods.usesStaples || mustStaple),
            let answer = checkStaple(staple, certificate: certificate, issuer: issuer, key: ocspKey, attempts: &attempts)
        {
            offline.append(answer)
            stapleAnswered = true
        }
        offline += checkLocalCRLs(certificate: certificate, issuer: issuer, attempts: &attempts)
        offline += checkCache(certificate: certificate, issuer: issuer, ocspKey: ocspKey, skipping: stapleAnswered ? staple : nil)
        if let revoked = offline.first(where: \.isRevoked) { return result(revoked) }
        if mustStaple && !stapleAnswered {
            // RFC 7633: the certificate itself says only a staple will do; a "good" from elsewhere does not count.
            return unknown(.noResponse, "The leaf is OCSP must-staple and the server stapled no response.")
        }
        if let good = offline.first { return result(good) }

        // Round 2: live sources, only when nothing offline answered.
        if options.networkAccessDisabled {
            return unknown(.networkAccessDisabled, "Network access is disabled and no staple or cached answer covers \(certificate.subject).")
        }
        guard let fetcher else {
            return unknown(.networkAccessDisabled, "No RevocationFetcher is configured, so \(certificate.subject) cannot be looked up live.")
        }
        var foundURL = false
        for method in options.methods.order {
            let answer: Answer?
            switch method {
            case .ocsp:
                let urls = certificate.ocspURLs.filter(isFetchableURL)
                guard let ocspKey, !urls.isEmpty else { continue }
                foundURL = true
                answer = fetchOCSP(urls, certificate: certificate, issuer: issuer, key: ocspKey, fetcher: fetcher, attempts: &attempts)
            case .crl:
                let urls = certificate.distributionPoints.filter(\.isUsable).flatMap(\.fetchableURLs)
                guard !urls.isEmpty else { continue }
                foundURL = true
                answer = fetchCRL(urls, certificate: certificate, issuer: issuer, fetcher: fetcher, attempts: &attempts)
            }
            if let answer { return result(answer) }
            if attempts.last?.reason == .timeout { break }
        }
        guard foundURL else {
            let sources = options.methods == .ocsp
                ? "OCSP responder" : options.methods == .crl ? "CRL distribution point" : "OCSP responder or CRL distribution point"
            return unknown(.noResponderURL, "\(certificate.subject) names no \(sources) that can be queried over HTTP.")
        }
        return unknown(.noResponse, "No source answered for \(certificate.subject).")
    }

    // MARK: - Sources without network access

    private func checkStaple(
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
        return Answer(
            status: verified.status, source: .stapledOCSP, fromCache: false, explanation: verified.explanation,
            thisUpdate: verified.thisUpdate, nextUpdate: verified.nextUpdate)
    }

    /// Every decisive answer of the application's own CRLs for `certificate`. CRLs are matched to
    /// the issuer by DER name and, where both carry one, by authority key identifier.
    private func checkLocalCRLs(certificate: Certificate, issuer: Certificate, attempts: inout Attempts) -> [Answer] {
        let ofIssuer = localCRLs.filter { $0.crl.isIssued(by: issuer) }
        let complete = ofIssuer.filter { $0.deltaBase == nil }
        let delta = ofIssuer.first { $0.deltaBase != nil }
        var answers: [Answer] = []
        for crl in complete {
            let verified = crlVerifier.verify(crl, delta: delta, for: certificate, issuedBy: issuer, at: time)
            if verified.status.isDecisive {
                answers.append(Answer(
                    status: verified.status, source: .localCRL, fromCache: false, explanation: verified.explanation,
                    thisUpdate: verified.thisUpdate, nextUpdate: verified.nextUpdate))
            } else {
                attempts.failed(verified.status.unknownReason ?? .malformed, "Local CRL: \(verified.explanation)")
            }
        }
        return answers
    }

    /// Every decisive answer the cache holds for `certificate`: its OCSP entry (unless it is the
    /// staple already consulted) and the CRL of each distribution point, whatever the methods'
    /// order, since a cached "revoked" must be seen even when another source says "good".
    private func checkCache(
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
                        thisUpdate: verified.thisUpdate, nextUpdate: verified.nextUpdate))
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
                            thisUpdate: verified.thisUpdate, nextUpdate: verified.nextUpdate))
                        return true
                    }
                }
            }
        }
        return answers
    }

    // MARK: - Live fetching

    private func fetchOCSP(
        _ urls: [String], certificate: Certificate, issuer: Certificate, key: RevocationCacheKey,
        fetcher: any RevocationFetcher, attempts: inout Attempts
    ) -> Answer? {
        guard hasTimeLeft(&attempts, for: "OCSP query") else { return nil }
        let outcome = cache.fetchOnce(key, deadline: deadline) {
            var last: (RevocationStatus.UnknownReason, String) = (.noResponse, "No OCSP responder answered.")
            for url in urls {
                guard ContinuousClock.now < deadline else {
                    last = (.timeout, "The time budget ran out before the OCSP responder \(url) was asked.")
                    break
                }
                let request: OCSPRequest
                do {
                    request = try OCSPRequest(certificate: certificate, issuer: issuer, nonce: options.ocspNonce ? .random : .omitted)
                } catch {
                    last = (.issuerUnavailable, "Cannot form an OCSP request for \(certificate.subject): \(error)")
                    continue
                }
                // GET first where RFC 5019 allows it, then POST if the responder refused the GET
                // as a request (HTTP 4xx, or OCSP malformedRequest): some responders — OpenSSL's
                // own `openssl ocsp` among them — cannot decode a GET whose URL has a path.
                let fetchRequests = ocspFetchRequests(url: url, request: request)
                attempts: for (index, fetchRequest) in fetchRequests.enumerated() {
                    let postFollows = index + 1 < fetchRequests.count
                    if index > 0 && ContinuousClock.now >= deadline {
                        last = (.timeout, "The time budget ran out before the POST to the OCSP responder \(url).")
                        break attempts
                    }
                    cache.noteFetch()
                    switch fetcher.fetch(fetchRequest, deadline: deadline) {
                    case .failure(let error):
                        last = (error.unknownReason, "OCSP responder \(url) (\(fetchRequest.method)): \(error).")
                        if error.isTimeout { return .failed(last.0, last.1) }
                        if postFollows, let status = error.httpStatus, (400..<500).contains(status) { continue attempts }
                        break attempts
                    case .success(let bytes):
                        guard bytes.count <= options.effectiveMaximumResponseSize else {
                            last = (.responseTooLarge, "OCSP responder \(url) sent \(bytes.count) bytes, over the \(options.effectiveMaximumResponseSize)-byte limit.")
                            break attempts
                        }
                        let response: OCSPResponse
                        do {
                            response = try OCSPResponse(derEncoded: bytes)
                        } catch {
                            last = (.malformed, "OCSP responder \(url) sent no OCSP response: \((error as? TrustError)?.reason ?? "\(error)")")
                            break attempts
                        }
                        let verified = ocspVerifier.verify(
                            response, for: certificate, issuedBy: issuer, at: time, request: options.ocspNonce ? request : nil)
                        if verified.status.isDecisive {
                            return .stored(CachedRevocationData(ocsp: response, der: bytes, origin: url, status: verified.status))
                        }
                        last = (verified.status.unknownReason ?? .malformed, "OCSP responder \(url) (\(fetchRequest.method)): \(verified.explanation)")
                        if postFollows && response.responseStatus == .malformedRequest { continue attempts }
                        break attempts
                    }
                }
            }
            return .failed(last.0, last.1)
        }
        switch outcome {
        case .failed(let reason, let explanation):
            attempts.failed(reason, explanation)
            return nil
        case .stored(let data):
            guard let response = data.ocspResponse else { return nil }
            let verified = ocspVerifier.verify(response, for: certificate, issuedBy: issuer, at: time)
            guard verified.status.isDecisive else {
                attempts.failed(verified.status.unknownReason ?? .malformed, verified.explanation)
                return nil
            }
            return Answer(
                status: verified.status, source: .ocsp(data.origin ?? urls[0]), fromCache: false, explanation: verified.explanation,
                thisUpdate: verified.thisUpdate, nextUpdate: verified.nextUpdate)
        }
    }

    /// GET when there is no nonce and the URL stays under 255 bytes (RFC 5019 §5), so HTTP
    /// caches can serve it, with POST as the fallback for a responder that refuses the GET;
    /// POST alone otherwise.
    private func ocspFetchRequests(url: String, request: OCSPRequest) -> [RevocationFetchRequest] {
        let der = request.derEncoded
        if request.nonce == nil {
            let encoded = Data(der).base64EncodedString()
                .replacingOccurrences(of: "+", with: "%2B")
                .replacingOccurrences(of: "/", with: "%2F")
                .replacingOccurrences(of: "=", with: "%3D")
            let getURL = (url.hasSuffix("/") ? url : url + "/") + encoded
            if getURL.utf8.count < 255 {
                return [
                    .ocspGET(url: getURL, maximumSize: options.effectiveMaximumResponseSize),
                    .ocspPOST(url: url, body: der, maximumSize: options.effectiveMaximumResponseSize),
                ]
            }
        }
        return [.ocspPOST(url: url, body: der, maximumSize: options.effectiveMaximumResponseSize)]
    }

    private func fetchCRL(
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
                        thisUpdate: verified.thisUpdate, nextUpdate: verified.nextUpdate)
                }
                attempts.failed(verified.status.unknownReason ?? .malformed, "CRL \(url): \(verified.explanation)")
            }
        }
        return nil
    }

    /// Fetches, parses and checks a CRL (everything but the lookup), for the cache to store.
    private func fetchCRLData(
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
            do throws(OCSPFailure) {
                try crlVerifier.checkUsable(profiled, for: certificate, issuedBy: issuer, at: time, asDelta: asDelta)
            } catch {
                return .failed(error.reason, "\(what) \(url): \(error.explanation)")
            }
            return .stored(CachedRevocationData(crl: profiled, der: bytes, origin: url))
        }
    }

    /// Where deltas for `base` are published: the certificate's freshestCRL, else the CRL's own.
    private func deltaURLs(for certificate: Certificate, base: ProfiledCRL) -> [String] {
        let fromCertificate = certificate.freshestCRLPoints.filter(\.isUsable).flatMap(\.fetchableURLs)
        return fromCertificate.isEmpty ? base.freshestURIs : fromCertificate
    }

    private func cachedDelta(for certificate: Certificate, base: ProfiledCRL, issuer: Certificate) -> ProfiledCRL? {
        for url in deltaURLs(for: certificate, base: base) {
            var found: ProfiledCRL?
            _ = cache.cached(.crl(issuer: issuer, url: url), maximumSize: options.effectiveMaximumCRLSize) { data in
                guard let delta = data.crl, delta.deltaBase != nil else { return false }
                do throws(OCSPFailure) {
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

    private func fetchedDelta(
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

    private func hasTimeLeft(_ attempts: inout Attempts, for what: String) -> Bool {
        guard ContinuousClock.now < deadline else {
            attempts.failed(.timeout, "The time budget of \(options.timeBudget) ran out before the \(what).")
            return false
        }
        return true
    }
}

extension RevocationStatus {
    /// Good or revoked: an answer, as opposed to unknown.
    var isDecisive: Bool {
        if case .unknown = self { return false }
        return true
    }

    /// The reason of an unknown status.
    var unknownReason: UnknownReason? {
        if case .unknown(let reason) = self { return reason }
        return nil
    }
}
