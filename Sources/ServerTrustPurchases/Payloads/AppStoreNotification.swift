public import Foundation

/// The type of an App Store Server Notification v2 (Apple's `notificationType`); unknown values
/// kept.
public struct AppStoreNotificationType: RawRepresentable, Hashable, Sendable, Encodable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let subscribed = Self(rawValue: "SUBSCRIBED")
    public static let didRenew = Self(rawValue: "DID_RENEW")
    public static let didChangeRenewalStatus = Self(rawValue: "DID_CHANGE_RENEWAL_STATUS")
    public static let didChangeRenewalPreference = Self(rawValue: "DID_CHANGE_RENEWAL_PREF")
    public static let didFailToRenew = Self(rawValue: "DID_FAIL_TO_RENEW")
    public static let expired = Self(rawValue: "EXPIRED")
    public static let gracePeriodExpired = Self(rawValue: "GRACE_PERIOD_EXPIRED")
    public static let offerRedeemed = Self(rawValue: "OFFER_REDEEMED")
    public static let priceIncrease = Self(rawValue: "PRICE_INCREASE")
    public static let refund = Self(rawValue: "REFUND")
    public static let refundDeclined = Self(rawValue: "REFUND_DECLINED")
    public static let refundReversed = Self(rawValue: "REFUND_REVERSED")
    public static let consumptionRequest = Self(rawValue: "CONSUMPTION_REQUEST")
    public static let renewalExtended = Self(rawValue: "RENEWAL_EXTENDED")
    public static let renewalExtension = Self(rawValue: "RENEWAL_EXTENSION")
    public static let revoke = Self(rawValue: "REVOKE")
    public static let oneTimeCharge = Self(rawValue: "ONE_TIME_CHARGE")
    public static let externalPurchaseToken = Self(rawValue: "EXTERNAL_PURCHASE_TOKEN")
    public static let test = Self(rawValue: "TEST")

    public var description: String { rawValue }
}

/// A verified App Store Server Notification v2: the payload of a `signedPayload`
/// (`ResponseBodyV2DecodedPayload`), with the signed transaction and renewal info it carries
/// verified as their own JWS under the same rules.
public struct AppStoreNotification: Hashable, Sendable, Encodable {
    /// The app, environment and status a notification is about (Apple's `data`).
    public struct Data: Hashable, Sendable, Encodable {
        public var appAppleId: Int64?
        public var bundleId: String?
        public var bundleVersion: String?
        public var environment: AppStoreEnvironment?
        /// The subscription's status (1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked).
        public var status: Int?
        public var consumptionRequestReason: String?
        /// `signedTransactionInfo`, verified.
        public var transaction: AppStoreTransaction?
        /// `signedRenewalInfo`, verified.
        public var renewalInfo: AppStoreRenewalInfo?
    }

    /// A summary of a renewal-date extension for all eligible subscribers (Apple's `summary`).
    public struct Summary: Hashable, Sendable, Encodable {
        public var requestIdentifier: String?
        public var environment: AppStoreEnvironment?
        public var appAppleId: Int64?
        public var bundleId: String?
        public var productId: String?
        public var storefrontCountryCodes: [String]?
        public var failedCount: Int64?
        public var succeededCount: Int64?
    }

    /// An external purchase token (Apple's `externalPurchaseToken`).
    public struct ExternalPurchaseToken: Hashable, Sendable, Encodable {
        public var externalPurchaseId: String?
        public var tokenCreationDate: Date?
        public var appAppleId: Int64?
        public var bundleId: String?
    }

    /// The app a notification without transaction data is about (Apple's `appData`).
    public struct AppData: Hashable, Sendable, Encodable {
        public var appAppleId: Int64?
        public var bundleId: String?
        public var environment: AppStoreEnvironment?
    }

    public var notificationType: AppStoreNotificationType
    /// Apple's `subtype` (`INITIAL_BUY`, `AUTO_RENEW_DISABLED`, …), as sent.
    public var subtype: String?
    /// The notification's identity: a retried notification has the same one.
    public var notificationUUID: String
    public var version: String?
    public var signedDate: Date
    public var data: Data?
    public var summary: Summary?
    public var externalPurchaseToken: ExternalPurchaseToken?
    public var appData: AppData?

    /// The payload's fields; the nested signed values are verified by `verifier` at `time`.
    init(_ fields: SignedFields, verifier: AppStoreSignedDataVerifier, at time: Date?) throws(PurchaseVerificationError) {
        notificationType = AppStoreNotificationType(rawValue: try fields.required("notificationType", fields.string))
        subtype = try fields.string("subtype")
        notificationUUID = try fields.required("notificationUUID", fields.string)
        version = try fields.string("version")
        signedDate = try fields.required("signedDate", fields.date)
        if let data = try fields.object("data") {
            var value = Data()
            value.appAppleId = try data.int64("appAppleId")
            value.bundleId = try data.string("bundleId")
            value.bundleVersion = try data.string("bundleVersion")
            value.environment = try data.string("environment").map(AppStoreEnvironment.init(rawValue:))
            value.status = try data.int("status")
            value.consumptionRequestReason = try data.string("consumptionRequestReason")
            if let signed = try data.string("signedTransactionInfo") {
                do {
                    value.transaction = try verifier.verifyTransaction(signed, at: time)
                } catch {
                    throw Self.nested("signedTransactionInfo", error)
                }
            }
            if let signed = try data.string("signedRenewalInfo") {
                do {
                    value.renewalInfo = try verifier.verifyRenewalInfo(signed, at: time)
                } catch {
                    throw Self.nested("signedRenewalInfo", error)
                }
            }
            self.data = value
        }
        if let summary = try fields.object("summary") {
            var value = Summary()
            value.requestIdentifier = try summary.string("requestIdentifier")
            value.environment = try summary.string("environment").map(AppStoreEnvironment.init(rawValue:))
            value.appAppleId = try summary.int64("appAppleId")
            value.bundleId = try summary.string("bundleId")
            value.productId = try summary.string("productId")
            value.storefrontCountryCodes = try summary.strings("storefrontCountryCodes")
            value.failedCount = try summary.int64("failedCount")
            value.succeededCount = try summary.int64("succeededCount")
            self.summary = value
        }
        if let token = try fields.object("externalPurchaseToken") {
            var value = ExternalPurchaseToken()
            value.externalPurchaseId = try token.string("externalPurchaseId")
            value.tokenCreationDate = try token.date("tokenCreationDate")
            value.appAppleId = try token.int64("appAppleId")
            value.bundleId = try token.string("bundleId")
            externalPurchaseToken = value
        }
        if let appData = try fields.object("appData") {
            var value = AppData()
            value.appAppleId = try appData.int64("appAppleId")
            value.bundleId = try appData.string("bundleId")
            value.environment = try appData.string("environment").map(AppStoreEnvironment.init(rawValue:))
            self.appData = value
        }
    }

    /// A nested value's refusal, with the field it came from in its reason.
    private static func nested(_ field: String, _ error: PurchaseVerificationError) -> PurchaseVerificationError {
        PurchaseVerificationError(error.code, "The notification's \(field): \(error.reason)")
    }

    /// The app and environment the notification names, from `data`, `summary`,
    /// `externalPurchaseToken` or `appData`, the first present (as Apple's library reads them);
    /// an external purchase token's environment is sandbox when its ID starts with `SANDBOX`.
    var subject: (bundleId: String?, appAppleId: Int64?, environment: AppStoreEnvironment?) {
        if let data { return (data.bundleId, data.appAppleId, data.environment) }
        if let summary { return (summary.bundleId, summary.appAppleId, summary.environment) }
        if let token = externalPurchaseToken {
            return (token.bundleId, token.appAppleId, token.externalPurchaseId?.hasPrefix("SANDBOX") == true ? .sandbox : .production)
        }
        if let appData { return (appData.bundleId, appData.appAppleId, appData.environment) }
        return (nil, nil, nil)
    }
}

/// A verified app transaction: the payload of a signed app transaction (StoreKit's
/// `AppTransaction`), every field Apple documents under Apple's own name.
///
/// `bundleId` and `receiptType` (the environment) are always there.
public struct AppStoreAppTransaction: Hashable, Sendable, Encodable {
    /// The environment the app was signed for.
    public var receiptType: AppStoreEnvironment
    public var appAppleId: Int64?
    public var bundleId: String
    public var applicationVersion: String?
    public var versionExternalIdentifier: Int64?
    public var receiptCreationDate: Date?
    public var originalPurchaseDate: Date?
    public var originalApplicationVersion: String?
    public var deviceVerification: String?
    public var deviceVerificationNonce: String?
    public var preorderDate: Date?
    public var appTransactionId: String?
    /// `iOS`, `macOS`, `tvOS` or `visionOS`, as sent.
    public var originalPlatform: String?
    public var signedDate: Date?

    init(_ fields: SignedFields) throws(PurchaseVerificationError) {
        receiptType = AppStoreEnvironment(rawValue: try fields.required("receiptType", fields.string))
        appAppleId = try fields.int64("appAppleId")
        bundleId = try fields.required("bundleId", fields.string)
        applicationVersion = try fields.string("applicationVersion")
        versionExternalIdentifier = try fields.int64("versionExternalIdentifier")
        receiptCreationDate = try fields.date("receiptCreationDate")
        originalPurchaseDate = try fields.date("originalPurchaseDate")
        originalApplicationVersion = try fields.string("originalApplicationVersion")
        deviceVerification = try fields.string("deviceVerification")
        deviceVerificationNonce = try fields.string("deviceVerificationNonce")
        preorderDate = try fields.date("preorderDate")
        appTransactionId = try fields.string("appTransactionId")
        originalPlatform = try fields.string("originalPlatform")
        signedDate = try fields.date("signedDate")
    }
}
