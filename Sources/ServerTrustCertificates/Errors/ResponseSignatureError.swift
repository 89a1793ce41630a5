/// Why a signed response was not accepted, or why signing material could not be used.
///
/// A struct with an opaque code, like ``TrustError``: equality compares ``code`` only, so a test
/// or a caller asks *what kind* of failure happened without matching prose
/// (`#expect(throws: ResponseSignatureError.bodyMismatch) { … }`). It is a type of its own rather
/// than more ``TrustError`` codes because it judges an HTTP response, not a TLS peer: a response
/// can fail here on a connection whose trust evaluation passed.
///
/// Verification checks run in a fixed order and the first failure is reported, so each code
/// below means "everything before it passed" (docs/SIGNED_RESPONSES.md: section 7 for v1,
/// section 15 for RFC 9421).
public struct ResponseSignatureError: Error, Hashable, Sendable, CustomStringConvertible {
    /// An opaque, extensible failure kind.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case missingSignature, malformedSignature, unsupportedVersion, untrustedIntermediate
            case intermediateExpired, duplicateSignedField, badSignature, replayedResponse, nonceMismatch, requestMismatch
            case staleRequestTime, bodyMismatch
            case missingChallenge, malformedChallenge, malformedKey, malformedIntermediateCertificate
            case keyMismatch, invalidConfiguration, openSSLFailure
            case missingComponent, absentComponent, unknownKey, algorithmMismatch, unsupportedAlgorithm
            case expiredSignature, notYetValidSignature, digestMismatch
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        // Verification (client side), in the order the checks run.

        /// The response has no `X-ServerTrust-Signature` field (v1), or no `Signature-Input` and
        /// `Signature` fields (RFC 9421).
        public static let missingSignature = Code(.missingSignature)
        /// A signature field is truncated, garbled, too long, repeated, or has a bad parameter.
        public static let malformedSignature = Code(.malformedSignature)
        /// The response is signed only under versions this client has no root for.
        public static let unsupportedVersion = Code(.unsupportedVersion)
        /// The intermediate key was not signed by any configured root of that version.
        public static let untrustedIntermediate = Code(.untrustedIntermediate)
        /// The intermediate key's expiry date has passed (clock-skew allowance included).
        public static let intermediateExpired = Code(.intermediateExpired)
        /// The response has more than one `ETag` or more than one `Location` field. A signature
        /// covers one value of each; with two, the value an application reads (the first)
        /// need not be the one signed — a proxy splitting `ETag: "a, b"` into two fields would
        /// otherwise keep the signature valid.
        public static let duplicateSignedField = Code(.duplicateSignedField)
        /// The Ed25519 signature does not verify: the status, ETag, Location or an echoed value
        /// was altered, or the signature was forged.
        public static let badSignature = Code(.badSignature)
        /// The response answers a request this verifier already accepted a response for.
        public static let replayedResponse = Code(.replayedResponse)
        /// The response answers another request's nonce.
        public static let nonceMismatch = Code(.nonceMismatch)
        /// The server signed a different request (method, host, port, path, query, request body
        /// or request time) from the one sent: the request was altered on the way.
        public static let requestMismatch = Code(.requestMismatch)
        /// The request time lies outside the freshness window (too old, or too far in the future).
        public static let staleRequestTime = Code(.staleRequestTime)
        /// The body is not the one the server signed.
        public static let bodyMismatch = Code(.bodyMismatch)

        // RFC 9421 verification (docs/SIGNED_RESPONSES.md, "RFC 9421 profile"): besides
        // missingSignature, malformedSignature, nonceMismatch, badSignature, replayedResponse and
        // bodyMismatch above.

        /// The signature that answers this request does not cover a component the host's policy
        /// requires (`@status`, a request binding, `content-digest`, or a field the response has
        /// such as `content-encoding`).
        public static let missingComponent = Code(.missingComponent)
        /// The signature covers a field or derived component the message does not have (a
        /// `content-encoding` stripped on the way), or one this verifier cannot resolve.
        public static let absentComponent = Code(.absentComponent)
        /// The signature's `keyid` names no key of the configured key set.
        public static let unknownKey = Code(.unknownKey)
        /// The signature's `alg` does not fit its key's type.
        public static let algorithmMismatch = Code(.algorithmMismatch)
        /// The signature's `alg` is not an algorithm RFC 9421 registers. (A registered one that
        /// does not fit the key — `rsa-v1_5-sha256`, or `hmac-sha256` for a `keyid` that is not
        /// a configured shared secret — is ``algorithmMismatch``.)
        public static let unsupportedAlgorithm = Code(.unsupportedAlgorithm)
        /// The signature's `expires` has passed, or its `created` is older than the window.
        public static let expiredSignature = Code(.expiredSignature)
        /// The signature's `created` lies in the future beyond the clock-skew allowance.
        public static let notYetValidSignature = Code(.notYetValidSignature)
        /// The `Content-Digest` field is malformed or names no algorithm this verifier checks
        /// (`sha-256`, `sha-512`); a digest that does not match the body is ``bodyMismatch``.
        public static let digestMismatch = Code(.digestMismatch)

        // Signing and configuration.

        /// The request carries no `X-ServerTrust-Nonce` or `X-ServerTrust-Request-Time`: it did
        /// not ask for a signature.
        public static let missingChallenge = Code(.missingChallenge)
        /// The nonce or request time header, or a challenge field, is malformed or out of range.
        public static let malformedChallenge = Code(.malformedChallenge)
        /// A key that is not a usable Ed25519 key (bad PEM, base64, length or key type).
        public static let malformedKey = Code(.malformedKey)
        /// An intermediate key certificate that does not parse.
        public static let malformedIntermediateCertificate = Code(.malformedIntermediateCertificate)
        /// The signing key is not the key its intermediate certificate certifies.
        public static let keyMismatch = Code(.keyMismatch)
        /// A verifier or signer that cannot work as configured (no roots, a bad version…).
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// OpenSSL failed for a reason other than the input.
        public static let openSSLFailure = Code(.openSSLFailure)

        public var description: String { base.rawValue }
    }

    public let code: Code
    /// One sentence saying what failed and, where possible, what to do about it.
    public let reason: String
    /// The HTTP status of the response that failed verification, when there was one: an
    /// unsigned `503` from a load balancer reads differently from an unsigned `200`.
    public let status: Int?
    public let file: String
    public let line: Int

    public init(_ code: Code, _ reason: String, status: Int? = nil, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.reason = reason
        self.status = status
        self.file = file
        self.line = line
    }

    /// A copy naming the response status.
    package func with(status: Int) -> ResponseSignatureError {
        ResponseSignatureError(code, reason, status: status, file: file, line: line)
    }

    public static func == (lhs: ResponseSignatureError, rhs: ResponseSignatureError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// Lets `#expect(throws: ResponseSignatureError.bodyMismatch)` read naturally.
    public static let missingSignature = ResponseSignatureError(.missingSignature, "")
    public static let malformedSignature = ResponseSignatureError(.malformedSignature, "")
    public static let unsupportedVersion = ResponseSignatureError(.unsupportedVersion, "")
    public static let untrustedIntermediate = ResponseSignatureError(.untrustedIntermediate, "")
    public static let intermediateExpired = ResponseSignatureError(.intermediateExpired, "")
    public static let duplicateSignedField = ResponseSignatureError(.duplicateSignedField, "")
    public static let badSignature = ResponseSignatureError(.badSignature, "")
    public static let replayedResponse = ResponseSignatureError(.replayedResponse, "")
    public static let nonceMismatch = ResponseSignatureError(.nonceMismatch, "")
    public static let requestMismatch = ResponseSignatureError(.requestMismatch, "")
    public static let staleRequestTime = ResponseSignatureError(.staleRequestTime, "")
    public static let bodyMismatch = ResponseSignatureError(.bodyMismatch, "")
    public static let missingChallenge = ResponseSignatureError(.missingChallenge, "")
    public static let malformedChallenge = ResponseSignatureError(.malformedChallenge, "")
    public static let malformedKey = ResponseSignatureError(.malformedKey, "")
    public static let malformedIntermediateCertificate = ResponseSignatureError(.malformedIntermediateCertificate, "")
    public static let keyMismatch = ResponseSignatureError(.keyMismatch, "")
    public static let invalidConfiguration = ResponseSignatureError(.invalidConfiguration, "")
    public static let openSSLFailure = ResponseSignatureError(.openSSLFailure, "")
    public static let missingComponent = ResponseSignatureError(.missingComponent, "")
    public static let absentComponent = ResponseSignatureError(.absentComponent, "")
    public static let unknownKey = ResponseSignatureError(.unknownKey, "")
    public static let algorithmMismatch = ResponseSignatureError(.algorithmMismatch, "")
    public static let unsupportedAlgorithm = ResponseSignatureError(.unsupportedAlgorithm, "")
    public static let expiredSignature = ResponseSignatureError(.expiredSignature, "")
    public static let notYetValidSignature = ResponseSignatureError(.notYetValidSignature, "")
    public static let digestMismatch = ResponseSignatureError(.digestMismatch, "")

    public var description: String {
        var text = "Response signature: " + reason
        if let status { text += " (HTTP status \(status))" }
        return text
    }
}
