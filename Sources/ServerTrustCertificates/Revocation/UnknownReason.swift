extension RevocationStatus {
    /// Why a revocation status is unknown.
    ///
    /// A struct over a private enum rather than a public enum, so that live fetching and CRLs
    /// can add reasons without breaking callers' exhaustive switches. Compare with `==`
    /// (`status == .unknown(.stale)`); ``identifier`` is a stable camel-case name for logs and
    /// JSON, ``description`` a sentence for people. Detail about one particular response (which
    /// extension, which dates) is in `OCSPVerificationResult.explanation`, not here, so that
    /// equality means "the same kind of failure".
    public struct UnknownReason: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: Hashable, Sendable {
            case noResponse
            case malformed
            case responderError(OCSPResponseStatus)
            case badSignature
            case unauthorizedSigner
            case certificateIDMismatch
            case notYetValid
            case stale
            case tooOld
            case producedOutsideCertificateValidity
            case unhandledCriticalExtension
            case nonceMismatch
            case responderSaysUnknown
            case issuerUnavailable
            case timeout
            case noResponderURL
            case networkAccessDisabled
            case fetchFailed(String)
            case responseTooLarge
            case notCoveredByCRL
            case shortLivedCertificate
        }

        private let kind: Kind
        private init(_ kind: Kind) { self.kind = kind }

        /// No response was available: nothing stapled, nothing cached, nothing fetched.
        public static let noResponse = UnknownReason(.noResponse)
        /// The response is not a well-formed OCSP response with a basic response body.
        public static let malformed = UnknownReason(.malformed)
        /// The responder answered with an error status instead of certificate statuses.
        public static func responderError(_ status: OCSPResponseStatus) -> UnknownReason {
            UnknownReason(.responderError(status))
        }
        /// The signature does not verify under the key of the certificate the responder ID names.
        public static let badSignature = UnknownReason(.badSignature)
        /// The signer is neither the issuer nor a responder the issuer certified directly with
        /// the id-kp-OCSPSigning extended key usage, or it cannot be found at all.
        public static let unauthorizedSigner = UnknownReason(.unauthorizedSigner)
        /// No single response in the response is about this certificate.
        public static let certificateIDMismatch = UnknownReason(.certificateIDMismatch)
        /// thisUpdate is later than the validation time plus the clock-skew tolerance.
        public static let notYetValid = UnknownReason(.notYetValid)
        /// nextUpdate has passed (by more than the clock-skew tolerance).
        public static let stale = UnknownReason(.stale)
        /// thisUpdate is older than the maximum age (see `OCSPVerifier.Configuration.maximumAge`).
        public static let tooOld = UnknownReason(.tooOld)
        /// producedAt lies outside the certificate's validity period.
        public static let producedOutsideCertificateValidity = UnknownReason(.producedOutsideCertificateValidity)
        /// A critical extension this verifier does not process.
        public static let unhandledCriticalExtension = UnknownReason(.unhandledCriticalExtension)
        /// The request carried a nonce and the response does not echo it.
        public static let nonceMismatch = UnknownReason(.nonceMismatch)
        /// A verified response says `unknown`: the responder does not know the certificate.
        public static let responderSaysUnknown = UnknownReason(.responderSaysUnknown)
        /// The issuer of the certificate is not available, so the certificate ID cannot be formed.
        public static let issuerUnavailable = UnknownReason(.issuerUnavailable)
        /// The time budget of the evaluation ran out before a response arrived (see
        /// `RevocationOptions.timeBudget`).
        public static let timeout = UnknownReason(.timeout)
        /// The certificate names no OCSP responder (AIA) and no CRL distribution point the
        /// allowed methods could use, so there is nowhere to ask.
        public static let noResponderURL = UnknownReason(.noResponderURL)
        /// A live query was needed but network access is disabled
        /// (`RevocationOptions.networkAccessDisabled`) or no `RevocationFetcher` is configured.
        public static let networkAccessDisabled = UnknownReason(.networkAccessDisabled)
        /// The fetcher failed; the argument is the failure's ``TrustError/Code``, with the status
        /// for an HTTP status (`fetchHTTPStatus(503)`, `fetchFailed`…), so equal reasons mean the
        /// same kind of failure.
        public static func fetchFailed(_ identifier: String) -> UnknownReason { UnknownReason(.fetchFailed(identifier)) }
        /// The responder or distribution point sent more than the size limit allows.
        public static let responseTooLarge = UnknownReason(.responseTooLarge)
        /// The CRL does not cover this certificate: its issuing distribution point is limited to
        /// other certificates (only CAs, only end entities, another distribution point) or to
        /// some revocation reasons, so its silence says nothing about this certificate.
        public static let notCoveredByCRL = UnknownReason(.notCoveredByCRL)
        /// Not looked up because none is needed: the leaf is a short-lived certificate, valid for
        /// no longer than `RevocationOptions.shortLivedCertificateValidity`. CAs may issue such
        /// certificates without a CRL distribution point or OCSP responder, so nothing could be
        /// asked; the short validity takes the place of revocation. The only unknown status a
        /// hard-fail policy accepts.
        public static let shortLivedCertificate = UnknownReason(.shortLivedCertificate)

        /// The fetch error identifier of a ``fetchFailed(_:)``, else `nil`.
        public var fetchFailure: String? {
            if case .fetchFailed(let identifier) = kind { return identifier }
            return nil
        }

        /// The responder status of a ``responderError(_:)``, else `nil`.
        public var responderStatus: OCSPResponseStatus? {
            if case .responderError(let status) = kind { return status }
            return nil
        }

        /// A stable camel-case name, e.g. `badSignature` or `responderError(tryLater)`.
        public var identifier: String {
            switch kind {
            case .noResponse: "noResponse"
            case .malformed: "malformed"
            case .responderError(let status): "responderError(\(status))"
            case .badSignature: "badSignature"
            case .unauthorizedSigner: "unauthorizedSigner"
            case .certificateIDMismatch: "certificateIDMismatch"
            case .notYetValid: "notYetValid"
            case .stale: "stale"
            case .tooOld: "tooOld"
            case .producedOutsideCertificateValidity: "producedOutsideCertificateValidity"
            case .unhandledCriticalExtension: "unhandledCriticalExtension"
            case .nonceMismatch: "nonceMismatch"
            case .responderSaysUnknown: "responderSaysUnknown"
            case .issuerUnavailable: "issuerUnavailable"
            case .timeout: "timeout"
            case .noResponderURL: "noResponderURL"
            case .networkAccessDisabled: "networkAccessDisabled"
            case .fetchFailed(let identifier): "fetchFailed(\(identifier))"
            case .responseTooLarge: "responseTooLarge"
            case .notCoveredByCRL: "notCoveredByCRL"
            case .shortLivedCertificate: "shortLivedCertificate"
            }
        }

        public var description: String {
            switch kind {
            case .noResponse: "no OCSP response is available"
            case .malformed: "the OCSP response or CRL is malformed"
            case .responderError(let status): "the OCSP responder answered \(status) instead of a status"
            case .badSignature: "the signature of the OCSP response or CRL does not verify"
            case .unauthorizedSigner: "the OCSP response or CRL is not signed by the issuer or a responder it authorised"
            case .certificateIDMismatch: "the OCSP response is not about this certificate"
            case .notYetValid: "the OCSP response or CRL is not yet valid (thisUpdate is in the future)"
            case .stale: "the OCSP response or CRL is stale (nextUpdate has passed)"
            case .tooOld: "the OCSP response or CRL is older than the maximum age"
            case .producedOutsideCertificateValidity: "the OCSP response was produced outside the certificate's validity period"
            case .unhandledCriticalExtension: "the OCSP response or CRL has a critical extension that is not understood"
            case .nonceMismatch: "the OCSP response does not echo the request's nonce"
            case .responderSaysUnknown: "the OCSP responder does not know the certificate"
            case .issuerUnavailable: "the certificate's issuer is not available to identify it"
            case .timeout: "the revocation check ran out of time"
            case .noResponderURL: "the certificate names no OCSP responder or CRL distribution point that can be used"
            case .networkAccessDisabled: "a live revocation query was needed but network access is disabled"
            case .fetchFailed(let identifier): "fetching revocation data failed (\(identifier))"
            case .responseTooLarge: "the revocation response is larger than the size limit"
            case .notCoveredByCRL: "the CRL does not cover this certificate"
            case .shortLivedCertificate: "the certificate is short-lived and needs no revocation check"
            }
        }
    }
}
