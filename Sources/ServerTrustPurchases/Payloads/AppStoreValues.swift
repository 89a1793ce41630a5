/// The server environment signed data was made in (Apple's `environment`). A value this
/// release does not know is kept as it was sent, never a decode failure.
public struct AppStoreEnvironment: RawRepresentable, Hashable, Sendable, Encodable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let production = AppStoreEnvironment(rawValue: "Production")
    public static let sandbox = AppStoreEnvironment(rawValue: "Sandbox")
    /// StoreKit testing in Xcode: signed by a self-signed certificate, not by Apple.
    public static let xcode = AppStoreEnvironment(rawValue: "Xcode")
    /// Apple's server library's own test environment: never signed by Apple.
    public static let localTesting = AppStoreEnvironment(rawValue: "LocalTesting")

    public var description: String { rawValue }
}

/// The kind of in-app purchase (Apple's `type`); unknown values kept.
public struct AppStoreProductType: RawRepresentable, Hashable, Sendable, Encodable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let autoRenewableSubscription = AppStoreProductType(rawValue: "Auto-Renewable Subscription")
    public static let nonConsumable = AppStoreProductType(rawValue: "Non-Consumable")
    public static let consumable = AppStoreProductType(rawValue: "Consumable")
    public static let nonRenewingSubscription = AppStoreProductType(rawValue: "Non-Renewing Subscription")

    public var description: String { rawValue }
}

/// Whether the customer bought the product or has it through Family Sharing (Apple's
/// `inAppOwnershipType`); unknown values kept.
public struct AppStoreOwnershipType: RawRepresentable, Hashable, Sendable, Encodable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let purchased = AppStoreOwnershipType(rawValue: "PURCHASED")
    public static let familyShared = AppStoreOwnershipType(rawValue: "FAMILY_SHARED")

    public var description: String { rawValue }
}

/// Why a transaction happened (Apple's `transactionReason`); unknown values kept.
public struct AppStoreTransactionReason: RawRepresentable, Hashable, Sendable, Encodable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let purchase = AppStoreTransactionReason(rawValue: "PURCHASE")
    public static let renewal = AppStoreTransactionReason(rawValue: "RENEWAL")

    public var description: String { rawValue }
}

/// A subscription offer's kind (Apple's `offerType`); unknown values kept.
public struct AppStoreOfferType: RawRepresentable, Hashable, Sendable, Encodable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let introductory = AppStoreOfferType(rawValue: 1)
    public static let promotional = AppStoreOfferType(rawValue: 2)
    public static let offerCode = AppStoreOfferType(rawValue: 3)
    public static let winBack = AppStoreOfferType(rawValue: 4)

    public var description: String { String(rawValue) }
}

/// How an offer discounts (Apple's `offerDiscountType`); unknown values kept.
public struct AppStoreOfferDiscountType: RawRepresentable, Hashable, Sendable, Encodable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let freeTrial = AppStoreOfferDiscountType(rawValue: "FREE_TRIAL")
    public static let payAsYouGo = AppStoreOfferDiscountType(rawValue: "PAY_AS_YOU_GO")
    public static let payUpFront = AppStoreOfferDiscountType(rawValue: "PAY_UP_FRONT")
    public static let oneTime = AppStoreOfferDiscountType(rawValue: "ONE_TIME")

    public var description: String { rawValue }
}

/// Why Apple refunded or revoked a transaction (Apple's `revocationReason`); unknown values kept.
public struct AppStoreRevocationReason: RawRepresentable, Hashable, Sendable, Encodable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Refunded for another reason (an accidental purchase, say).
    public static let other = AppStoreRevocationReason(rawValue: 0)
    /// Refunded because of an actual or perceived issue in the app.
    public static let appIssue = AppStoreRevocationReason(rawValue: 1)

    public var description: String { String(rawValue) }
}

/// Why a subscription expired (Apple's `expirationIntent`); unknown values kept.
public struct AppStoreExpirationIntent: RawRepresentable, Hashable, Sendable, Encodable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let customerCancelled = AppStoreExpirationIntent(rawValue: 1)
    public static let billingError = AppStoreExpirationIntent(rawValue: 2)
    public static let didNotConsentToPriceIncrease = AppStoreExpirationIntent(rawValue: 3)
    public static let productUnavailable = AppStoreExpirationIntent(rawValue: 4)
    public static let other = AppStoreExpirationIntent(rawValue: 5)

    public var description: String { String(rawValue) }
}
