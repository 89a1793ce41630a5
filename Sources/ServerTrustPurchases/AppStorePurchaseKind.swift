public import Foundation
import ServerTrustCertificates

/// What a piece of App Store purchase material is: one of the four kinds of signed data, or a
/// legacy receipt.
public enum AppStorePurchaseKind: String, CaseIterable, Sendable {
    case transaction
    case renewal
    case notification
    case appTransaction = "app-transaction"
    case receipt

    /// The kind `material` looks like, read from its form and its unverified payload: a compact
    /// JWS is a notification when its payload has `notificationType`, an app transaction when
    /// it has `receiptType` and no `transactionId`, a renewal info when it has
    /// `autoRenewProductId` or `renewalDate` and no `transactionId`, else a transaction;
    /// anything else (DER, or base64 text) is a receipt. nil for material that is neither.
    ///
    /// Only chooses which verification to run: a wrong guess fails that verification, and
    /// nothing read here is trusted.
    public static func infer(_ material: [UInt8]) -> AppStorePurchaseKind? {
        if let claims = UnverifiedAppStoreClaims(jws: material) {
            let keys = claims.keys
            if keys.contains("notificationType") { return .notification }
            if !keys.contains("transactionId") {
                if keys.contains("receiptType") { return .appTransaction }
                if keys.contains("autoRenewProductId") || keys.contains("renewalDate") { return .renewal }
            }
            return .transaction
        }
        if material.first == 0x30 { return .receipt }
        let text = material.filter { !(UInt8(ascii: " ") == $0 || (9...13).contains($0)) }
        return !text.isEmpty && StrictBase64.decode(text) != nil ? .receipt : nil
    }
}

/// What App Store signed data says about its app and environment, read WITHOUT verifying it:
/// for a tool that inspects test material and must pick the app to check against when the user
/// names none. Never grant anything on these values; ``AppStoreSignedDataVerifier`` checks them.
public struct UnverifiedAppStoreClaims: Sendable {
    /// `bundleId` of the payload, or of a notification's `data`, `summary`,
    /// `externalPurchaseToken` or `appData`.
    public let bundleID: String?
    /// `appAppleId`, where the bundle ID was found.
    public let appAppleID: Int64?
    /// `environment` (or an app transaction's `receiptType`), where the bundle ID was found.
    public let environment: AppStoreEnvironment?
    let keys: Set<String>

    /// The claims of a compact JWS's payload; nil when `jws` is not one with a JSON object as
    /// its payload.
    public init?(jws: [UInt8]) {
        let segments = jws.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard segments.count == 3, let payload = Base64URL.decodeUnpadded(segments[1]),
            let fields = try? SignedFields(json: payload, what: "payload")
        else { return nil }
        keys = fields.keys
        var holder = fields
        for key in ["data", "summary", "externalPurchaseToken", "appData"] {
            if let nested = try? fields.object(key) {
                holder = nested
                break
            }
        }
        bundleID = (try? holder.string("bundleId")) ?? nil
        appAppleID = (try? holder.int64("appAppleId")) ?? nil
        let environment = ((try? holder.string("environment")) ?? nil) ?? ((try? holder.string("receiptType")) ?? nil)
        self.environment = environment.map(AppStoreEnvironment.init(rawValue:))
    }
}

/// What a receipt says about its app, read WITHOUT verifying it: for a tool that inspects test
/// material and must pick the app to check against when the user names none. Never grant
/// anything on these values; ``AppStoreReceiptVerifier`` checks them.
public struct UnverifiedAppStoreReceiptClaims: Sendable {
    /// The receipt's bundle ID (field 2).
    public let bundleID: String
    /// The receipt type (field 0).
    public let receiptType: String?

    /// The claims of a receipt as DER, or as base64 text; nil when it does not read as one.
    public init?(_ material: [UInt8]) {
        var bytes = material
        if material.first != 0x30 {
            let text = material.filter { !(UInt8(ascii: " ") == $0 || (9...13).contains($0)) }
            guard let decoded = StrictBase64.decode(text) else { return nil }
            bytes = decoded
        }
        guard bytes.count <= AppStoreReceiptVerifier.maximumLength,
            let signedData = try? PKCS7SignedData(ber: bytes, maximumLength: AppStoreReceiptVerifier.maximumLength),
            let receipt = try? AppStoreReceipt(payload: signedData.content)
        else { return nil }
        bundleID = receipt.bundleID
        receiptType = receipt.receiptType
    }
}
