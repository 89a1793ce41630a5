/// Why the App Store's signed data was refused: which check failed, and the reason in words.
///
/// Equality compares ``code`` only, so a caller (or a test) can ask which check refused the data
/// without matching prose; ``reason`` names the field, the certificate or the value.
public struct PurchaseVerificationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable code for each check, printed as its name (`"untrustedRoot"`): what the CLI's
    /// `--json` output and a server's logs carry.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case inputTooLarge, malformedJWS, unsupportedAlgorithm, malformedCertificate, wrongChainLength
            case untrustedRoot, chainValidationFailed, missingMarkerExtension, criticalMarkerExtension
            case invalidSignature, malformedPayload, signedInTheFuture, tooOld
            case bundleIDMismatch, appAppleIDMismatch, environmentMismatch, invalidConfiguration
            case revoked, revocationUnknown
            case malformedReceipt, wrongSignerCount, signerCertificateMismatch, deviceHashMismatch
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// More bytes than a signed value may have (``AppStoreSignedDataVerifier/maximumLength``).
        public static let inputTooLarge = Code(.inputTooLarge)
        /// Not a compact JWS as the App Store writes it: not three segments, base64url with
        /// padding or stray characters, a header that is not strict JSON (not UTF-8, a duplicate
        /// key, trailing text), no `x5c`.
        public static let malformedJWS = Code(.malformedJWS)
        /// An `alg` other than ES256 (`none`, an HMAC, another curve or scheme), or a `crit`.
        public static let unsupportedAlgorithm = Code(.unsupportedAlgorithm)
        /// An `x5c` entry that is not one DER certificate in standard base64.
        public static let malformedCertificate = Code(.malformedCertificate)
        /// An `x5c` of other than three certificates (leaf, intermediate, root).
        public static let wrongChainLength = Code(.wrongChainLength)
        /// An `x5c` root that is not, byte for byte, one of the configured roots.
        public static let untrustedRoot = Code(.untrustedRoot)
        /// The leaf and intermediate do not validate to the configured root at the validation
        /// time (a signature, validity, the CA flag, path length, key usage).
        public static let chainValidationFailed = Code(.chainValidationFailed)
        /// Apple's marker extension missing from the intermediate (1.2.840.113635.100.6.2.1) or
        /// the leaf (1.2.840.113635.100.6.11.1).
        public static let missingMarkerExtension = Code(.missingMarkerExtension)
        /// A marker extension marked critical, which Apple never does.
        public static let criticalMarkerExtension = Code(.criticalMarkerExtension)
        /// The signature is not the leaf's P-256 key's over the signing input, or the leaf's key
        /// is not a P-256 key.
        public static let invalidSignature = Code(.invalidSignature)
        /// A payload that is not strict JSON, or a field of the wrong type, or a required field
        /// missing.
        public static let malformedPayload = Code(.malformedPayload)
        /// A `signedDate` after the verification time (beyond the allowed clock skew).
        public static let signedInTheFuture = Code(.signedInTheFuture)
        /// A `signedDate` older than the configured maximum age.
        public static let tooOld = Code(.tooOld)
        /// The payload's bundle ID is not the configured one.
        public static let bundleIDMismatch = Code(.bundleIDMismatch)
        /// The payload's app Apple ID is not the configured one (production).
        public static let appAppleIDMismatch = Code(.appAppleIDMismatch)
        /// The payload's environment is not the configured one.
        public static let environmentMismatch = Code(.environmentMismatch)
        /// A certificate of the signing chain is revoked, according to a verified OCSP response
        /// or CRL: refused whatever the revocation mode, and whenever the data was signed.
        public static let revoked = Code(.revoked)
        /// The signing chain's revocation status could not be established (no responder
        /// answered, the time budget ran out, an answer did not verify) and the configuration
        /// needs it — hard-fail, or a chain that has expired since the data was signed. Not a
        /// verdict on the data: retry later (``PurchaseVerificationError/isRetryable``).
        public static let revocationUnknown = Code(.revocationUnknown)
        /// Not an App Store receipt as Apple writes it: BER that is truncated, too deep or too
        /// large, trailing bytes, a PKCS#7 structure that is not SignedData of id-data with its
        /// content present, a receipt payload that is not a SET of attributes of the documented
        /// types.
        public static let malformedReceipt = Code(.malformedReceipt)
        /// A receipt with other than one signer.
        public static let wrongSignerCount = Code(.wrongSignerCount)
        /// A receipt whose signer's `issuerAndSerialNumber` names no certificate of the receipt,
        /// or whose signer certificate is not the leaf of the validated chain.
        public static let signerCertificateMismatch = Code(.signerCertificateMismatch)
        /// A receipt whose SHA-1 hash is not that of the device identifier, opaque value and
        /// bundle ID given: a receipt copied from another device.
        public static let deviceHashMismatch = Code(.deviceHashMismatch)
        /// A verifier that cannot be made as configured (no root, production without an app
        /// Apple ID, the Xcode environment with Apple's roots).
        public static let invalidConfiguration = Code(.invalidConfiguration)

        public var description: String { base.rawValue }
    }

    public let code: Code
    /// What failed, in words: the field, the certificate, the values compared.
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// Whether the refusal is no verdict on the data and the same data may verify later: the
    /// revocation status was unknown where it was needed. Every other code is a verdict.
    public var isRetryable: Bool { code == .revocationUnknown }

    /// `untrustedRoot: the x5c root …`: the code first, so logs can be searched by it.
    public var description: String { "\(code): \(reason)" }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
