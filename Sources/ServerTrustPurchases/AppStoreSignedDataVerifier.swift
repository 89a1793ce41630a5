public import Foundation
public import ServerTrust
import ServerTrustCertificates

/// Verifies the App Store's signed data — a StoreKit 2 transaction (`jwsRepresentation`), a
/// subscription's renewal info, an App Store Server Notification v2, an app transaction —
/// against Apple's roots (or roots the server configures), before anything is granted.
///
/// Each value is checked in this order, and refused with the code of the first check it fails
/// (``PurchaseVerificationError/Code``):
///
/// 1. At most ``maximumLength`` bytes; a compact JWS read strictly: three
///    segments, base64url without padding, a strict-JSON header with `alg` exactly `ES256`
///    and an `x5c` of exactly three certificates.
/// 2. The `x5c` root is, byte for byte, one of the configured roots: a root is never trusted
///    because the sender put it there.
/// 3. The leaf and intermediate validate to that root with ServerTrust's path validator
///    (signatures, validity, CA flag, path length, key usage; no TLS purpose, no strict
///    profile), through that intermediate, at the validation time (below).
/// 4. Apple's marker extensions are present and not critical: 1.2.840.113635.100.6.2.1 on the
///    intermediate, 1.2.840.113635.100.6.11.1 on the leaf.
/// 5. The leaf and intermediate are not revoked, as the ``AppStoreRevocationPolicy`` says.
/// 6. The signature is the leaf's P-256 key's over the exact signing input.
/// 7. The payload is strict JSON with the fields the type needs, of the types Apple documents;
///    `signedDate` is not after the verification time (beyond ``allowedClockSkew``) nor older
///    than ``maximumAge``.
/// 8. What Apple defines per type: a transaction's bundle ID and environment; a renewal info's
///    environment; a notification's bundle ID, app Apple ID (production) and environment, with
///    its nested transaction and renewal info verified as JWS of their own; an app
///    transaction's bundle ID, app Apple ID (production) and receipt type.
///
/// **Validation time.** Given a time, the chain is judged at it, and nothing moves it: a
/// certificate expired then is refused. Given none (the default), the chain is judged now; a
/// chain that has expired or been rotated since the data was signed is judged at `signedDate`
/// instead — only with revocation checking on, and only when a verified answer produced at or
/// after `signedDate` shows its certificates were not revoked (a live one, or the last one this
/// verifier saw while they were valid); otherwise it is refused, as
/// ``PurchaseVerificationError/Code/revocationUnknown`` (retry later) or, with revocation off,
/// ``PurchaseVerificationError/Code/chainValidationFailed``. A `signedDate` in the future is
/// always refused; ``maximumAge`` bounds how old data may be. See
/// <doc:VerifyingAppStorePurchases>.
///
/// A chain that verified is remembered with its revocation answers (at most 64 chains): a new
/// transaction from a known signing certificate costs one ES256 verification and a JSON decode.
/// Share one verifier across tasks; copies share what it remembers.
///
/// With revocation checking on, a chain whose answers are not cached is checked with the
/// policy's fetcher, which blocks the calling thread for at most the policy's time budget.
public struct AppStoreSignedDataVerifier: Sendable {
    /// The most bytes a signed value may have; a notification with its nested transaction and
    /// renewal info is under 16 KiB.
    public static let maximumLength = 256 * 1024

    /// OID of Apple's marker on the intermediate (WWDR) certificate of App Store signed data.
    public static let intermediateMarkerOID = AppleSigningTrust.appleIntermediateMarkerOID
    /// OID of Apple's marker on the leaf certificate of App Store signed data.
    public static let leafMarkerOID = AppleSigningTrust.appleLeafMarkerOID

    public let bundleID: String
    /// The app's Apple ID; required in production, where notifications and app transactions
    /// carry it.
    public let appAppleID: Int64?
    public let environment: AppStoreEnvironment
    /// The oldest `signedDate` accepted, as an age at the verification time; nil (the default)
    /// accepts any age the chain's validity allows.
    public var maximumAge: TimeInterval?
    /// How far `signedDate` may be after the verification time (clocks differ). Default 60 s.
    public var allowedClockSkew: TimeInterval = 60

    private let trust: Trust
    /// Signing chains parsed and validated so far: a verification that found its chain
    /// remembered did neither. For tests.
    var chainValidations: Int {
        if case .apple(let chains) = trust { return chains.validations }
        return 0
    }

    /// Where "now" comes from when no time is given; tests move it.
    var clock: @Sendable () -> Date = { Date() }

    /// Who signs: Apple, through a chain to a configured root; or, for StoreKit Testing in
    /// Xcode only, the one self-signed certificate the caller configured.
    private enum Trust: Sendable {
        case apple(SigningChainVerifier)
        case xcode(StoreKitTestCertificate)
    }

    /// A verifier for one app in one environment.
    ///
    /// - Parameters:
    ///   - roots: the roots `x5c` chains must end at; default Apple's
    ///     (``AppleRootCertificates/all``; App Store signed data ends at Apple Root CA – G3).
    ///   - bundleID: the app's bundle ID.
    ///   - appAppleID: the app's Apple ID; required when `environment` is production.
    ///   - environment: production or sandbox.
    ///   - revocation: how the signing chain's revocation is checked; no default, so that
    ///     offline verification is a stated choice (``AppStoreRevocationPolicy/disabled``).
    /// - Throws: ``PurchaseVerificationError/Code/invalidConfiguration`` for no root, an empty
    ///   bundle ID, production without an app Apple ID, or the Xcode and local-testing
    ///   environments: Xcode's data is verified only by ``xcodeTesting(storeKitCertificate:bundleID:)``,
    ///   and local testing's is not signed at all.
    public init(
        roots: [Certificate] = AppleRootCertificates.all, bundleID: String, appAppleID: Int64?, environment: AppStoreEnvironment,
        revocation: AppStoreRevocationPolicy
    ) throws(PurchaseVerificationError) {
        try self.init(
            trust: LiveAppleSigningTrust(try AppleSigningTrust(roots: roots)), bundleID: bundleID, appAppleID: appAppleID, environment: environment,
            revocation: revocation)
    }

    /// A verifier for one app in one environment that trusts the ``LiveAppleSigningTrust`` in
    /// force at each verification — the one a trust update replaces (ServerTrustUpdates'
    /// `TrustUpdateClient.appleSigningTrust`). A chain verified under an earlier set is
    /// verified again under the new one.
    ///
    /// - Throws: as ``init(roots:bundleID:appAppleID:environment:revocation:)``.
    public init(
        trust: LiveAppleSigningTrust, bundleID: String, appAppleID: Int64?, environment: AppStoreEnvironment, revocation: AppStoreRevocationPolicy
    ) throws(PurchaseVerificationError) {
        guard environment != .xcode, environment != .localTesting else {
            throw PurchaseVerificationError(
                .invalidConfiguration,
                "The \(environment) environment's data is not signed by Apple: verify Xcode's with AppStoreSignedDataVerifier.xcodeTesting"
                    + "(storeKitCertificate:bundleID:); local testing's cannot be verified.")
        }
        guard environment != .production || appAppleID != nil else {
            throw PurchaseVerificationError(.invalidConfiguration, "The production environment needs the app's Apple ID.")
        }
        try self.init(
            trust: .apple(SigningChainVerifier(trust: trust, revocation: revocation)), bundleID: bundleID, appAppleID: appAppleID,
            environment: environment)
    }

    private init(trust: Trust, bundleID: String, appAppleID: Int64?, environment: AppStoreEnvironment) throws(PurchaseVerificationError) {
        guard !bundleID.isEmpty else {
            throw PurchaseVerificationError(.invalidConfiguration, "The bundle ID is empty.")
        }
        self.trust = trust
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.environment = environment
    }

    /// A verifier of data signed by StoreKit Testing in Xcode, for a debug build's tests: an
    /// `x5c` of exactly one certificate, byte for byte `storeKitCertificate` (the one Xcode's
    /// StoreKit configuration exports), whose key signs; the environment `Xcode`. Nothing of
    /// Apple's vouches for it: whoever holds that certificate's key can sign anything, so it
    /// is never trusted unless configured here, and the certificate's validity is judged at
    /// the data's `signedDate` (or the time given).
    ///
    /// - Throws: ``PurchaseVerificationError/Code/invalidConfiguration`` in a release build
    ///   (use ``unsafeAcceptingXcodeSignedDataInReleaseBuild(storeKitCertificate:bundleID:)``
    ///   to inspect test material there), for one of Apple's roots, or a certificate whose key
    ///   is not P-256.
    public static func xcodeTesting(storeKitCertificate: Certificate, bundleID: String) throws(PurchaseVerificationError) -> Self {
        #if DEBUG
        return try unsafeAcceptingXcodeSignedDataInReleaseBuild(storeKitCertificate: storeKitCertificate, bundleID: bundleID)
        #else
        throw PurchaseVerificationError(
            .invalidConfiguration,
            "Xcode-signed data is accepted in debug builds only: a release build that trusts the StoreKit test certificate "
                + "grants whatever anyone with its key signs. To inspect test material in a release build, call "
                + "unsafeAcceptingXcodeSignedDataInReleaseBuild(storeKitCertificate:bundleID:).")
        #endif
    }

    /// ``xcodeTesting(storeKitCertificate:bundleID:)`` in any build: for tools that inspect
    /// test material (`servertrust purchases verify --environment xcode --root …`), never for a
    /// server that grants purchases.
    public static func unsafeAcceptingXcodeSignedDataInReleaseBuild(storeKitCertificate: Certificate, bundleID: String) throws(PurchaseVerificationError) -> Self {
        try Self(
            trust: .xcode(StoreKitTestCertificate(storeKitCertificate, keyKind: .ecdsaP256)), bundleID: bundleID, appAppleID: nil,
            environment: .xcode)
    }

    /// Whether a verification may wait for a revocation fetch (the `async` forms then run it on
    /// a thread of their own).
    var mayFetch: Bool {
        switch trust {
        case .apple(let chains): chains.revocation.mayFetch
        case .xcode: false
        }
    }

    /// Verifies a signed transaction (StoreKit 2's `jwsRepresentation`, a notification's
    /// `signedTransactionInfo`).
    ///
    /// - Parameters:
    ///   - signed: the compact JWS.
    ///   - time: the time to judge the chain at; nil (the default) for now, with the signing-date
    ///     rule.
    /// - Throws: ``PurchaseVerificationError`` naming the first check that failed.
    public func verifyTransaction(_ signed: String, at time: Date? = nil) throws(PurchaseVerificationError) -> AppStoreTransaction {
        let transaction = try AppStoreTransaction(verifiedFields(signed, what: "transaction", at: time))
        try checkSignedDate(transaction.signedDate, at: time ?? clock())
        guard transaction.bundleId == bundleID else {
            throw PurchaseVerificationError(
                .bundleIDMismatch, "The transaction is for bundle ID \"\(transaction.bundleId)\", not \"\(bundleID)\".")
        }
        try checkEnvironment(transaction.environment, of: "transaction")
        return transaction
    }

    /// Verifies a signed renewal info (a notification's `signedRenewalInfo`, the App Store
    /// Server API's subscription statuses).
    ///
    /// - Parameters:
    ///   - signed: the compact JWS.
    ///   - time: the time to judge the chain at; nil (the default) for now, with the signing-date
    ///     rule.
    /// - Throws: ``PurchaseVerificationError`` naming the first check that failed.
    public func verifyRenewalInfo(_ signed: String, at time: Date? = nil) throws(PurchaseVerificationError) -> AppStoreRenewalInfo {
        let renewal = try AppStoreRenewalInfo(verifiedFields(signed, what: "renewal info", at: time))
        try checkSignedDate(renewal.signedDate, at: time ?? clock())
        try checkEnvironment(renewal.environment, of: "renewal info")
        return renewal
    }

    /// Verifies an App Store Server Notification v2 (the `signedPayload` Apple posts), and each
    /// signed transaction and renewal info in its `data` as a JWS of its own, under the same
    /// rules at the same time.
    ///
    /// The app and environment are read from `data`, `summary`, `externalPurchaseToken` or
    /// `appData`, the first present: the bundle ID must be this verifier's, the app Apple ID
    /// too in production, and the environment this verifier's. A notification naming no app is
    /// refused.
    ///
    /// - Parameters:
    ///   - signed: the `signedPayload` value.
    ///   - time: the time to judge the chain at; nil (the default) for now, with the signing-date
    ///     rule.
    /// - Throws: ``PurchaseVerificationError`` naming the first check that failed; for a nested
    ///   value, its reason names the field.
    public func verifyNotification(_ signed: String, at time: Date? = nil) throws(PurchaseVerificationError) -> AppStoreNotification {
        let notification = try AppStoreNotification(verifiedFields(signed, what: "notification", at: time), verifier: self, at: time)
        try checkSignedDate(notification.signedDate, at: time ?? clock())
        let subject = notification.subject
        try checkApp(bundleID: subject.bundleId, appAppleID: subject.appAppleId, of: "notification")
        guard let found = subject.environment else {
            throw PurchaseVerificationError(.environmentMismatch, "The notification names no environment.")
        }
        try checkEnvironment(found, of: "notification")
        return notification
    }

    /// Verifies a signed app transaction (StoreKit's `AppTransaction.jwsRepresentation`): the
    /// bundle ID, the app Apple ID in production, and the receipt type as the environment.
    ///
    /// - Parameters:
    ///   - signed: the compact JWS.
    ///   - time: the time to judge the chain at; nil (the default) for now, with the signing-date
    ///     rule.
    /// - Throws: ``PurchaseVerificationError`` naming the first check that failed.
    public func verifyAppTransaction(_ signed: String, at time: Date? = nil) throws(PurchaseVerificationError) -> AppStoreAppTransaction {
        let appTransaction = try AppStoreAppTransaction(verifiedFields(signed, what: "app transaction", at: time))
        if let signedDate = appTransaction.signedDate { try checkSignedDate(signedDate, at: time ?? clock()) }
        try checkApp(bundleID: appTransaction.bundleId, appAppleID: appTransaction.appAppleId, of: "app transaction")
        try checkEnvironment(appTransaction.receiptType, of: "app transaction")
        return appTransaction
    }

    private func checkApp(bundleID found: String?, appAppleID foundID: Int64?, of what: String) throws(PurchaseVerificationError) {
        guard let found else {
            throw PurchaseVerificationError(.bundleIDMismatch, "The \(what) names no bundle ID.")
        }
        guard found == bundleID else {
            throw PurchaseVerificationError(.bundleIDMismatch, "The \(what) is for bundle ID \"\(found)\", not \"\(bundleID)\".")
        }
        if environment == .production, foundID != appAppleID {
            throw PurchaseVerificationError(
                .appAppleIDMismatch,
                "The \(what) is for app Apple ID \(foundID.map(String.init) ?? "none"), not \(appAppleID.map(String.init) ?? "none").")
        }
    }

    /// Steps 1 to 6, then the payload read as an object.
    private func verifiedFields(_ signed: String, what: String, at time: Date?) throws(PurchaseVerificationError) -> SignedFields {
        let bytes = Array(signed.utf8)
        guard bytes.count <= Self.maximumLength else {
            throw PurchaseVerificationError(.inputTooLarge, "The signed \(what) is \(bytes.count) bytes, over the \(Self.maximumLength)-byte limit.")
        }
        let key: SignaturePublicKey
        let jws: CompactJWS
        switch trust {
        case .apple(let chains):
            let parsed = try CompactJWS(bytes)
            jws = parsed
            key = try chains.verify(
                key: parsed.chainKey,
                presented: { (current: AppleSigningTrust) throws(PurchaseVerificationError) -> [Certificate] in
                    let chain = try parsed.certificates()
                    guard current.store.holds(chain[2]) else {
                        throw PurchaseVerificationError(
                            .untrustedRoot, "The x5c root (\(chain[2].subject), \(chain[2].spkiPin)) is not one of the configured roots.")
                    }
                    return [chain[0], chain[1]]
                },
                signedAt: { Self.claimedSignedDate(parsed.payload) }, at: time ?? clock(), fixed: time != nil
            ).key
        case .xcode(let storeKit):
            jws = try CompactJWS(bytes, chainLength: 1)
            guard jws.chainKey == storeKit.x5cEntry else {
                throw PurchaseVerificationError(
                    .untrustedRoot, "The x5c certificate is not the configured StoreKit test certificate (\(storeKit.certificate.subject)).")
            }
            try storeKit.checkValid(at: time ?? Self.claimedSignedDate(jws.payload) ?? clock())
            key = storeKit.key
        }
        guard key.kind == .ecdsaP256 else {
            throw PurchaseVerificationError(.invalidSignature, "The leaf's key is not a P-256 key.")
        }
        guard key.isValidSignature(jws.signature, for: jws.signingInput, algorithm: .ecdsaP256SHA256Raw) else {
            throw PurchaseVerificationError(.invalidSignature, "The signature is not the leaf's over the signed \(what).")
        }
        return try SignedFields(json: jws.payload, what: what)
    }

    /// The `signedDate` a payload claims (an Xcode app transaction has none: its
    /// `requestDate`), read before its signature is checked: used only to choose the time a
    /// chain that is no longer valid is judged at, and checked by the signature right after.
    private static func claimedSignedDate(_ payload: [UInt8]) -> Date? {
        guard let fields = try? SignedFields(json: payload, what: "payload") else { return nil }
        return ((try? fields.date("signedDate")) ?? nil) ?? ((try? fields.date("requestDate")) ?? nil)
    }

    private func checkSignedDate(_ signedDate: Date, at time: Date) throws(PurchaseVerificationError) {
        guard signedDate.timeIntervalSince(time) <= allowedClockSkew else {
            throw PurchaseVerificationError(
                .signedInTheFuture, "The data was signed at \(signedDate), after the verification time \(time).")
        }
        if let maximumAge, time.timeIntervalSince(signedDate) > maximumAge {
            throw PurchaseVerificationError(
                .tooOld, "The data was signed at \(signedDate), more than \(Int(maximumAge)) s before \(time).")
        }
    }

    private func checkEnvironment(_ found: AppStoreEnvironment, of what: String) throws(PurchaseVerificationError) {
        guard found == environment else {
            throw PurchaseVerificationError(
                .environmentMismatch, "The \(what) is from the \(found) environment, not \(environment).")
        }
    }
}
