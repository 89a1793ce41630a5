import Foundation

/// Establishes the status of one certificate for one evaluation from its sources, in two rounds.
///
/// 1. **Every source that costs no network is consulted**: the staple (leaf only, when the
///    methods use staples or the leaf is must-staple), the CRLs the application supplied
///    (always, whatever ``RevocationOptions/methods`` says) and the cache. A verified "revoked"
///    from any of them is the answer, whichever source gave it; otherwise the first verified
///    "good" is. So a still-valid "good" staple obtained before a revocation cannot outrank the
///    application's own CRL or a cached "revoked" (second audit, finding 2).
/// 2. Only when none of them answered: for a short-lived leaf
///    (``RevocationOptions/shortLivedCertificateValidity``), nothing — its status is
///    `RevocationStatus.UnknownReason.shortLivedCertificate`; for any other certificate, live
///    OCSP and CRL fetches in the order of ``RevocationOptions/methods``, until one gives a
///    verified answer.
///
/// Every failure is noted; when no source answers, the result is unknown with the last
/// failure's reason. A verified staple enters the cache only once the handshake has proven
/// the server holds the key (``PeerTrust/handshakeCompleted()``).
///
/// Each source lives in a file of its own (`RevocationChecker+Staple`, `+LocalCRLs`, `+Cache`,
/// `+LiveOCSP`, `+LiveCRL`) and only reports what it found: its verified ``Answer``s, or a
/// failure noted in ``Attempts``. Which answer wins — "revoked wins", must-staple, the order of
/// the rounds — is decided in ``check(_:depth:issuer:staple:)`` alone.
struct RevocationChecker {
    let options: RevocationOptions
    let fetcher: (any RevocationFetcher)?
    let cache: RevocationCache
    let localCRLs: [ProfiledCRL]
    let time: Date
    let deadline: ContinuousClock.Instant
    /// Where a verified staple's cache write waits for the end of the handshake.
    let record: RevocationRecord

    var ocspVerifier: OCSPVerifier { options.ocspVerifier }
    var crlVerifier: CRLVerifier {
        CRLVerifier(clockSkewTolerance: options.clockSkew, maximumAgeWithoutNextUpdate: options.maximumResponseAge)
    }

    /// What has been tried for one certificate.
    struct Attempts {
        var notes: [String] = []
        var last: (reason: RevocationStatus.UnknownReason, explanation: String)?

        mutating func failed(_ reason: RevocationStatus.UnknownReason, _ explanation: String) {
            notes.append(explanation)
            last = (reason, explanation)
        }
    }

    /// A verified answer from one source; never an "unknown", which is a failure in ``Attempts``.
    struct Answer {
        let status: RevocationStatus
        let source: CertificateRevocationResult.Source
        let fromCache: Bool
        let explanation: String

        var isRevoked: Bool {
            if case .revoked = status { return true }
            return false
        }
        /// When the answer stops holding (the response's or CRL's nextUpdate), if it says.
        var validUntil: Date? = nil
        /// The thisUpdate and nextUpdate of the response or CRL that answered.
        var thisUpdate: Date? = nil
        var nextUpdate: Date? = nil
    }

    func check(_ certificate: Certificate, depth: Int, issuer: Certificate?, staple: [UInt8]?) -> CertificateRevocationResult {
        var attempts = Attempts()
        func result(_ answer: Answer) -> CertificateRevocationResult {
            CertificateRevocationResult(
                certificate: certificate, depth: depth, status: answer.status, source: answer.source,
                fromCache: answer.fromCache, explanation: answer.explanation, attempts: attempts.notes, validUntil: answer.validUntil,
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
        if depth == 0 && options.isShortLived(certificate) {
            // Its short life stands in for revocation (RevocationOptions.shortLivedCertificateValidity):
            // nothing is fetched, and hard-fail accepts this unknown.
            let days = (certificate.notValidAfter.timeIntervalSince(certificate.notValidBefore) + 1) / 86_400
            let limit = (options.shortLivedCertificateValidity ?? 0) / 86_400
            let text = "\(certificate.subject) is short-lived (valid for \(days.formatted(.number.precision(.fractionLength(0...2)))) days, "
                + "at most \(limit.formatted(.number.precision(.fractionLength(0...2)))) days): it needs no revocation check, so none was fetched."
            attempts.notes.append(text)
            return CertificateRevocationResult(
                certificate: certificate, depth: depth, status: .unknown(.shortLivedCertificate), source: .none, explanation: text,
                attempts: attempts.notes)
        }

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

    /// The last instant the verifiers accept an answer whose freshness ends at `date`: they
    /// allow the clock-skew tolerance past it, and a connection accepted on the answer may be
    /// reused as long as a new evaluation would accept it too.
    func acceptedUntil(_ date: Date?) -> Date? { date.map { $0.addingTimeInterval(options.clockSkew) } }

    func hasTimeLeft(_ attempts: inout Attempts, for what: String) -> Bool {
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
