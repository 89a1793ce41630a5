import Foundation

/// A grant as a store keeps it, column by column: what every store writes, and what it reads
/// back before anything trusts it — a row the ledger could not have written is
/// ``LedgerError/Code/corruptRecord``, never a default.
struct GrantRow {
    /// The columns, in this order, in every store's `grants` table.
    static let columns =
        "store, transaction_id, original_transaction_id, order_id, product_id, kind, environment, quantity, purchased_at, expires_at, app_account_token, account, granted_at, revoked_at, revocation_reason"

    var store: String
    var transactionID: String
    var originalTransactionID: String
    var orderID: String?
    var productID: String
    var kind: String
    var environment: String
    var quantity: Int64
    /// Milliseconds since 1970, as every time here.
    var purchasedAt: Int64
    var expiresAt: Int64?
    var appAccountToken: String?
    var account: String
    var grantedAt: Int64
    var revokedAt: Int64?
    var revocationReason: String?

    init(
        store: String, transactionID: String, originalTransactionID: String, orderID: String?, productID: String, kind: String, environment: String,
        quantity: Int64, purchasedAt: Int64, expiresAt: Int64?, appAccountToken: String?, account: String, grantedAt: Int64, revokedAt: Int64?,
        revocationReason: String?
    ) {
        self.store = store
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.orderID = orderID
        self.productID = productID
        self.kind = kind
        self.environment = environment
        self.quantity = quantity
        self.purchasedAt = purchasedAt
        self.expiresAt = expiresAt
        self.appAccountToken = appAccountToken
        self.account = account
        self.grantedAt = grantedAt
        self.revokedAt = revokedAt
        self.revocationReason = revocationReason
    }

    /// The row a grant is written as.
    init(_ grant: Grant) {
        let purchase = grant.purchase
        self.init(
            store: purchase.store.rawValue, transactionID: purchase.transactionID, originalTransactionID: purchase.originalTransactionID,
            orderID: purchase.orderID, productID: purchase.productID, kind: purchase.kind.rawValue, environment: purchase.environment,
            quantity: Int64(purchase.quantity), purchasedAt: LedgerTime.milliseconds(purchase.purchaseDate),
            expiresAt: purchase.expiresDate.map(LedgerTime.milliseconds), appAccountToken: purchase.appAccountToken?.uuidString,
            account: grant.account, grantedAt: LedgerTime.milliseconds(grant.grantedAt), revokedAt: grant.revokedAt.map(LedgerTime.milliseconds),
            revocationReason: grant.revocationReason)
    }

    /// The grant the row holds, every column checked.
    func grant() throws(LedgerError) -> Grant {
        guard let kind = PurchaseKind(rawValue: kind) else { throw LedgerError(.corruptRecord, "The ledger row's kind \"\(self.kind)\" is not one the ledger writes.") }
        guard quantity >= 1, quantity <= Int64(Int32.max) else { throw LedgerError(.corruptRecord, "The ledger row's quantity \(quantity) is out of range.") }
        var token: UUID?
        if let appAccountToken {
            guard let uuid = UUID(uuidString: appAccountToken) else {
                throw LedgerError(.corruptRecord, "The ledger row's app_account_token \"\(appAccountToken)\" is not a UUID.")
            }
            token = uuid
        }
        let purchase: LedgerPurchase
        do {
            purchase = try LedgerPurchase(
                store: PurchaseStore(rawValue: store), transactionID: transactionID, originalTransactionID: originalTransactionID, orderID: orderID,
                productID: productID, kind: kind, environment: environment, quantity: Int(quantity), purchaseDate: LedgerTime.date(purchasedAt),
                expiresDate: expiresAt.map(LedgerTime.date), appAccountToken: token)
            try LedgerPurchase.checkAccount(account)
        } catch {
            throw LedgerError(.corruptRecord, "A ledger row is not a grant the ledger could have written: \(error.reason)")
        }
        return Grant(
            purchase: purchase, account: account, grantedAt: LedgerTime.date(grantedAt), revokedAt: revokedAt.map(LedgerTime.date),
            revocationReason: revocationReason)
    }
}
