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
                        if error.code == .fetchTimedOut { return .failed(last.0, last.1) }
                        if postFollows, let status = error.evidence.httpStatus, (400..<500).contains(status) { continue attempts }
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
                validUntil: acceptedUntil(verified.freshUntil ?? verified.nextUpdate), thisUpdate: verified.thisUpdate, nextUpdate: verified.nextUpdate)
        }
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
