import Foundation

/// Round 2, live OCSP: queries the certificate's responders within the time budget, one flight
/// per certificate ID across concurrent evaluations.
extension RevocationChecker {
    func fetchOCSP(
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
                // SHA-256 first when asked for, then SHA-1 (RFC 5019's, which every responder
                // answers) from a responder that answered but not about a SHA-256 CertID.
                let hashes: [RevocationOptions.OCSPCertificateIDHash] = options.ocspCertificateIDHash == .sha256 && !cache.answersOnlySHA1(url) ? [.sha256, .sha1] : [.sha1]
                for hash in hashes {
                    let request: OCSPRequest
                    do {
                        request = try OCSPRequest(certificate: certificate, issuer: issuer, nonce: options.ocspNonce ? .random : .omitted, hash: hash)
                    } catch {
                        last = (.issuerUnavailable, "Cannot form an OCSP request for \(certificate.subject): \(error)")
                        break
                    }
                    switch queryOCSP(url, request: request, certificate: certificate, issuer: issuer, fetcher: fetcher) {
                    case .answered(let data):
                        return .stored(data)
                    case .timedOut(let explanation):
                        return .failed(.timeout, explanation)
                    case .failed(let reason, let explanation, let refusedCertificateID):
                        last = (reason, explanation)
                        guard hash == .sha256, refusedCertificateID, ContinuousClock.now < deadline else { break }
                        cache.noteAnswersOnlySHA1(url)
                        continue
                    }
                    break
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
                validUntil: acceptedUntil(verified.freshUntil ?? verified.nextUpdate), thisUpdate: verified.thisUpdate, nextUpdate: verified.nextUpdate)
        }
    }

    /// What one responder made of one request.
    enum OCSPQueryOutcome {
        case answered(CachedRevocationData)
        /// The fetcher gave up at the deadline: nothing further is asked.
        case timedOut(String)
        /// `refusedCertificateID`: the responder answered, but not about the CertID asked for
        /// (HTTP 4xx, `malformedRequest`, `unauthorized`, `unknown`, or another CertID).
        case failed(RevocationStatus.UnknownReason, String, refusedCertificateID: Bool)
    }

    /// One request to one responder: GET then POST where ``ocspFetchRequests(url:request:)``
    /// allows, the answer verified against the request (its nonce, when sent).
    func queryOCSP(
        _ url: String, request: OCSPRequest, certificate: Certificate, issuer: Certificate, fetcher: any RevocationFetcher
    ) -> OCSPQueryOutcome {
        // GET first where RFC 5019 allows it, then POST if the responder refused the GET as a
        // request (HTTP 4xx, or OCSP malformedRequest): some responders — OpenSSL's own
        // `openssl ocsp` among them — cannot decode a GET whose URL has a path.
        let fetchRequests = ocspFetchRequests(url: url, request: request)
        var last: OCSPQueryOutcome = .failed(.noResponse, "No OCSP responder answered.", refusedCertificateID: false)
        for (index, fetchRequest) in fetchRequests.enumerated() {
            let postFollows = index + 1 < fetchRequests.count
            if index > 0 && ContinuousClock.now >= deadline {
                return .failed(.timeout, "The time budget ran out before the POST to the OCSP responder \(url).", refusedCertificateID: false)
            }
            cache.noteFetch()
            switch fetcher.fetch(fetchRequest, deadline: deadline) {
            case .failure(let error):
                let explanation = "OCSP responder \(url) (\(fetchRequest.method)): \(error)."
                if error.code == .fetchTimedOut { return .timedOut(explanation) }
                let refused = error.evidence.httpStatus.map { (400..<500).contains($0) } ?? false
                last = .failed(error.unknownReason, explanation, refusedCertificateID: refused)
                if postFollows, refused { continue }
                return last
            case .success(let bytes):
                guard bytes.count <= options.effectiveMaximumResponseSize else {
                    return .failed(
                        .responseTooLarge, "OCSP responder \(url) sent \(bytes.count) bytes, over the \(options.effectiveMaximumResponseSize)-byte limit.",
                        refusedCertificateID: false)
                }
                let response: OCSPResponse
                do {
                    response = try OCSPResponse(derEncoded: bytes)
                } catch {
                    return .failed(
                        .malformed, "OCSP responder \(url) sent no OCSP response: \((error as? TrustError)?.reason ?? "\(error)")", refusedCertificateID: false)
                }
                let verified = ocspVerifier.verify(
                    response, for: certificate, issuedBy: issuer, at: time, request: options.ocspNonce ? request : nil)
                if verified.status.isDecisive {
                    return .answered(CachedRevocationData(ocsp: response, der: bytes, origin: url, status: verified.status))
                }
                let reason = verified.status.unknownReason ?? .malformed
                let refused = [.malformedRequest, .unauthorized].contains(response.responseStatus)
                    || reason == .responderSaysUnknown || reason == .certificateIDMismatch
                last = .failed(reason, "OCSP responder \(url) (\(fetchRequest.method)): \(verified.explanation)", refusedCertificateID: refused)
                if postFollows && response.responseStatus == .malformedRequest { continue }
                return last
            }
        }
        return last
    }

    /// GET when there is no nonce and the URL stays under 255 bytes (RFC 5019 §5), so HTTP
    /// caches can serve it, with POST as the fallback for a responder that refuses the GET;
    /// POST alone otherwise.
    func ocspFetchRequests(url: String, request: OCSPRequest) -> [RevocationFetchRequest] {
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
}
