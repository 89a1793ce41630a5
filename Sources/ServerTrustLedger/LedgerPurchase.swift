public import Foundation
public import ServerTrustPurchases

/// The store a purchase was made in; the ledger keys every record by it, so the same id in two
/// stores is two purchases.
public struct PurchaseStore: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let appStore = PurchaseStore(rawValue: "app_store")
    public static let googlePlay = PurchaseStore(rawValue: "google_play")

    /// The stores this version records; another is refused (``LedgerError/Code/invalidPurchase``).
    public static let known: Set<PurchaseStore> = [.appStore, .googlePlay]

    public var description: String { rawValue }
}

/// How a product behaves once bought, as the stores define it.
public enum PurchaseKind: String, Hashable, Sendable, CaseIterable {
    /// Used up and bought again: each transaction is one grant, and no entitlement lasts.
    case consumable
    /// Bought once, kept for ever (restores on a new device bring the same original transaction).
    case nonConsumable
    /// A period at a time, renewed by the store: one entitlement per original transaction,
    /// moved forward by each renewal, ended by expiry.
    case autoRenewableSubscription
    /// A period the app sells and times itself: kept like a non-consumable, its length the app's.
    case nonRenewingSubscription
}

/// A verified purchase as the ledger records it, whichever store it comes from. Build one from
/// signed data that has passed verification (``init(appStore:)``), never from what a client
/// says: the ledger trusts every field.
public struct LedgerPurchase: Hashable, Sendable {
    public var store: PurchaseStore
    /// The store's id of this transaction: what a grant is keyed by, unique per store.
    public var transactionID: String
    /// The id of the first transaction of its chain (renewals and restores share it): what an
    /// entitlement is keyed by, and what ties the chain to one account.
    public var originalTransactionID: String
    /// The order id a customer quotes (the App Store's web order line item id; Google's order id).
    public var orderID: String?
    public var productID: String
    public var kind: PurchaseKind
    /// "Production", "Sandbox", … as the store says.
    public var environment: String
    public var quantity: Int
    public var purchaseDate: Date
    /// When a subscription period ends.
    public var expiresDate: Date?
    /// The account token the app set at purchase (StoreKit's `appAccountToken`), signed.
    public var appAccountToken: UUID?
    /// Set when the store refunded or revoked it.
    public var revocationDate: Date?
    public var revocationReason: String?

    /// The longest id the ledger records; the stores' are 16 to 150 characters.
    public static let maximumIDLength = 256

    /// - Throws: ``LedgerError/Code/invalidPurchase`` for an unknown store, an empty, overlong
    ///   or non-printable id, or a quantity under 1.
    public init(
        store: PurchaseStore, transactionID: String, originalTransactionID: String, orderID: String? = nil, productID: String,
        kind: PurchaseKind, environment: String, quantity: Int = 1, purchaseDate: Date, expiresDate: Date? = nil,
        appAccountToken: UUID? = nil, revocationDate: Date? = nil, revocationReason: String? = nil
    ) throws(LedgerError) {
        guard PurchaseStore.known.contains(store) else {
            throw LedgerError(.invalidPurchase, "The store \"\(store)\" is not one the ledger records (\(PurchaseStore.known.map(\.rawValue).sorted().joined(separator: ", "))).")
        }
        for (name, value) in [("transaction id", transactionID), ("original transaction id", originalTransactionID), ("product id", productID), ("environment", environment)] {
            try Self.checkID(value, name)
        }
        if let orderID { try Self.checkID(orderID, "order id") }
        guard quantity >= 1 else { throw LedgerError(.invalidPurchase, "The quantity is \(quantity), not at least 1.") }
        self.store = store
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.orderID = orderID
        self.productID = productID
        self.kind = kind
        self.environment = environment
        self.quantity = quantity
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.appAccountToken = appAccountToken
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
    }

    /// A transaction the App Store signed, after ServerTrustPurchases' `AppStoreSignedDataVerifier` verified it.
    ///
    /// - Throws: ``LedgerError/Code/invalidPurchase`` when a field the ledger needs is missing
    ///   (transaction, original transaction and product ids, type, purchase date) or an
    ///   `appAccountToken` is not a UUID.
    public init(appStore transaction: AppStoreTransaction) throws(LedgerError) {
        guard let transactionID = transaction.transactionId, let originalTransactionID = transaction.originalTransactionId,
            let productID = transaction.productId, let purchaseDate = transaction.purchaseDate
        else {
            throw LedgerError(.invalidPurchase, "The transaction lacks an id, an original transaction id, a product id or a purchase date.")
        }
        let kind: PurchaseKind
        switch transaction.type {
        case .consumable?: kind = .consumable
        case .nonConsumable?: kind = .nonConsumable
        case .autoRenewableSubscription?: kind = .autoRenewableSubscription
        case .nonRenewingSubscription?: kind = .nonRenewingSubscription
        default: throw LedgerError(.invalidPurchase, "The transaction's type \(transaction.type.map { "\"\($0)\"" } ?? "is absent and") is not one the ledger knows.")
        }
        var token: UUID?
        if let text = transaction.appAccountToken {
            guard let uuid = UUID(uuidString: text) else { throw LedgerError(.invalidPurchase, "The appAccountToken \"\(text)\" is not a UUID.") }
            token = uuid
        }
        try self.init(
            store: .appStore, transactionID: transactionID, originalTransactionID: originalTransactionID, orderID: transaction.webOrderLineItemId,
            productID: productID, kind: kind, environment: transaction.environment.rawValue, quantity: transaction.quantity ?? 1,
            purchaseDate: purchaseDate, expiresDate: transaction.expiresDate, appAccountToken: token, revocationDate: transaction.revocationDate,
            revocationReason: transaction.revocationReason.map { "\($0)" })
    }
}

extension LedgerPurchase {
    static func checkAccount(_ id: String) throws(LedgerError) { try checkID(id, "account id") }

    /// An id the ledger records (account, transaction, product, order, notification): printable
    /// ASCII, 1 to ``maximumIDLength`` bytes.
    static func checkID(_ value: String, _ name: String) throws(LedgerError) {
        guard !value.isEmpty, value.utf8.count <= maximumIDLength, value.unicodeScalars.allSatisfy({ $0.value >= 0x21 && $0.value < 0x7F }) else {
            throw LedgerError(.invalidPurchase, "The \(name) \"\(value.prefix(64))\" is empty, longer than \(maximumIDLength) bytes or not printable ASCII.")
        }
    }
}

/// The account a purchase is granted to: the app's own id, and the `appAccountToken` the app
/// gives StoreKit for it, when it does. With a token, a purchase whose signed token differs is
/// refused (``LedgerError/Code/accountTokenMismatch``); without one there is nothing to compare.
public struct LedgerAccount: Hashable, Sendable, ExpressibleByStringLiteral {
    public var id: String
    public var appAccountToken: UUID?

    public init(_ id: String, appAccountToken: UUID? = nil) {
        self.id = id
        self.appAccountToken = appAccountToken
    }

    public init(stringLiteral id: String) { self.init(id) }
}

/// Milliseconds since 1970, the ledger's one time format in every store.
enum LedgerTime {
    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }
    static func date(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
}

extension LedgerNotification {
    /// An App Store Server Notification v2 that ServerTrustPurchases verified (its
    /// nested transaction verified as its own JWS): SUBSCRIBED, DID_RENEW, OFFER_REDEEMED and
    /// ONE_TIME_CHARGE carry a purchase; REFUND and REVOKE a revocation; REFUND_REVERSED its
    /// reversal; the others nothing the ledger keeps.
    ///
    /// - Throws: ``LedgerError/Code/invalidPurchase`` when a notification that carries a
    ///   purchase has no transaction, or the transaction lacks what the ledger needs.
    public init(appStore notification: AppStoreNotification) throws(LedgerError) {
        let effect: Effect
        switch notification.notificationType {
        case .subscribed, .didRenew, .offerRedeemed, .oneTimeCharge: effect = .purchase
        case .refund, .revoke: effect = .revocation
        case .refundReversed: effect = .revocationReversed
        default: effect = .none
        }
        var purchase: LedgerPurchase?
        if let transaction = notification.data?.transaction {
            purchase = try LedgerPurchase(appStore: transaction)
        } else if effect != .none {
            throw LedgerError(.invalidPurchase, "The \(notification.notificationType) notification \(notification.notificationUUID) carries no transaction.")
        }
        self.init(store: .appStore, id: notification.notificationUUID, signedDate: notification.signedDate, effect: effect, purchase: purchase)
    }
}
