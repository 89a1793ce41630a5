public import Foundation

/// A verified transaction: the payload of a signed transaction
/// (`JWSTransactionDecodedPayload`), every field Apple documents under Apple's own name.
///
/// `bundleId`, `environment` and `signedDate` are always there (verification checks them);
/// every other field is optional, as Apple documents it. Dates are read from milliseconds.
public struct AppStoreTransaction: Hashable, Sendable, Encodable {
    public var transactionId: String?
    public var originalTransactionId: String?
    public var webOrderLineItemId: String?
    public var bundleId: String
    public var productId: String?
    public var subscriptionGroupIdentifier: String?
    public var purchaseDate: Date?
    public var originalPurchaseDate: Date?
    public var expiresDate: Date?
    public var quantity: Int?
    public var type: AppStoreProductType?
    /// The UUID the app set for the customer's account, as sent (a ledger compares it).
    public var appAccountToken: String?
    public var inAppOwnershipType: AppStoreOwnershipType?
    public var signedDate: Date
    public var revocationReason: AppStoreRevocationReason?
    public var revocationDate: Date?
    public var isUpgraded: Bool?
    public var offerType: AppStoreOfferType?
    public var offerIdentifier: String?
    public var environment: AppStoreEnvironment
    public var storefront: String?
    public var storefrontId: String?
    public var transactionReason: AppStoreTransactionReason?
    /// ISO 4217 currency code of ``price``.
    public var currency: String?
    /// In milliunits of ``currency`` (1990 is 1.99).
    public var price: Int64?
    public var offerDiscountType: AppStoreOfferDiscountType?
    public var appTransactionId: String?
    /// ISO 8601 duration of the offer (`P1M`).
    public var offerPeriod: String?
    /// `REFUND_FULL` or `REFUND_PRORATED` (Apple's `revocationType`), as sent.
    public var revocationType: String?
    /// Thousandths of a percent refunded (Apple's `revocationPercentage`).
    public var revocationPercentage: Int?

    init(_ fields: SignedFields) throws(PurchaseVerificationError) {
        transactionId = try fields.string("transactionId")
        originalTransactionId = try fields.string("originalTransactionId")
        webOrderLineItemId = try fields.string("webOrderLineItemId")
        bundleId = try fields.required("bundleId", fields.string)
        productId = try fields.string("productId")
        subscriptionGroupIdentifier = try fields.string("subscriptionGroupIdentifier")
        purchaseDate = try fields.date("purchaseDate")
        originalPurchaseDate = try fields.date("originalPurchaseDate")
        expiresDate = try fields.date("expiresDate")
        quantity = try fields.int("quantity")
        type = try fields.string("type").map(AppStoreProductType.init(rawValue:))
        appAccountToken = try fields.string("appAccountToken")
        inAppOwnershipType = try fields.string("inAppOwnershipType").map(AppStoreOwnershipType.init(rawValue:))
        signedDate = try fields.required("signedDate", fields.date)
        revocationReason = try fields.int("revocationReason").map(AppStoreRevocationReason.init(rawValue:))
        revocationDate = try fields.date("revocationDate")
        isUpgraded = try fields.bool("isUpgraded")
        offerType = try fields.int("offerType").map(AppStoreOfferType.init(rawValue:))
        offerIdentifier = try fields.string("offerIdentifier")
        environment = AppStoreEnvironment(rawValue: try fields.required("environment", fields.string))
        storefront = try fields.string("storefront")
        storefrontId = try fields.string("storefrontId")
        transactionReason = try fields.string("transactionReason").map(AppStoreTransactionReason.init(rawValue:))
        currency = try fields.string("currency")
        price = try fields.int64("price")
        offerDiscountType = try fields.string("offerDiscountType").map(AppStoreOfferDiscountType.init(rawValue:))
        appTransactionId = try fields.string("appTransactionId")
        offerPeriod = try fields.string("offerPeriod")
        revocationType = try fields.string("revocationType")
        revocationPercentage = try fields.int("revocationPercentage")
    }
}

/// A verified subscription renewal info: the payload of a signed renewal info
/// (`JWSRenewalInfoDecodedPayload`), every field Apple documents under Apple's own name.
///
/// `environment` and `signedDate` are always there; every other field is optional.
public struct AppStoreRenewalInfo: Hashable, Sendable, Encodable {
    public var expirationIntent: AppStoreExpirationIntent?
    public var originalTransactionId: String?
    public var autoRenewProductId: String?
    public var productId: String?
    /// 1: the subscription renews; 0: the customer turned renewal off.
    public var autoRenewStatus: Int?
    public var isInBillingRetryPeriod: Bool?
    /// 0: the customer has not yet answered a price increase; 1: consented or not required.
    public var priceIncreaseStatus: Int?
    public var gracePeriodExpiresDate: Date?
    public var offerType: AppStoreOfferType?
    public var offerIdentifier: String?
    public var signedDate: Date
    public var environment: AppStoreEnvironment
    public var recentSubscriptionStartDate: Date?
    public var renewalDate: Date?
    public var currency: String?
    /// In milliunits of ``currency``.
    public var renewalPrice: Int64?
    public var offerDiscountType: AppStoreOfferDiscountType?
    public var eligibleWinBackOfferIds: [String]?
    public var appAccountToken: String?
    public var appTransactionId: String?
    public var offerPeriod: String?

    init(_ fields: SignedFields) throws(PurchaseVerificationError) {
        expirationIntent = try fields.int("expirationIntent").map(AppStoreExpirationIntent.init(rawValue:))
        originalTransactionId = try fields.string("originalTransactionId")
        autoRenewProductId = try fields.string("autoRenewProductId")
        productId = try fields.string("productId")
        autoRenewStatus = try fields.int("autoRenewStatus")
        isInBillingRetryPeriod = try fields.bool("isInBillingRetryPeriod")
        priceIncreaseStatus = try fields.int("priceIncreaseStatus")
        gracePeriodExpiresDate = try fields.date("gracePeriodExpiresDate")
        offerType = try fields.int("offerType").map(AppStoreOfferType.init(rawValue:))
        offerIdentifier = try fields.string("offerIdentifier")
        signedDate = try fields.required("signedDate", fields.date)
        environment = AppStoreEnvironment(rawValue: try fields.required("environment", fields.string))
        recentSubscriptionStartDate = try fields.date("recentSubscriptionStartDate")
        renewalDate = try fields.date("renewalDate")
        currency = try fields.string("currency")
        renewalPrice = try fields.int64("renewalPrice")
        offerDiscountType = try fields.string("offerDiscountType").map(AppStoreOfferDiscountType.init(rawValue:))
        eligibleWinBackOfferIds = try fields.strings("eligibleWinBackOfferIds")
        appAccountToken = try fields.string("appAccountToken")
        appTransactionId = try fields.string("appTransactionId")
        offerPeriod = try fields.string("offerPeriod")
    }
}
