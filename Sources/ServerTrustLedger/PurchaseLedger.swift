public import Foundation

/// A purchase granted to an account, as the ledger holds it.
public struct Grant: Hashable, Sendable {
    public let purchase: LedgerPurchase
    /// The account it is granted to.
    public let account: String
    /// When the ledger first granted it.
    public let grantedAt: Date
    /// When the store refunded or revoked it, and why, once the ledger has heard.
    public let revokedAt: Date?
    public let revocationReason: String?

    public var isRevoked: Bool { revokedAt != nil }
}

/// What a claim decided.
public enum ClaimResult: Hashable, Sendable {
    /// Granted now, for the first time: deliver the goods.
    case granted(Grant)
    /// Granted before to the same account: the answer was lost, or the client asks again;
    /// deliver what was granted (once, by the grant's transaction id), grant nothing new.
    case alreadyGranted(Grant)

    public var grant: Grant {
        switch self {
        case .granted(let grant), .alreadyGranted(let grant): grant
        }
    }

    /// Whether this claim created the grant.
    public var isNew: Bool { if case .granted = self { true } else { false } }
}

/// What an account holds now from one chain of transactions (a subscription, a non-consumable).
public struct Entitlement: Hashable, Sendable {
    public enum State: String, Hashable, Sendable {
        case active, expired, revoked
    }

    public let store: PurchaseStore
    public let originalTransactionID: String
    public let productID: String
    public let kind: PurchaseKind
    /// The latest end of a period not revoked; nil for what does not expire.
    public let expiresDate: Date?
    public let state: State
}

/// A store notification, verified, as the ledger applies it.
public struct LedgerNotification: Hashable, Sendable {
    public enum Effect: String, Hashable, Sendable {
        /// A renewal, a new period or a new purchase: recorded for the chain's account.
        case purchase
        /// A refund or revocation of ``LedgerNotification/purchase``.
        case revocation
        /// A refund reversed: the purchase is granted again.
        case revocationReversed
        /// Nothing the ledger keeps (a renewal preference, a test).
        case none
    }

    public let store: PurchaseStore
    /// The store's notification id (`notificationUUID`, Pub/Sub `messageId`): applied once.
    public let id: String
    public let signedDate: Date
    public let effect: Effect
    public let purchase: LedgerPurchase?

    public init(store: PurchaseStore, id: String, signedDate: Date, effect: Effect, purchase: LedgerPurchase?) {
        self.store = store
        self.id = id
        self.signedDate = signedDate
        self.effect = effect
        self.purchase = purchase
    }
}

/// What applying a notification did.
public enum NotificationOutcome: Hashable, Sendable {
    /// Applied now; the grants it changed.
    case applied([Grant])
    /// Applied before (the store retried): nothing changed.
    case alreadyApplied
    /// Recorded, nothing to change (no grant of it yet, or an effect the ledger keeps nothing of).
    case recorded
}

/// The record of every purchase granted: each once, to one account, durably before an answer.
///
/// ```swift
/// let ledger = try PurchaseLedger.sqlite(path: "/var/lib/shop/ledger.sqlite")
/// let transaction = try verifier.verifyTransaction(jws)        // ServerTrustPurchases
/// switch try await ledger.claim(LedgerPurchase(appStore: transaction), for: LedgerAccount(user.id, appAccountToken: user.token)) {
/// case .granted(let grant): deliver(grant)                      // the first claim
/// case .alreadyGranted(let grant): deliver(grant)               // a resubmission: same grant
/// }                                                            // another account: LedgerError.replay
/// ```
///
/// The rules, the same in every store (a ``LedgerStore`` does the atomic part):
/// - a transaction is granted once per store, to the first account that claims it; that account
///   claiming again gets the same grant back, another is refused as a replay naming the holder;
/// - a chain (original transaction id) belongs to the account of its first grant: a renewal or
///   restore claimed by another account is a replay too;
/// - a revoked purchase is never granted; a refund noticed later marks the grant revoked;
/// - an entitlement is derived from the chain's grants — the latest end of a period not
///   revoked — so notifications applied in any order leave what applying them by `signedDate`
///   would, and a retried one changes nothing.
public final class PurchaseLedger: Sendable {
    let store: any LedgerStore
    private let clock: @Sendable () -> Date

    public init(store: any LedgerStore, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.clock = clock
    }

    /// A ledger on an SQLite file, created and migrated if needed.
    public static func sqlite(path: String, busyTimeout: Duration = .seconds(10)) throws(LedgerError) -> PurchaseLedger {
        PurchaseLedger(store: try SQLiteLedgerStore(path: path, busyTimeout: busyTimeout))
    }

    /// Grants `purchase` to `account`, or gives back the grant it already has; atomic, and on
    /// disk before it returns.
    ///
    /// - Throws: ``LedgerError`` — ``LedgerError/Code/replay`` when another account holds the
    ///   purchase or its chain (``LedgerError/holder`` names it),
    ///   ``LedgerError/Code/accountTokenMismatch``, ``LedgerError/Code/revoked``,
    ///   ``LedgerError/Code/invalidPurchase``; ``LedgerError/Code/storeUnavailable`` to retry.
    public func claim(_ purchase: LedgerPurchase, for account: LedgerAccount) async throws(LedgerError) -> ClaimResult {
        try LedgerPurchase.checkAccount(account.id)
        if let signed = purchase.appAccountToken, let expected = account.appAccountToken, signed != expected {
            throw LedgerError(
                .accountTokenMismatch,
                "The purchase's appAccountToken \(signed.uuidString) is not account \(account.id)'s (\(expected.uuidString)): it was bought for another account.")
        }
        if let revoked = purchase.revocationDate {
            throw LedgerError(.revoked, "Transaction \(purchase.transactionID) was revoked by the store at \(revoked.formatted(.iso8601)): nothing to grant.")
        }
        switch try await store.claim(purchase, account: account.id, at: clock()) {
        case .inserted(let grant):
            return .granted(grant)
        case .existing(let grant) where grant.account == account.id:
            if let revoked = grant.revokedAt {
                throw LedgerError(.revoked, "Transaction \(purchase.transactionID) was granted, then revoked at \(revoked.formatted(.iso8601)).")
            }
            return .alreadyGranted(grant)
        case .existing(let grant), .chainHeld(let grant):
            let what = grant.purchase.transactionID == purchase.transactionID
                ? "Transaction \(purchase.transactionID)" : "Transaction \(purchase.transactionID)'s chain (original \(purchase.originalTransactionID))"
            throw LedgerError(
                .replay, "\(what) is granted to another account, \(grant.account), since \(grant.grantedAt.formatted(.iso8601)): refused as a replay.",
                holder: grant.account, heldSince: grant.grantedAt)
        case .revokedBeforeClaim(let date):
            throw LedgerError(.revoked, "Transaction \(purchase.transactionID) was revoked by the store at \(date.formatted(.iso8601)) before anyone claimed it.")
        }
    }

    /// Applies a verified notification once: a purchase (renewal) recorded for the chain's
    /// account, a revocation marking the grant revoked, a reversal clearing it.
    public func apply(_ notification: LedgerNotification) async throws(LedgerError) -> NotificationOutcome {
        try LedgerPurchase.checkID(notification.id, "notification id")
        if let purchase = notification.purchase, purchase.store != notification.store {
            throw LedgerError(.invalidPurchase, "The notification is from \(notification.store) but its purchase from \(purchase.store).")
        }
        guard notification.effect == .none || notification.purchase != nil else {
            throw LedgerError(.invalidPurchase, "The \(notification.effect.rawValue) notification \(notification.id) carries no purchase.")
        }
        return try await store.apply(notification, at: clock())
    }

    /// The grant of a transaction: who has it, since when, in what state — the support question.
    public func grant(store: PurchaseStore, transactionID: String) async throws(LedgerError) -> Grant? {
        try await self.store.grant(store: store, transactionID: transactionID)
    }

    /// The grants of an order id a customer quotes.
    public func grants(store: PurchaseStore, orderID: String) async throws(LedgerError) -> [Grant] {
        try await self.store.grants(store: store, orderID: orderID)
    }

    /// What `account` holds now: one entitlement per chain that is not consumable.
    public func entitlements(for account: String, at time: Date? = nil) async throws(LedgerError) -> [Entitlement] {
        let now = time ?? clock()
        var chains: [String: [Grant]] = [:]
        var order: [String] = []
        for grant in try await store.grants(account: account) where grant.purchase.kind != .consumable {
            let key = "\(grant.purchase.store.rawValue)\u{0}\(grant.purchase.originalTransactionID)"
            if chains[key] == nil { order.append(key) }
            chains[key, default: []].append(grant)
        }
        return order.compactMap { key -> Entitlement? in
            guard let grants = chains[key], let first = grants.first else { return nil }
            let standing = grants.filter { !$0.isRevoked }
            let latest = standing.max { ($0.purchase.expiresDate ?? .distantFuture) < ($1.purchase.expiresDate ?? .distantFuture) }
            let state: Entitlement.State
            let expires: Date?
            if let latest {
                expires = latest.purchase.expiresDate
                state = expires.map { $0 > now } ?? true ? .active : .expired
            } else {
                expires = grants.compactMap(\.purchase.expiresDate).max()
                state = .revoked
            }
            return Entitlement(
                store: first.purchase.store, originalTransactionID: first.purchase.originalTransactionID,
                productID: (latest ?? grants.last ?? first).purchase.productID, kind: first.purchase.kind, expiresDate: expires, state: state)
        }
    }
}

/// What a store's atomic claim found.
public enum StoreClaim: Sendable {
    /// No grant of the transaction or its chain by another account: inserted for the account.
    case inserted(Grant)
    /// The transaction's grant, whoever holds it.
    case existing(Grant)
    /// The transaction is new, but its chain is granted to another account: nothing inserted.
    case chainHeld(Grant)
    /// A notification revoked the transaction before any claim: nothing inserted.
    case revokedBeforeClaim(Date)
}

/// A ledger's storage: each method one transaction, atomic and durable; the rules above are
/// ``PurchaseLedger``'s, the atomicity the store's.
public protocol LedgerStore: Sendable {
    /// In one transaction: the grant of `purchase`'s transaction if there is one; else, if its
    /// chain is granted to an account other than `account`, that grant; else a new grant to
    /// `account`, unless a notification revoked the transaction first.
    func claim(_ purchase: LedgerPurchase, account: String, at time: Date) async throws(LedgerError) -> StoreClaim
    /// In one transaction: records the notification id (refused as already applied when it is
    /// there), then its effect.
    func apply(_ notification: LedgerNotification, at time: Date) async throws(LedgerError) -> NotificationOutcome
    func grant(store: PurchaseStore, transactionID: String) async throws(LedgerError) -> Grant?
    func grants(store: PurchaseStore, orderID: String) async throws(LedgerError) -> [Grant]
    /// Every grant of `account`, oldest first.
    func grants(account: String) async throws(LedgerError) -> [Grant]
}
