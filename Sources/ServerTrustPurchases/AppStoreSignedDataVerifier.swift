public import Foundation
public import ServerTrust
import ServerTrustCertificates

/// Verifies the App Store's signed data — a StoreKit 2 transaction (`jwsRepresentation`), a
/// subscription's renewal info, an App Store Server Notification v2, an app transaction —
/// against Apple roots the server configures, before anything is granted.
///
/// Each value is checked in this order, and refused with the code of the first check it fails
/// (``PurchaseVerificationError/Code``):
///
/// 1. At most ``maximumLength`` bytes; a compact JWS read strictly: three
///    segments, base64url without padding, a strict-JSON header with `alg` exactly `ES256`
///    and an `x5c` of exactly three certificates.
/// 2. The `x5c` root is, byte for byte, one of the configured roots: a root is never trusted
///    because the sender put it there.
/// 3. The leaf and intermediate validate to that root at the verification time with
///    ServerTrust's path validator (signatures, validity, CA flag, path length, key usage; no
///    TLS purpose, no strict profile), through that intermediate.
/// 4. Apple's marker extensions are present and not critical: 1.2.840.113635.100.6.2.1 on the
///    intermediate, 1.2.840.113635.100.6.11.1 on the leaf.
/// 5. The signature is the leaf's P-256 key's over the exact signing input.
/// 6. The payload is strict JSON with the fields the type needs, of the types Apple documents;
///    `signedDate` is not after the verification time (beyond ``allowedClockSkew``) nor older
///    than ``maximumAge``.
/// 7. What Apple defines per type: a transaction's bundle ID and environment; a renewal info's
///    environment; a notification's bundle ID, app Apple ID (production) and environment, with
///    its nested transaction and renewal info verified as JWS of their own; an app
///    transaction's bundle ID, app Apple ID (production) and receipt type.
///
/// The verification time is the time passed in (now by default), so a chain that has expired
/// since the data was signed is refused.
///
/// A verifier holds no mutable state: share one across tasks.
public struct AppStoreSignedDataVerifier: Sendable {
    /// The most bytes a signed value may have; a notification with its nested transaction and
    /// renewal info is under 16 KiB.
    public static let maximumLength = 256 * 1024

    /// OID of Apple's marker on the intermediate (WWDR) certificate of App Store signed data.
    public static let intermediateMarkerOID = "1.2.840.113635.100.6.2.1"
    /// OID of Apple's marker on the leaf certificate of App Store signed data.
    public static let leafMarkerOID = "1.2.840.113635.100.6.11.1"

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

    private let roots: SignedDataTrustStore

    /// A verifier for one app in one environment.
    ///
    /// - Parameters:
    ///   - roots: the roots `x5c` chains must end at (DER or PEM read by the caller); Apple's
    ///     are Apple Root CA – G3 for App Store signed data.
    ///   - bundleID: the app's bundle ID.
    ///   - appAppleID: the app's Apple ID; required when `environment` is production.
    ///   - environment: production or sandbox.
    /// - Throws: ``PurchaseVerificationError/Code/invalidConfiguration`` for no root, an empty
    ///   bundle ID, production without an app Apple ID, or the Xcode and local-testing
    ///   environments, whose data Apple does not sign: this verifier never accepts unsigned or
    ///   self-signed data silently.
    public init(roots: [Certificate], bundleID: String, appAppleID: Int64?, environment: AppStoreEnvironment) throws(PurchaseVerificationError) {
        guard !bundleID.isEmpty else {
            throw PurchaseVerificationError(.invalidConfiguration, "The bundle ID is empty.")
        }
        guard environment != .xcode, environment != .localTesting else {
            throw PurchaseVerificationError(
                .invalidConfiguration,
                "The \(environment) environment's data is not signed by Apple; this verifier checks Apple's signatures only.")
        }
        guard environment != .production || appAppleID != nil else {
            throw PurchaseVerificationError(.invalidConfiguration, "The production environment needs the app's Apple ID.")
        }
        do {
            self.roots = try SignedDataTrustStore(roots: roots)
        } catch {
            throw PurchaseVerificationError(.invalidConfiguration, error.reason)
        }
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.environment = environment
    }

    /// Verifies a signed transaction (StoreKit 2's `jwsRepresentation`, a notification's
    /// `signedTransactionInfo`).
    ///
    /// - Parameters:
    ///   - signed: the compact JWS.
    ///   - time: the verification time. Default now.
    /// - Throws: ``PurchaseVerificationError`` naming the first check that failed.
    public func verifyTransaction(_ signed: String, at time: Date = Date()) throws(PurchaseVerificationError) -> AppStoreTransaction {
        let transaction = try AppStoreTransaction(verifiedFields(signed, what: "transaction", at: time))
        try checkSignedDate(transaction.signedDate, at: time)
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
    ///   - time: the verification time. Default now.
    /// - Throws: ``PurchaseVerificationError`` naming the first check that failed.
    public func verifyRenewalInfo(_ signed: String, at time: Date = Date()) throws(PurchaseVerificationError) -> AppStoreRenewalInfo {
        let renewal = try AppStoreRenewalInfo(verifiedFields(signed, what: "renewal info", at: time))
        try checkSignedDate(renewal.signedDate, at: time)
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
    ///   - time: the verification time. Default now.
    /// - Throws: ``PurchaseVerificationError`` naming the first check that failed; for a nested
    ///   value, its reason names the field.
    public func verifyNotification(_ signed: String, at time: Date = Date()) throws(PurchaseVerificationError) -> AppStoreNotification {
        let notification = try AppStoreNotification(verifiedFields(signed, what: "notification", at: time), verifier: self, at: time)
        try checkSignedDate(notification.signedDate, at: time)
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
    ///   - time: the verification time. Default now.
    /// - Throws: ``PurchaseVerificationError`` naming the first check that failed.
    public func verifyAppTransaction(_ signed: String, at time: Date = Date()) throws(PurchaseVerificationError) -> AppStoreAppTransaction {
        let appTransaction = try AppStoreAppTransaction(verifiedFields(signed, what: "app transaction", at: time))
        if let signedDate = appTransaction.signedDate { try checkSignedDate(signedDate, at: time) }
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

    /// Steps 1 to 5, then the payload read as an object.
    private func verifiedFields(_ signed: String, what: String, at time: Date) throws(PurchaseVerificationError) -> SignedFields {
        let bytes = Array(signed.utf8)
        guard bytes.count <= Self.maximumLength else {
            throw PurchaseVerificationError(.inputTooLarge, "The signed \(what) is \(bytes.count) bytes, over the \(Self.maximumLength)-byte limit.")
        }
        let jws = try CompactJWS(bytes)
        let (leaf, intermediate, root) = (jws.chain[0], jws.chain[1], jws.chain[2])
        guard roots.holds(root) else {
            throw PurchaseVerificationError(
                .untrustedRoot, "The x5c root (\(root.subject), \(root.spkiPin)) is not one of the configured roots.")
        }
        let validated: [Certificate]
        do {
            validated = try roots.validate([leaf, intermediate], at: time)
        } catch {
            throw PurchaseVerificationError(.chainValidationFailed, error.reason)
        }
        guard validated.count == 3, validated[1] == intermediate else {
            throw PurchaseVerificationError(
                .chainValidationFailed, "The leaf does not chain to the configured root through the x5c intermediate.")
        }
        try checkMarker(Self.intermediateMarkerOID, on: intermediate, named: "intermediate")
        try checkMarker(Self.leafMarkerOID, on: leaf, named: "leaf")
        guard let key = try? SignaturePublicKey(subjectPublicKeyInfoDER: leaf.subjectPublicKeyInfoDER), key.kind == .ecdsaP256 else {
            throw PurchaseVerificationError(.invalidSignature, "The leaf's key is not a P-256 key.")
        }
        guard key.isValidSignature(jws.signature, for: jws.signingInput, algorithm: .ecdsaP256SHA256Raw) else {
            throw PurchaseVerificationError(.invalidSignature, "The signature is not the leaf's over the signed \(what).")
        }
        return try SignedFields(json: jws.payload, what: what)
    }

    private func checkMarker(_ oid: String, on certificate: Certificate, named name: String) throws(PurchaseVerificationError) {
        switch certificate.extensionCriticality(oid: oid) {
        case nil:
            throw PurchaseVerificationError(
                .missingMarkerExtension, "The \(name) certificate (\(certificate.subject)) lacks Apple's marker extension \(oid).")
        case true?:
            throw PurchaseVerificationError(
                .criticalMarkerExtension, "The \(name) certificate (\(certificate.subject)) marks Apple's extension \(oid) critical.")
        case false?:
            return
        }
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
