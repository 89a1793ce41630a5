/// The error every ServerTrust API throws: which check failed, why, and the evidence.
///
/// Equality compares ``code`` only, so a test or a caller can ask *what kind* of failure
/// happened without matching prose: `#expect(throws: TrustError.pinMismatch) { … }`.
/// The ``description`` is written for the person who has to fix the configuration: a pin
/// failure lists every certificate of the validated chain with its pin beside the configured
/// pins.
public struct TrustError: Error, Hashable, Sendable, CustomStringConvertible {
    /// An opaque, extensible failure kind.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case malformedCertificate
            case malformedPublicKey
            case malformedPin
            case unsupportedPinAlgorithm
            case malformedCRL
            case malformedOCSPResponse
            case invalidHostPattern
            case invalidConfiguration
            case noCertificates
            case chainValidationFailed
            case hostMismatch
            case pinMismatch
            case noEvaluatorForHost
            case disabledEvaluatorInRelease
            case revoked
            case revocationStatusUnknown
            case openSSLFailure
            case unreadableInput
            case pinSetExpired
            case canaryDisagreement
            case invalidPolicyFile
            case malformedPrivateKey
            case privateKeyPassphraseRequired
            case privateKeyPassphraseIncorrect
            case privateKeyMismatch
            case tlsVersionBelowPolicy
            case deniedKey
            case keyExchangeBelowPolicy
            case certificateTransparency
            case unsupportedKey
            case weakKey
            case fetchTimedOut
            case fetchTooLarge
            case fetchHTTPStatus
            case fetchFailed
            case unsupportedURL
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// DER, PEM or base64 input that is not a certificate OpenSSL can parse.
        public static let malformedCertificate = Code(.malformedCertificate)
        /// Input that is not a SubjectPublicKeyInfo.
        public static let malformedPublicKey = Code(.malformedPublicKey)
        /// A pin string that is not `sha256/<base64 of 32 bytes>`.
        public static let malformedPin = Code(.malformedPin)
        /// A pin naming an algorithm other than SHA-256 (`sha1/…` is refused as weak).
        public static let unsupportedPinAlgorithm = Code(.unsupportedPinAlgorithm)
        /// A CRL that OpenSSL cannot parse.
        public static let malformedCRL = Code(.malformedCRL)
        /// An OCSP response that is empty, oversized, not DER, carries an undefined status, or
        /// whose successful body is not a parseable basic response.
        public static let malformedOCSPResponse = Code(.malformedOCSPResponse)
        /// A host pattern the trust manager refuses (`example.*`, `**.com`, empty labels…).
        public static let invalidHostPattern = Code(.invalidHostPattern)
        /// A policy that cannot be built as configured (an empty pin set, no anchors…).
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// The server presented no certificate.
        public static let noCertificates = Code(.noCertificates)
        /// Path validation to the anchors failed (signature, validity, purpose, constraints…).
        public static let chainValidationFailed = Code(.chainValidationFailed)
        /// The leaf is not valid for the requested host name or IP address.
        public static let hostMismatch = Code(.hostMismatch)
        /// No certificate or key of the validated chain matches a configured pin.
        public static let pinMismatch = Code(.pinMismatch)
        /// `allHostsMustBeEvaluated` is set and no pattern matches the host.
        public static let noEvaluatorForHost = Code(.noEvaluatorForHost)
        /// The disabled evaluator was asked to run in a release build without the unsafe opt-in.
        public static let disabledEvaluatorInRelease = Code(.disabledEvaluatorInRelease)
        /// A certificate of the chain is revoked.
        public static let revoked = Code(.revoked)
        /// Revocation status could not be established and the policy requires it.
        public static let revocationStatusUnknown = Code(.revocationStatusUnknown)
        /// OpenSSL failed for a reason other than the input (allocation, internal error).
        public static let openSSLFailure = Code(.openSSLFailure)
        /// A file or buffer could not be read.
        public static let unreadableInput = Code(.unreadableInput)
        /// The pin set (or every pin in it) is past its expiration date and the set's
        /// `PinSet.ExpiryBehaviour` is `PinSet.ExpiryBehaviour.failClosed`, or, as a finding,
        /// that pins were not enforced because the set fell back to default validation.
        public static let pinSetExpired = Code(.pinSetExpired)
        /// A canary policy reached a different verdict than the enforced one (a finding, never thrown).
        public static let canaryDisagreement = Code(.canaryDisagreement)
        /// A declarative policy file that cannot be loaded; the reason names the line and field.
        public static let invalidPolicyFile = Code(.invalidPolicyFile)
        /// A client identity's private key that is missing, not PEM (or PKCS#12), or that OpenSSL
        /// cannot parse.
        public static let malformedPrivateKey = Code(.malformedPrivateKey)
        /// A client identity's private key (or PKCS#12 file) is encrypted and no passphrase was given.
        public static let privateKeyPassphraseRequired = Code(.privateKeyPassphraseRequired)
        /// The passphrase given does not decrypt the private key (or PKCS#12 file).
        public static let privateKeyPassphraseIncorrect = Code(.privateKeyPassphraseIncorrect)
        /// A client identity's private key is not the key of its certificate.
        public static let privateKeyMismatch = Code(.privateKeyMismatch)
        /// The connection negotiated a TLS version below the host's `HostPolicy.minimumTLSVersion`.
        public static let tlsVersionBelowPolicy = Code(.tlsVersionBelowPolicy)
        /// A certificate of the chain, or its key, is on the trust manager's deny-list
        /// (`KeyDenyList`): refused whatever the host's policy says.
        public static let deniedKey = Code(.deniedKey)
        /// The connection's key exchange is not what the host's policy requires
        /// (`HostPolicy.keyExchange`): a classical group where post-quantum key exchange is
        /// required, or a transport that cannot tell which group was negotiated.
        public static let keyExchangeBelowPolicy = Code(.keyExchangeBelowPolicy)
        /// The server's certificate does not meet the host's Certificate Transparency requirement
        /// (`HostPolicy.certificateTransparency`): too few verified SCTs from the application's
        /// log list, too few operators, or a stale list where the host fails closed. The reason
        /// begins with what was missing (`notEnoughSCTs`, `notEnoughOperators`, `unknownLog`,
        /// `badSCTSignature`, `staleLogList`); `TrustEvaluation.certificateTransparency` has it typed.
        public static let certificateTransparency = Code(.certificateTransparency)
        /// A signature key (signed responses, TUF, a CT log) of a type or curve that is not
        /// accepted — Ed25519, EC P-256 and RSA verify — or an algorithm the key cannot sign with.
        public static let unsupportedKey = Code(.unsupportedKey)
        /// An RSA signature key shorter than 2,048 bits.
        public static let weakKey = Code(.weakKey)
        /// A fetch (OCSP, CRL: `RevocationFetcher`) got no complete response by its deadline.
        public static let fetchTimedOut = Code(.fetchTimedOut)
        /// A fetched body, or its headers, exceeded the request's size limit.
        public static let fetchTooLarge = Code(.fetchTooLarge)
        /// A fetch was answered with an HTTP status other than 200 (``Evidence/httpStatus``).
        public static let fetchHTTPStatus = Code(.fetchHTTPStatus)
        /// A fetch failed in DNS, the connection, TLS or the protocol.
        public static let fetchFailed = Code(.fetchFailed)
        /// A URL of a scheme or form the fetcher does not handle (`ldap://`, …).
        public static let unsupportedURL = Code(.unsupportedURL)

        public var description: String { base.rawValue }
    }

    /// One certificate of a chain, as shown in a failure message.
    public struct CertificateSummary: Hashable, Sendable, CustomStringConvertible {
        public let pin: Pin
        public let subject: String
        public init(pin: Pin, subject: String) {
            self.pin = pin
            self.subject = subject
        }
        public var description: String { "\(pin): \(subject)" }
    }

    /// What the failing check looked at.
    public struct Evidence: Hashable, Sendable {
        /// The pins the policy was configured with.
        public var configuredPins: [Pin] = []
        /// The chain the check ran against (validated when validation succeeded, else presented).
        public var chain: [CertificateSummary] = []
        /// OpenSSL's verification error (`X509_V_ERR_*` number and text), when path validation failed.
        public var verifyResult: Int32?
        public var verifyResultText: String?
        /// The chain depth OpenSSL reported the error at (0 = leaf).
        public var depth: Int?
        /// Extra detail from OpenSSL's error queue.
        public var openSSLErrors: [String] = []
        /// The per-certificate revocation results of a revocation check, leaf first.
        public var revocation: [CertificateRevocationResult] = []
        /// The HTTP status of a ``Code/fetchHTTPStatus`` failure.
        public var httpStatus: Int?

        public init() {}

        var isEmpty: Bool {
            configuredPins.isEmpty && chain.isEmpty && verifyResult == nil && openSSLErrors.isEmpty && revocation.isEmpty
                && httpStatus == nil
        }
    }

    public let code: Code
    /// One sentence saying what failed and, where possible, how to fix it.
    public let reason: String
    /// The evaluator that failed, e.g. `PinnedKeyHashesTrustEvaluator`.
    public let evaluator: String?
    /// The host being evaluated.
    public let host: String?
    public let evidence: Evidence
    public let file: String
    public let line: Int

    public init(
        _ code: Code,
        _ reason: String,
        evaluator: String? = nil,
        host: String? = nil,
        evidence: Evidence = Evidence(),
        file: String = #fileID,
        line: Int = #line
    ) {
        self.code = code
        self.reason = reason
        self.evaluator = evaluator
        self.host = host
        self.evidence = evidence
        self.file = file
        self.line = line
    }

    /// A copy attributed to an evaluator and host, keeping the original code, reason and evidence.
    package func attributed(to evaluator: String, host: String?) -> TrustError {
        TrustError(
            code, reason, evaluator: self.evaluator ?? evaluator, host: self.host ?? host,
            evidence: evidence, file: file, line: line)
    }

    /// Whether this is why a signature key could not be made (`SignaturePublicKey`,
    /// `SignaturePrivateKey`): malformed, of a kind not accepted, or too weak.
    package var isKeyRefusal: Bool {
        [Code.malformedPublicKey, .malformedPrivateKey, .unsupportedKey, .weakKey].contains(code)
    }

    public static func == (lhs: TrustError, rhs: TrustError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// Lets `#expect(throws: TrustError.pinMismatch)` read naturally.
    public static let malformedCertificate = TrustError(.malformedCertificate, "")
    public static let malformedPublicKey = TrustError(.malformedPublicKey, "")
    public static let malformedPin = TrustError(.malformedPin, "")
    public static let unsupportedPinAlgorithm = TrustError(.unsupportedPinAlgorithm, "")
    public static let malformedCRL = TrustError(.malformedCRL, "")
    public static let malformedOCSPResponse = TrustError(.malformedOCSPResponse, "")
    public static let invalidHostPattern = TrustError(.invalidHostPattern, "")
    public static let invalidConfiguration = TrustError(.invalidConfiguration, "")
    public static let noCertificates = TrustError(.noCertificates, "")
    public static let chainValidationFailed = TrustError(.chainValidationFailed, "")
    public static let hostMismatch = TrustError(.hostMismatch, "")
    public static let pinMismatch = TrustError(.pinMismatch, "")
    public static let noEvaluatorForHost = TrustError(.noEvaluatorForHost, "")
    public static let disabledEvaluatorInRelease = TrustError(.disabledEvaluatorInRelease, "")
    public static let revoked = TrustError(.revoked, "")
    public static let revocationStatusUnknown = TrustError(.revocationStatusUnknown, "")
    public static let openSSLFailure = TrustError(.openSSLFailure, "")
    public static let unreadableInput = TrustError(.unreadableInput, "")
    public static let pinSetExpired = TrustError(.pinSetExpired, "")
    public static let canaryDisagreement = TrustError(.canaryDisagreement, "")
    public static let invalidPolicyFile = TrustError(.invalidPolicyFile, "")
    public static let malformedPrivateKey = TrustError(.malformedPrivateKey, "")
    public static let privateKeyPassphraseRequired = TrustError(.privateKeyPassphraseRequired, "")
    public static let privateKeyPassphraseIncorrect = TrustError(.privateKeyPassphraseIncorrect, "")
    public static let privateKeyMismatch = TrustError(.privateKeyMismatch, "")
    public static let tlsVersionBelowPolicy = TrustError(.tlsVersionBelowPolicy, "")
    public static let keyExchangeBelowPolicy = TrustError(.keyExchangeBelowPolicy, "")
    public static let certificateTransparency = TrustError(.certificateTransparency, "")
    public static let unsupportedKey = TrustError(.unsupportedKey, "")
    public static let weakKey = TrustError(.weakKey, "")

    /// What a fetcher returns when it has no body (`RevocationFetcher`): each takes the detail
    /// for people — the curl error text, the URL, the status line.
    public static func fetchTimedOut(_ detail: String = "") -> TrustError {
        TrustError(.fetchTimedOut, detail.isEmpty ? "no complete response before the deadline" : detail)
    }
    /// The body (or its headers) exceeded the request's size limit.
    public static func fetchTooLarge(_ detail: String = "") -> TrustError {
        TrustError(.fetchTooLarge, detail.isEmpty ? "the response exceeded its size limit" : detail)
    }
    /// The server answered `status` (not 200); ``Evidence/httpStatus`` holds it.
    public static func fetchHTTPStatus(_ status: Int, _ detail: String = "") -> TrustError {
        var evidence = Evidence()
        evidence.httpStatus = status
        return TrustError(.fetchHTTPStatus, "HTTP status \(status)" + (detail.isEmpty ? "" : ": \(detail)"), evidence: evidence)
    }
    /// DNS, connection, TLS or protocol failure.
    public static func fetchFailed(_ detail: String = "") -> TrustError {
        TrustError(.fetchFailed, detail.isEmpty ? "the fetch failed" : detail)
    }
    /// A URL scheme or form the fetcher does not handle.
    public static func unsupportedURL(_ detail: String = "") -> TrustError {
        TrustError(.unsupportedURL, detail.isEmpty ? "a URL the fetcher does not handle" : detail)
    }

    public var description: String {
        var text = ""
        if let evaluator { text += "\(evaluator): " }
        text += reason
        if let host, !host.isEmpty, !reason.contains(host) { text += " (host \(host.debugDescription))" }
        if let result = evidence.verifyResult {
            text += "\n  OpenSSL verify error \(result)"
            if let t = evidence.verifyResultText { text += " (\(t))" }
            if let depth = evidence.depth { text += " at depth \(depth)" }
        }
        if !evidence.configuredPins.isEmpty {
            text += "\n  Configured pins:"
            for pin in evidence.configuredPins { text += "\n    \(pin)" }
        }
        if !evidence.chain.isEmpty {
            text += evidence.configuredPins.isEmpty ? "\n  Chain:" : "\n  Peer certificate chain:"
            for entry in evidence.chain { text += "\n    \(entry)" }
        }
        if !evidence.revocation.isEmpty {
            text += "\n  Revocation:"
            for result in evidence.revocation { text += "\n    \(result)" }
        }
        for error in evidence.openSSLErrors { text += "\n  OpenSSL: \(error)" }
        return text
    }
}
