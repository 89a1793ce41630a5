public import Foundation
public import ServerTrust
import ServerTrustCertificates

/// Verifies a legacy App Store receipt — the PKCS#7 app receipt of `Bundle.appStoreReceiptURL`
/// that older apps still send — against Apple roots the server configures, and returns its
/// fields typed.
///
/// Each receipt is checked in this order, and refused with the code of the first check it fails
/// (``PurchaseVerificationError/Code``):
///
/// 1. At most ``maximumLength`` bytes (`inputTooLarge`).
/// 2. BER as Apple writes it — indefinite lengths and a constructed OCTET STRING allowed,
///    anything else malformed refused: truncation, more than 32 levels of nesting, trailing
///    bytes (`malformedReceipt`).
/// 3. PKCS#7 SignedData of id-data, the content present; no CRLs; exactly one signer
///    (`malformedReceipt`, `wrongSignerCount`).
/// 4. The signer certificate is the receipt's certificate its issuerAndSerialNumber names
///    (`signerCertificateMismatch`).
/// 5. The payload reads as a receipt (`malformedReceipt`).
/// 6. The signer certificate validates to one of the configured roots, through the
///    receipt's other certificates as intermediates; a root the receipt carries is never
///    trusted for being there (`untrustedRoot` when the chain leads to no configured root,
///    `chainValidationFailed` when it does but does not validate: a signature, validity, the
///    CA flag, path length, key usage). The validated chain is signer, intermediate, root, its
///    leaf the signer certificate.
/// 7. Apple's marker extensions, present and not critical: 1.2.840.113635.100.6.2.1 on the
///    intermediate (Apple WWDR), 1.2.840.113635.100.6.11.1 on the signer
///    (`missingMarkerExtension`, `criticalMarkerExtension`); the signer and the intermediate
///    not revoked, as the ``AppStoreRevocationPolicy`` says (`revoked`, `revocationUnknown`).
/// 8. The RSA PKCS#1 v1.5 signature (SHA-1 or SHA-256) of the signer certificate's key over the
///    content, or over the signed attributes whose messageDigest is the content's
///    (`invalidSignature`).
/// 9. The bundle ID is the configured one (`bundleIDMismatch`), and the receipt type the
///    configured environment when one is (`environmentMismatch`).
///
/// **Validation time.** Given a time, the chain is judged at it and nothing moves it. Given
/// none, the chain must have been valid at the receipt's creation date, and is judged now — or,
/// when it has expired since, at the creation date on the evidence the signed-data verifier
/// asks for (``AppStoreSignedDataVerifier``, "Validation time"): the creation date is the
/// signer's word. Whether the receipt is the device's own is a separate check the app's server
/// makes with the device identifier: ``AppStoreReceipt/checkDevice(identifier:)``.
///
/// Share one verifier across tasks; copies share the chains it remembers.
public struct AppStoreReceiptVerifier: Sendable {
    /// The most bytes a receipt may have (4 MiB); Apple's are tens of kilobytes, a few hundred
    /// with a long purchase history.
    public static let maximumLength = 4 * 1024 * 1024

    /// OID of Apple's marker on the intermediate (WWDR) certificate of a receipt's chain.
    public static let intermediateMarkerOID = AppleSigningTrust.appleIntermediateMarkerOID
    /// OID of Apple's marker on a receipt's signer certificate.
    public static let signerMarkerOID = "1.2.840.113635.100.6.11.1"

    /// The app's bundle ID.
    public let bundleID: String
    /// The environment receipts must come from (their receipt type), or nil for any.
    public let environment: AppStoreEnvironment?

    private let trust: Trust
    /// Where "now" comes from when no time is given; tests move it.
    var clock: @Sendable () -> Date = { Date() }

    private enum Trust: Sendable {
        /// Apple's chain to a root of the set in force.
        case apple(SigningChainVerifier)
        /// StoreKit Testing in Xcode: the one self-signed certificate configured.
        case xcode(StoreKitTestCertificate)
    }

    /// A verifier for one app.
    ///
    /// - Parameters:
    ///   - roots: the roots a receipt's chain must end at; default Apple's
    ///     (``AppleRootCertificates/all``; receipts end at Apple Root CA, Apple Inc.'s RSA root).
    ///   - bundleID: the app's bundle ID.
    ///   - environment: production or sandbox to accept only receipts of that receipt type; nil
    ///     (the default) for either.
    ///   - revocation: how the signing chain's revocation is checked; no default, so that
    ///     offline verification is a stated choice.
    /// - Throws: ``PurchaseVerificationError/Code/invalidConfiguration`` for no root, an empty
    ///   bundle ID, or the Xcode and local-testing environments (Xcode's receipts are verified
    ///   by ``xcodeTesting(storeKitCertificate:bundleID:)`` only).
    public init(
        roots: [Certificate] = AppleRootCertificates.all, bundleID: String, environment: AppStoreEnvironment? = nil,
        revocation: AppStoreRevocationPolicy
    ) throws(PurchaseVerificationError) {
        try self.init(
            trust: LiveAppleSigningTrust(try AppleSigningTrust(roots: roots)), bundleID: bundleID, environment: environment, revocation: revocation)
    }

    /// A verifier for one app that trusts the ``LiveAppleSigningTrust`` in force at each
    /// verification — the one a trust update replaces — its roots, its markers, and its
    /// intermediates for a receipt that does not carry its own.
    ///
    /// - Throws: as ``init(roots:bundleID:environment:revocation:)``.
    public init(
        trust: LiveAppleSigningTrust, bundleID: String, environment: AppStoreEnvironment? = nil, revocation: AppStoreRevocationPolicy
    ) throws(PurchaseVerificationError) {
        if let environment, environment == .xcode || environment == .localTesting {
            throw PurchaseVerificationError(
                .invalidConfiguration,
                "The \(environment) environment's receipts are not signed by Apple: verify Xcode's with "
                    + "AppStoreReceiptVerifier.xcodeTesting(storeKitCertificate:bundleID:).")
        }
        try self.init(trust: .apple(SigningChainVerifier(trust: trust, revocation: revocation)), bundleID: bundleID, environment: environment)
    }

    private init(trust: Trust, bundleID: String, environment: AppStoreEnvironment?) throws(PurchaseVerificationError) {
        guard !bundleID.isEmpty else {
            throw PurchaseVerificationError(.invalidConfiguration, "The bundle ID is empty.")
        }
        self.trust = trust
        self.bundleID = bundleID
        self.environment = environment
    }

    /// A verifier of receipts StoreKit Testing in Xcode signs, for a debug build's tests: one
    /// certificate in the receipt, byte for byte `storeKitCertificate`, whose key signs; its
    /// validity judged at the receipt's creation date (or the time given); the receipt type
    /// `Xcode`. Nothing of Apple's vouches for it.
    ///
    /// - Throws: ``PurchaseVerificationError/Code/invalidConfiguration`` in a release build (see
    ///   ``unsafeAcceptingXcodeSignedReceiptsInReleaseBuild(storeKitCertificate:bundleID:)``), or
    ///   for one of Apple's roots.
    public static func xcodeTesting(storeKitCertificate: Certificate, bundleID: String) throws(PurchaseVerificationError) -> Self {
        #if DEBUG
        return try unsafeAcceptingXcodeSignedReceiptsInReleaseBuild(storeKitCertificate: storeKitCertificate, bundleID: bundleID)
        #else
        throw PurchaseVerificationError(
            .invalidConfiguration,
            "Xcode-signed receipts are accepted in debug builds only: a release build that trusts the StoreKit test certificate "
                + "grants whatever anyone with its key signs. To inspect test material in a release build, call "
                + "unsafeAcceptingXcodeSignedReceiptsInReleaseBuild(storeKitCertificate:bundleID:).")
        #endif
    }

    /// ``xcodeTesting(storeKitCertificate:bundleID:)`` in any build: for tools that inspect test
    /// material, never for a server that grants purchases.
    public static func unsafeAcceptingXcodeSignedReceiptsInReleaseBuild(storeKitCertificate: Certificate, bundleID: String) throws(PurchaseVerificationError) -> Self {
        try Self(trust: .xcode(StoreKitTestCertificate(storeKitCertificate, keyKind: .rsa)), bundleID: bundleID, environment: .xcode)
    }

    /// Whether a verification may wait for a revocation fetch (the `async` forms then run it on
    /// a thread of their own).
    var mayFetch: Bool {
        switch trust {
        case .apple(let chains): chains.revocation.mayFetch
        case .xcode: false
        }
    }

    /// Verifies a receipt's DER (or BER) bytes.
    ///
    /// - Parameters:
    ///   - receipt: the receipt file's bytes.
    ///   - time: the time to judge the signing chain at; nil (the default) for the rule above.
    /// - Returns: the receipt's fields.
    /// - Throws: ``PurchaseVerificationError`` naming the first check that failed.
    public func verify(_ receipt: [UInt8], at time: Date? = nil) throws(PurchaseVerificationError) -> AppStoreReceipt {
        guard receipt.count <= Self.maximumLength else {
            throw PurchaseVerificationError(
                .inputTooLarge, "The receipt is \(receipt.count) bytes, over the \(Self.maximumLength)-byte limit.")
        }
        let signedData = try PKCS7SignedData(ber: receipt, maximumLength: Self.maximumLength)
        let signer = try signedData.signerCertificate()
        let receiptFields = try AppStoreReceipt(payload: signedData.content)
        let others = signedData.certificates.filter { $0.certificate != signer.certificate }
        let key: SignaturePublicKey
        switch trust {
        case .apple(let chains):
            key = try verifyChain(signer: signer, others: others, createdAt: receiptFields.creationDate, at: time, chains: chains)
        case .xcode(let storeKit):
            guard signer.certificate.derEncoded == storeKit.certificate.derEncoded else {
                throw PurchaseVerificationError(
                    .untrustedRoot, "The receipt's signer is not the configured StoreKit test certificate (\(storeKit.certificate.subject)).")
            }
            try storeKit.checkValid(at: time ?? receiptFields.creationDate)
            key = storeKit.key
        }
        try signedData.verifySignature(with: key, of: signer.certificate)
        guard receiptFields.bundleID == bundleID else {
            throw PurchaseVerificationError(
                .bundleIDMismatch, "The receipt is for bundle ID \"\(receiptFields.bundleID)\", not \"\(bundleID)\".")
        }
        if let environment, receiptFields.environment != environment {
            throw PurchaseVerificationError(
                .environmentMismatch, "The receipt's type is \(receiptFields.receiptType.map { "\"\($0)\"" } ?? "absent"), not the \(environment) environment's.")
        }
        return receiptFields
    }

    /// Verifies a receipt in base64 (what apps send, and `verifyReceipt` took): standard
    /// alphabet, padded; whitespace around it is ignored.
    ///
    /// - Throws: ``PurchaseVerificationError/Code/malformedReceipt`` for text that is not
    ///   base64, and what ``verify(_:at:)-3omzl`` throws.
    public func verify(base64Encoded text: String, at time: Date? = nil) throws(PurchaseVerificationError) -> AppStoreReceipt {
        let utf8 = text.utf8
        guard utf8.count <= (Self.maximumLength / 3 + 1) * 4 + 1024 else {
            throw PurchaseVerificationError(.inputTooLarge, "The base64 receipt is \(utf8.count) bytes, over the limit.")
        }
        let trimmed = utf8.drop { Self.isSpace($0) }.reversed().drop { Self.isSpace($0) }.reversed()
        guard let bytes = StrictBase64.decode(Array(trimmed)) else {
            throw PurchaseVerificationError(.malformedReceipt, "The receipt is not standard base64 with padding.")
        }
        return try verify(bytes, at: time)
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    /// Steps 6 and 7: the signer certificate and the receipt's other certificates
    /// (intermediates, never anchors) verified by the shared signing-chain verifier — path
    /// validation, markers, revocation, the validation-time rule — and, without a time given,
    /// valid at the creation date too. Returns the signer's key, parsed once per chain.
    private func verifyChain(
        signer: ReceiptCertificate, others: [ReceiptCertificate], createdAt: Date, at time: Date?, chains: SigningChainVerifier
    ) throws(PurchaseVerificationError) -> SignaturePublicKey {
        let verified: SigningChainVerifier.Verified
        do {
            var key = signer.der
            for other in others { key += other.der }
            verified = try chains.verify(
                key: key,
                presented: { current in
                    let presented = [signer.certificate] + others.map(\.certificate)
                    return presented + current.intermediates.filter { !presented.contains($0) }
                },
                signedAt: { createdAt }, at: time ?? clock(), fixed: time != nil)
        } catch where error.code == .chainValidationFailed && !leadsToConfiguredRoot(signer, others, under: chains.trust.current) {
            throw PurchaseVerificationError(.untrustedRoot, error.reason)
        }
        guard verified.chain.first == signer.certificate else {
            throw PurchaseVerificationError(.signerCertificateMismatch, "The validated chain's leaf is not the receipt's signer certificate.")
        }
        if time == nil, !(verified.validFrom <= createdAt && createdAt <= verified.validUntil),
            let invalid = verified.chain.first(where: { !($0.notValidBefore <= createdAt && createdAt <= $0.notValidAfter) })
        {
            throw PurchaseVerificationError(
                .chainValidationFailed,
                "The receipt says it was created at \(createdAt.formatted(.iso8601)), when \(invalid.subject) was not valid "
                    + "(\(invalid.notValidBefore.formatted(.iso8601)) to \(invalid.notValidAfter.formatted(.iso8601))).")
        }
        return verified.key
    }

    /// Whether the chain the names make, from the signer up through the receipt's certificates,
    /// ends at a configured root or at a certificate a configured root's name issued: then a
    /// failed validation is the chain's fault (`chainValidationFailed`), otherwise the root's
    /// (`untrustedRoot`). Only read after validation has failed: names never admit a chain.
    private func leadsToConfiguredRoot(
        _ signer: ReceiptCertificate, _ others: [ReceiptCertificate], under trust: AppleSigningTrust
    ) -> Bool {
        let (roots, rootSubjects) = (trust.store, trust.rootSubjects)
        var current = signer
        for _ in 0...others.count {
            if roots.holds(current.certificate) { return true }
            if current.issuer == current.subject { return false }
            guard let parent = others.first(where: { $0.subject == current.issuer && $0.certificate != current.certificate }) else {
                return rootSubjects.contains(current.issuer)
            }
            current = parent
        }
        return false
    }
}
