import Foundation
import ServerTrustLab
import ServerTrustPurchases
import Testing

@testable import ServerTrustLedger

/// A fresh ledger of each store kind; every contract test runs against each: SQLite here,
/// PostgreSQL in PostgresLedgerContractTests (trait PostgreSQLLedger, a server from .ci/run).
enum StoreKind: String, CustomStringConvertible {
    case sqlite
    #if PostgreSQLLedger
    case postgres
    #endif

    /// What the default build tests.
    static let embedded: [StoreKind] = [.sqlite]

    var description: String { rawValue }

    /// A ledger on a new, empty store, and where it is (a file, a schema) to open it again.
    func make() async throws -> (ledger: PurchaseLedger, path: String) {
        switch self {
        case .sqlite:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).sqlite").path
            return (try PurchaseLedger.sqlite(path: path), path)
        #if PostgreSQLLedger
        case .postgres:
            let schema = "ledger_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            return (try await open(schema), schema)
        #endif
        }
    }

    /// Another connection to the store at `path`.
    func open(_ path: String) async throws -> PurchaseLedger {
        switch self {
        case .sqlite: try PurchaseLedger.sqlite(path: path)
        #if PostgreSQLLedger
        case .postgres: PurchaseLedger(store: try await PostgresLedgerStore(client: try TestPostgres.client(), schema: path))
        #endif
        }
    }
}

func refusal<T>(_ body: () throws -> T) -> LedgerError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error as? LedgerError
    }
}

func refusal<T>(_ body: () async throws -> T) async -> LedgerError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error as? LedgerError
    }
}

/// The ledger's guarantees — grant once, the same grant back to its account, a replay refused
/// naming its holder, subscriptions, refunds, notifications applied once in any order — proven
/// against every store by the same tests.
@Suite struct LedgerContractTests {
    static let start = Date(timeIntervalSince1970: 1_790_000_000)

    static func purchase(
        _ id: String = "2000000000000001", original: String? = nil, kind: PurchaseKind = .consumable, order: String? = nil,
        expires: Date? = nil, token: UUID? = nil, revoked: Date? = nil, store: PurchaseStore = .appStore
    ) throws -> LedgerPurchase {
        try LedgerPurchase(
            store: store, transactionID: id, originalTransactionID: original ?? id, orderID: order, productID: "com.example.app.gems.100",
            kind: kind, environment: "Production", purchaseDate: start, expiresDate: expires, appAccountToken: token, revocationDate: revoked,
            revocationReason: revoked.map { _ in "0" })
    }

    @Test(arguments: StoreKind.embedded)
    func theFirstClaimGrantsTheSameAccountGetsItBackAnotherIsAReplay(store: StoreKind) async throws {
        let ledger = try await store.make().ledger
        let purchase = try Self.purchase()
        let first = try await ledger.claim(purchase, for: "alice")
        #expect(first.isNew)
        #expect(first.grant.account == "alice" && first.grant.purchase == purchase && !first.grant.isRevoked)
        // The answer was lost: the client sends it again and gets the same grant, nothing new.
        let again = try await ledger.claim(purchase, for: "alice")
        #expect(again == .alreadyGranted(first.grant))
        let replay = await refusal { try await ledger.claim(purchase, for: "mallory") }
        #expect(replay?.code == .replay)
        #expect(replay?.holder == "alice" && replay?.heldSince == first.grant.grantedAt)
        #expect(try await ledger.grant(store: .appStore, transactionID: purchase.transactionID) == first.grant)
        // The same id in another store is another purchase.
        #expect(try await ledger.claim(try Self.purchase(store: .googlePlay), for: "mallory").isNew)
    }

    @Test(arguments: StoreKind.embedded)
    func aPurchaseForAnotherAccountsTokenIsRefusedAndWritesNothing(store: StoreKind) async throws {
        let ledger = try await store.make().ledger
        let (alice, bob) = (UUID(), UUID())
        let purchase = try Self.purchase(token: alice)
        let refused = await refusal { try await ledger.claim(purchase, for: LedgerAccount("bob", appAccountToken: bob)) }
        #expect(refused?.code == .accountTokenMismatch)
        #expect(try await ledger.grant(store: .appStore, transactionID: purchase.transactionID) == nil)
        #expect(try await ledger.claim(purchase, for: LedgerAccount("alice", appAccountToken: alice)).isNew)
    }

    @Test(arguments: StoreKind.embedded)
    func badInputIsATypedErrorAndWritesNothing(store: StoreKind) async throws {
        let ledger = try await store.make().ledger
        #expect(refusal { try Self.purchase("") }?.code == .invalidPurchase)
        #expect(refusal { try Self.purchase("12 34") }?.code == .invalidPurchase)
        #expect(refusal { try Self.purchase(String(repeating: "9", count: 257)) }?.code == .invalidPurchase)
        #expect(refusal { try Self.purchase(store: PurchaseStore(rawValue: "amazon")) }?.code == .invalidPurchase)
        #expect(await refusal { try await ledger.claim(try Self.purchase(), for: "") }?.code == .invalidPurchase)
        #expect(await refusal { try await ledger.claim(try Self.purchase(), for: "al ice") }?.code == .invalidPurchase)
        #expect(try await ledger.grant(store: .appStore, transactionID: "2000000000000001") == nil)
    }

    @Test(arguments: StoreKind.embedded)
    func aRevokedPurchaseIsNeverGrantedAndARefundEndsTheGrant(store: StoreKind) async throws {
        let ledger = try await store.make().ledger
        #expect(await refusal { try await ledger.claim(try Self.purchase(revoked: Self.start), for: "alice") }?.code == .revoked)
        #expect(try await ledger.grant(store: .appStore, transactionID: "2000000000000001") == nil)

        let purchase = try Self.purchase("2000000000000002", kind: .nonConsumable)
        _ = try await ledger.claim(purchase, for: "alice")
        #expect(try await ledger.entitlements(for: "alice").map(\.state) == [.active])
        let refundDate = Self.start.addingTimeInterval(86_400)
        var refunded = purchase
        refunded.revocationDate = refundDate
        refunded.revocationReason = "1"
        let refund = LedgerNotification(store: .appStore, id: "n-refund", signedDate: refundDate, effect: .revocation, purchase: refunded)
        guard case .applied(let grants) = try await ledger.apply(refund) else { Issue.record("the refund changed nothing"); return }
        #expect(grants.map(\.revokedAt) == [refundDate] && grants.map(\.revocationReason) == ["1"])
        #expect(try await ledger.entitlements(for: "alice").map(\.state) == [.revoked])
        // The client resubmits the old signed data: refused now, not granted again.
        #expect(await refusal { try await ledger.claim(purchase, for: "alice") }?.code == .revoked)
        // Apple retries the notification: nothing changes.
        #expect(try await ledger.apply(refund) == .alreadyApplied)
        // A refund reversed grants it again.
        let reversal = LedgerNotification(store: .appStore, id: "n-reversed", signedDate: refundDate.addingTimeInterval(60), effect: .revocationReversed, purchase: purchase)
        #expect(try await ledger.apply(reversal) != .recorded)
        #expect(try await ledger.entitlements(for: "alice").map(\.state) == [.active])
    }

    @Test(arguments: StoreKind.embedded)
    func aRefundBeforeAnyClaimIsRememberedAndTheLaterClaimRefused(store: StoreKind) async throws {
        let ledger = try await store.make().ledger
        var refunded = try Self.purchase("2000000000000003")
        refunded.revocationDate = Self.start.addingTimeInterval(10)
        #expect(try await ledger.apply(LedgerNotification(store: .appStore, id: "n1", signedDate: Self.start, effect: .revocation, purchase: refunded)) == .recorded)
        // The client's copy was signed before the refund and does not say so.
        let refused = await refusal { try await ledger.claim(try Self.purchase("2000000000000003"), for: "alice") }
        #expect(refused?.code == .revoked)
    }

    @Test(arguments: StoreKind.embedded)
    func aSubscriptionIsOneEntitlementMovedForwardByRenewalsAndEndedByExpiry(store: StoreKind) async throws {
        let ledger = try await store.make().ledger
        let month: TimeInterval = 30 * 86_400
        let first = try Self.purchase("3000000000000001", kind: .autoRenewableSubscription, order: "w-1", expires: Self.start.addingTimeInterval(month))
        _ = try await ledger.claim(first, for: "alice")
        // A renewal: new transaction, same chain, delivered by a notification.
        let renewal = try Self.purchase(
            "3000000000000002", original: "3000000000000001", kind: .autoRenewableSubscription, order: "w-2", expires: Self.start.addingTimeInterval(2 * month))
        let renewed = try await ledger.apply(LedgerNotification(store: .appStore, id: "n-renew", signedDate: Self.start.addingTimeInterval(month), effect: .purchase, purchase: renewal))
        guard case .applied(let grants) = renewed else { Issue.record("the renewal was not applied: \(renewed)"); return }
        #expect(grants.map(\.account) == ["alice"])
        let during = Self.start.addingTimeInterval(1.5 * month)
        #expect(try await ledger.entitlements(for: "alice", at: during) == [
            Entitlement(store: .appStore, originalTransactionID: "3000000000000001", productID: "com.example.app.gems.100", kind: .autoRenewableSubscription, expiresDate: renewal.expiresDate, state: .active)
        ])
        #expect(try await ledger.entitlements(for: "alice", at: Self.start.addingTimeInterval(3 * month)).map(\.state) == [.expired])
        // The renewal claimed by the account that holds the chain: the same grant back.
        #expect(try await ledger.claim(renewal, for: "alice").isNew == false)
        // The chain is alice's: another account claiming a renewal of it is a replay.
        let next = try Self.purchase("3000000000000003", original: "3000000000000001", kind: .autoRenewableSubscription, expires: Self.start.addingTimeInterval(3 * month))
        let replay = await refusal { try await ledger.claim(next, for: "mallory") }
        #expect(replay?.code == .replay && replay?.holder == "alice")
        #expect(try await ledger.grant(store: .appStore, transactionID: "3000000000000003") == nil)
        // The support question by order id.
        #expect(try await ledger.grants(store: .appStore, orderID: "w-2").map(\.purchase.transactionID) == ["3000000000000002"])
        // Consumables are grants, not entitlements.
        _ = try await ledger.claim(try Self.purchase("4000000000000001"), for: "alice")
        #expect(try await ledger.entitlements(for: "alice", at: during).count == 1)
    }

    @Test(arguments: StoreKind.embedded)
    func notificationsAppliedInAnyOrderLeaveWhatSignedDateOrderDoes(store: StoreKind) async throws {
        let month: TimeInterval = 30 * 86_400
        let first = try Self.purchase("5000000000000001", kind: .autoRenewableSubscription, expires: Self.start.addingTimeInterval(month))
        var notifications: [LedgerNotification] = []
        for period in 2...4 {
            let renewal = try Self.purchase(
                "500000000000000\(period)", original: "5000000000000001", kind: .autoRenewableSubscription, expires: Self.start.addingTimeInterval(Double(period) * month))
            notifications.append(LedgerNotification(store: .appStore, id: "renew-\(period)", signedDate: Self.start.addingTimeInterval(Double(period - 1) * month), effect: .purchase, purchase: renewal))
        }
        var refunded = notifications[1].purchase!
        refunded.revocationDate = Self.start.addingTimeInterval(2.5 * month)
        notifications.append(LedgerNotification(store: .appStore, id: "refund-3", signedDate: Self.start.addingTimeInterval(2.5 * month), effect: .revocation, purchase: refunded))

        func state(after order: [LedgerNotification]) async throws -> [Entitlement] {
            let ledger = try await store.make().ledger
            _ = try await ledger.claim(first, for: "alice")
            for notification in order { _ = try await ledger.apply(notification) }
            for notification in order { #expect(try await ledger.apply(notification) == .alreadyApplied) }
            return try await ledger.entitlements(for: "alice", at: Self.start.addingTimeInterval(3.5 * month))
        }
        let bySignedDate = try await state(after: notifications.sorted { $0.signedDate < $1.signedDate })
        #expect(bySignedDate.first?.expiresDate == Self.start.addingTimeInterval(4 * month) && bySignedDate.first?.state == .active)
        for order in [Array(notifications.reversed()), [notifications[3], notifications[0], notifications[2], notifications[1]]] {
            #expect(try await state(after: order) == bySignedDate)
        }
    }

    @Test(arguments: StoreKind.embedded)
    func concurrentClaimsOfOneTransactionGrantItOnce(store: StoreKind) async throws {
        let (_, path) = try await store.make()
        let purchase = try Self.purchase("6000000000000001")
        // 100 accounts at once, each on its own connection to the store.
        let outcomes = try await withThrowingTaskGroup(of: Result<ClaimResult, LedgerError>.self) { group in
            for account in 0..<100 {
                group.addTask {
                    let ledger = try await store.open(path)
                    do throws(LedgerError) { return .success(try await ledger.claim(purchase, for: LedgerAccount("account-\(account)"))) } catch { return .failure(error) }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let grants = outcomes.compactMap { try? $0.get() }
        let replays = outcomes.compactMap { outcome -> LedgerError? in if case .failure(let error) = outcome { error } else { nil } }
        #expect(grants.count == 1 && grants.first?.isNew == true)
        #expect(replays.count == 99 && replays.allSatisfy { $0.code == .replay && $0.holder == grants.first?.grant.account })

        // One account, 100 times at once: one grant, 99 times the same grant back.
        let mine = try Self.purchase("6000000000000002")
        let answers = try await withThrowingTaskGroup(of: ClaimResult.self) { group in
            for _ in 0..<100 { group.addTask { try await store.open(path).claim(mine, for: "alice") } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.filter(\.isNew).count == 1)
        #expect(Set(answers.map(\.grant)).count == 1)
    }

    @Test(arguments: StoreKind.embedded)
    func aGrantIsOnDiskWhenTheClaimReturns(store: StoreKind) async throws {
        let (ledger, path) = try await store.make()
        let granted = try await ledger.claim(try Self.purchase(), for: "alice")
        // Another connection, as after a restart.
        let reopened = try await store.open(path)
        #expect(try await reopened.grant(store: .appStore, transactionID: "2000000000000001") == granted.grant)
        #expect(try await reopened.claim(try Self.purchase(), for: "alice") == .alreadyGranted(granted.grant))
    }

    /// A transaction the App Store signed, verified, claimed: the path a server takes.
    @Test func aVerifiedAppStoreTransactionIsClaimedWithItsSignedToken() async throws {
        let lab = try AppStoreLab()
        let verifier = try AppStoreSignedDataVerifier(roots: [lab.root.certificate], bundleID: "com.example.app", appAppleID: nil, environment: .sandbox, revocation: .disabled)
        let token = UUID()
        let jws = try lab.jws(payload: AppStoreLab.transactionJSON(extra: ["\"appAccountToken\":\"\(token.uuidString)\"", "\"webOrderLineItemId\":\"70000001\""]))
        let purchase = try LedgerPurchase(appStore: try await verifier.verifyTransaction(jws))
        #expect(purchase.kind == .consumable && purchase.appAccountToken == token && purchase.orderID == "70000001" && purchase.environment == "Sandbox")
        let ledger = try await StoreKind.sqlite.make().ledger
        #expect(await refusal { try await ledger.claim(purchase, for: LedgerAccount("bob", appAccountToken: UUID())) }?.code == .accountTokenMismatch)
        #expect(try await ledger.claim(purchase, for: LedgerAccount("alice", appAccountToken: token)).isNew)
    }

    /// A refund notification the App Store signed, verified, applied: the grant ends, a retry
    /// changes nothing, the resubmitted transaction is refused.
    @Test func aVerifiedRefundNotificationEndsTheGrant() async throws {
        let lab = try AppStoreLab()
        let verifier = try AppStoreSignedDataVerifier(roots: [lab.root.certificate], bundleID: "com.example.app", appAppleID: 1_234_567_890, environment: .sandbox, revocation: .disabled)
        let ledger = try await StoreKind.sqlite.make().ledger
        let bought = try lab.jws(payload: AppStoreLab.transactionJSON())
        _ = try await ledger.claim(try LedgerPurchase(appStore: try await verifier.verifyTransaction(bought)), for: "alice")

        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let refunded = try lab.jws(payload: AppStoreLab.transactionJSON(extra: ["\"revocationDate\":\(now - 1000)", "\"revocationReason\":1"]))
        let body = "{\"notificationType\":\"REFUND\",\"notificationUUID\":\"0a1b2c3d-0000-4000-8000-00000000000f\",\"version\":\"2.0\",\"signedDate\":\(now),"
            + "\"data\":{\"appAppleId\":1234567890,\"bundleId\":\"com.example.app\",\"environment\":\"Sandbox\",\"signedTransactionInfo\":\"\(refunded)\"}}"
        let notification = try LedgerNotification(appStore: try await verifier.verifyNotification(try lab.jws(payload: body)))
        #expect(notification.effect == .revocation && notification.id == "0a1b2c3d-0000-4000-8000-00000000000f")
        guard case .applied(let grants) = try await ledger.apply(notification) else { Issue.record("the refund was not applied"); return }
        #expect(grants.map(\.account) == ["alice"] && grants.map(\.revocationReason) == ["1"])
        #expect(try await ledger.apply(notification) == .alreadyApplied)
        #expect(await refusal { try await ledger.claim(try LedgerPurchase(appStore: try await verifier.verifyTransaction(bought)), for: "alice") }?.code == .revoked)
    }
}
