import Foundation
import ServerTrustLedger
import ServerTrustPurchases

/// What `purchases verify --claim-for` and `purchases lookup` print: the ledger's answers as
/// text or JSON, and their exit statuses. The rules are ServerTrustLedger's.
enum LedgerClaimOutput {
    struct ClaimJSON: Encodable {
        let status: String
        let reason: String?
        let message: String
        let account: String?
        let transactionId: String
        let grantedAt: String?
    }

    struct GrantJSON: Encodable {
        let store: String
        let transactionId: String
        let originalTransactionId: String
        let orderId: String?
        let productId: String
        let account: String
        let grantedAt: String
        let state: String
        let revokedAt: String?

        init(_ grant: Grant) {
            store = grant.purchase.store.rawValue
            transactionId = grant.purchase.transactionID
            originalTransactionId = grant.purchase.originalTransactionID
            orderId = grant.purchase.orderID
            productId = grant.purchase.productID
            account = grant.account
            grantedAt = grant.grantedAt.formatted(.iso8601)
            state = grant.isRevoked ? "revoked" : "granted"
            revokedAt = grant.revokedAt?.formatted(.iso8601)
        }
    }

    struct EntitlementJSON: Encodable {
        let store: String
        let originalTransactionId: String
        let productId: String
        let kind: String
        let expiresDate: String?
        let state: String
    }

    static func open(_ path: String) throws -> PurchaseLedger {
        do {
            return try PurchaseLedger.sqlite(path: path)
        } catch {
            throw CommandFailure(status: error.isRetryable ? CommandFailure.transfer : CommandFailure.usage, message: "error: \(error.reason)")
        }
    }

    static func claim(_ transaction: AppStoreTransaction, for account: String, in path: String, json: Bool) async throws {
        let ledger = try open(path)
        let id = transaction.transactionId ?? "?"
        do {
            let purchase = try LedgerPurchase(appStore: transaction)
            let result = try await ledger.claim(purchase, for: LedgerAccount(account))
            let grant = result.grant
            let message =
                result.isNew
                ? "transaction \(id) granted to \(grant.account)"
                : "transaction \(id) was granted to \(grant.account) at \(grant.grantedAt.formatted(.iso8601)): the same grant, nothing new"
            emit(ClaimJSON(status: result.isNew ? "granted" : "alreadyGranted", reason: nil, message: message, account: grant.account, transactionId: id, grantedAt: grant.grantedAt.formatted(.iso8601)), text: "\(result.isNew ? "granted" : "already granted"): \(message)", json: json)
        } catch {
            emit(ClaimJSON(status: "refused", reason: error.code.rawValue, message: error.reason, account: error.holder, transactionId: id, grantedAt: error.heldSince?.formatted(.iso8601)), text: nil, json: json)
            if !json { StandardError.write("refused: \(error.code.rawValue): \(error.reason)") }
            throw CommandFailure(status: error.isRetryable ? CommandFailure.transfer : CommandFailure.rejected, message: "")
        }
    }

    static func lookup(ledger path: String, store: PurchaseStore, transaction: String?, order: String?, account: String?, json: Bool) async throws {
        let ledger = try open(path)
        do {
            if let account {
                let entitlements = try await ledger.entitlements(for: account)
                let rows = entitlements.map {
                    EntitlementJSON(
                        store: $0.store.rawValue, originalTransactionId: $0.originalTransactionID, productId: $0.productID, kind: $0.kind.rawValue,
                        expiresDate: $0.expiresDate?.formatted(.iso8601), state: $0.state.rawValue)
                }
                if json {
                    print(JSONText.render(rows))
                } else {
                    for row in rows {
                        print("\(row.state)  \(row.productId)  chain \(row.originalTransactionId) (\(row.kind))\(row.expiresDate.map { ", until \($0)" } ?? "")")
                    }
                    if rows.isEmpty { StandardError.write("no entitlements for \(account)") }
                }
                if rows.isEmpty { throw CommandFailure(status: CommandFailure.rejected, message: "") }
                return
            }
            var grants: [Grant] = []
            if let transaction, let grant = try await ledger.grant(store: store, transactionID: transaction) { grants = [grant] }
            if let order { grants = try await ledger.grants(store: store, orderID: order) }
            let rows = grants.map(GrantJSON.init)
            if json {
                print(JSONText.render(rows))
            } else {
                for row in rows {
                    print("\(row.state)  transaction \(row.transactionId) to \(row.account) at \(row.grantedAt), \(row.productId)\(row.revokedAt.map { ", revoked \($0)" } ?? "")")
                }
                if rows.isEmpty { StandardError.write("no grant of \(transaction.map { "transaction \($0)" } ?? "order \(order ?? "")") in \(path)") }
            }
            if rows.isEmpty { throw CommandFailure(status: CommandFailure.rejected, message: "") }
        } catch let error as LedgerError {
            throw CommandFailure(status: error.isRetryable ? CommandFailure.transfer : CommandFailure.usage, message: "error: \(error.reason)")
        }
    }

    private static func emit(_ value: ClaimJSON, text: String?, json: Bool) {
        if json {
            print(JSONText.render(value))
        } else if let text {
            print(text)
        }
    }
}
