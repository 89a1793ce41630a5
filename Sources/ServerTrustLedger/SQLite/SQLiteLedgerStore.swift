public import Foundation
import ServerTrust

/// The ledger on one SQLite file: the embedded default, nothing to run beside it. Each claim is
/// one `BEGIN IMMEDIATE` transaction, so claims from threads and processes on the same file are
/// serialised by SQLite's write lock (waiting up to the busy timeout); `synchronous = FULL`
/// makes each commit durable before the claim returns. For servers on several machines, a
/// server database (PostgreSQL) is the store to use.
public final class SQLiteLedgerStore: LedgerStore, @unchecked Sendable {
    private let database: Locked<SQLiteDatabase>

    /// The schema's versions, applied in order inside one transaction each and recorded in
    /// `ledger_migrations`; a database at a version this code does not know is refused.
    static let migrations: [(version: Int, sql: String)] = [
        (
            1,
            """
            CREATE TABLE grants (
                store TEXT NOT NULL,
                transaction_id TEXT NOT NULL,
                original_transaction_id TEXT NOT NULL,
                order_id TEXT,
                product_id TEXT NOT NULL,
                kind TEXT NOT NULL,
                environment TEXT NOT NULL,
                quantity INTEGER NOT NULL CHECK (quantity >= 1),
                purchased_at INTEGER NOT NULL,
                expires_at INTEGER,
                app_account_token TEXT,
                account TEXT NOT NULL,
                granted_at INTEGER NOT NULL,
                revoked_at INTEGER,
                revocation_reason TEXT,
                PRIMARY KEY (store, transaction_id)
            );
            CREATE INDEX grants_by_chain ON grants (store, original_transaction_id);
            CREATE INDEX grants_by_account ON grants (account);
            CREATE INDEX grants_by_order ON grants (store, order_id);
            CREATE TABLE revocations (
                store TEXT NOT NULL,
                transaction_id TEXT NOT NULL,
                revoked_at INTEGER NOT NULL,
                reason TEXT,
                PRIMARY KEY (store, transaction_id)
            );
            CREATE TABLE notifications (
                store TEXT NOT NULL,
                notification_id TEXT NOT NULL,
                signed_at INTEGER NOT NULL,
                applied_at INTEGER NOT NULL,
                PRIMARY KEY (store, notification_id)
            );
            """
        )
    ]

    /// Opens or creates the file and brings its schema to the newest version.
    ///
    /// - Throws: ``LedgerError/Code/storeUnavailable`` when the file cannot be opened,
    ///   ``LedgerError/Code/corruptRecord`` for a schema newer than this code.
    public init(path: String, busyTimeout: Duration = .seconds(10)) throws(LedgerError) {
        let database = try SQLiteDatabase(path: path, busyTimeout: busyTimeout)
        try database.transaction { () throws(LedgerError) in
            try database.execute("CREATE TABLE IF NOT EXISTS ledger_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)")
            let applied = try database.query("SELECT version FROM ledger_migrations ORDER BY version") { row throws(LedgerError) in
                try row.integer(0, "migration version")
            }
            let newest = Self.migrations.last?.version ?? 0
            if let beyond = applied.last, beyond > newest {
                throw LedgerError(.corruptRecord, "The ledger database \(path) is at schema version \(beyond); this code knows up to \(newest).")
            }
            for migration in Self.migrations where !applied.contains(Int64(migration.version)) {
                try database.execute(migration.sql)
                try database.run(
                    "INSERT INTO ledger_migrations (version, applied_at) VALUES (?, ?)",
                    [.integer(Int64(migration.version)), .date(Date())])
            }
        }
        self.database = Locked(database)
    }

    /// The schema version of the file.
    public var schemaVersion: Int {
        get throws(LedgerError) {
            try withDatabase { database throws(LedgerError) in
                Int(try database.query("SELECT max(version) FROM ledger_migrations") { row throws(LedgerError) in try row.optionalInteger(0, "version") }.first.flatMap { $0 } ?? 0)
            }
        }
    }

    private func withDatabase<Result>(_ body: (SQLiteDatabase) throws(LedgerError) -> Result) throws(LedgerError) -> Result {
        let result: Swift.Result<Result, LedgerError> = database.withLock { database in
            do throws(LedgerError) { return .success(try body(database)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    static let grantColumns = GrantRow.columns

    public func claim(_ purchase: LedgerPurchase, account: String, at time: Date) async throws(LedgerError) -> StoreClaim {
        try withDatabase { database throws(LedgerError) in
            try database.transaction { () throws(LedgerError) -> StoreClaim in
                let key: [SQLiteValue] = [.text(purchase.store.rawValue), .text(purchase.transactionID)]
                if let existing = try database.query("SELECT \(Self.grantColumns) FROM grants WHERE store = ? AND transaction_id = ?", key, row: Self.grant).first {
                    return .existing(existing)
                }
                if let revoked = try database.query("SELECT revoked_at FROM revocations WHERE store = ? AND transaction_id = ?", key, row: { row throws(LedgerError) in
                    try row.integer(0, "revoked_at")
                }).first {
                    return .revokedBeforeClaim(LedgerTime.date(revoked))
                }
                if let holder = try database.query(
                    "SELECT \(Self.grantColumns) FROM grants WHERE store = ? AND original_transaction_id = ? AND account <> ? ORDER BY granted_at LIMIT 1",
                    [.text(purchase.store.rawValue), .text(purchase.originalTransactionID), .text(account)], row: Self.grant
                ).first {
                    return .chainHeld(holder)
                }
                let grant = Grant(purchase: purchase, account: account, grantedAt: LedgerTime.date(LedgerTime.milliseconds(time)), revokedAt: nil, revocationReason: nil)
                try Self.insert(grant, into: database)
                return .inserted(grant)
            }
        }
    }

    private static func insert(_ grant: Grant, into database: SQLiteDatabase) throws(LedgerError) {
        let row = GrantRow(grant)
        try database.run(
            "INSERT INTO grants (\(grantColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                .text(row.store), .text(row.transactionID), .text(row.originalTransactionID), .optional(row.orderID), .text(row.productID),
                .text(row.kind), .text(row.environment), .integer(row.quantity), .integer(row.purchasedAt), .optional(row.expiresAt),
                .optional(row.appAccountToken), .text(row.account), .integer(row.grantedAt), .optional(row.revokedAt), .optional(row.revocationReason),
            ])
    }

    public func apply(_ notification: LedgerNotification, at time: Date) async throws(LedgerError) -> NotificationOutcome {
        try withDatabase { database throws(LedgerError) in
            try database.transaction { () throws(LedgerError) -> NotificationOutcome in
                let inserted = try database.run(
                    "INSERT INTO notifications (store, notification_id, signed_at, applied_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    [.text(notification.store.rawValue), .text(notification.id), .date(notification.signedDate), .date(time)])
                guard inserted == 1 else { return .alreadyApplied }
                guard let purchase = notification.purchase else { return .recorded }
                let key: [SQLiteValue] = [.text(purchase.store.rawValue), .text(purchase.transactionID)]
                switch notification.effect {
                case .none:
                    return .recorded
                case .purchase:
                    guard try database.query("SELECT 1 FROM grants WHERE store = ? AND transaction_id = ?", key, row: { _ throws(LedgerError) in () }).isEmpty,
                        let holder = try database.query(
                            "SELECT \(Self.grantColumns) FROM grants WHERE store = ? AND original_transaction_id = ? ORDER BY granted_at LIMIT 1",
                            [.text(purchase.store.rawValue), .text(purchase.originalTransactionID)], row: Self.grant
                        ).first
                    else { return .recorded }
                    let grant = Grant(
                        purchase: purchase, account: holder.account, grantedAt: LedgerTime.date(LedgerTime.milliseconds(time)),
                        revokedAt: purchase.revocationDate.map { LedgerTime.date(LedgerTime.milliseconds($0)) }, revocationReason: purchase.revocationReason)
                    try Self.insert(grant, into: database)
                    return .applied([grant])
                case .revocation:
                    let date = purchase.revocationDate ?? notification.signedDate
                    try database.run(
                        "INSERT INTO revocations (store, transaction_id, revoked_at, reason) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                        key + [.date(date), .optional(purchase.revocationReason)])
                    let changed = try database.run(
                        "UPDATE grants SET revoked_at = ?, revocation_reason = ? WHERE store = ? AND transaction_id = ? AND revoked_at IS NULL",
                        [.date(date), .optional(purchase.revocationReason)] + key)
                    return changed == 0 ? .recorded : .applied(try database.query("SELECT \(Self.grantColumns) FROM grants WHERE store = ? AND transaction_id = ?", key, row: Self.grant))
                case .revocationReversed:
                    try database.run("DELETE FROM revocations WHERE store = ? AND transaction_id = ?", key)
                    let changed = try database.run(
                        "UPDATE grants SET revoked_at = NULL, revocation_reason = NULL WHERE store = ? AND transaction_id = ? AND revoked_at IS NOT NULL", key)
                    return changed == 0 ? .recorded : .applied(try database.query("SELECT \(Self.grantColumns) FROM grants WHERE store = ? AND transaction_id = ?", key, row: Self.grant))
                }
            }
        }
    }

    public func grant(store: PurchaseStore, transactionID: String) async throws(LedgerError) -> Grant? {
        try withDatabase { database throws(LedgerError) in
            try database.query(
                "SELECT \(Self.grantColumns) FROM grants WHERE store = ? AND transaction_id = ?", [.text(store.rawValue), .text(transactionID)], row: Self.grant
            ).first
        }
    }

    public func grants(store: PurchaseStore, orderID: String) async throws(LedgerError) -> [Grant] {
        try withDatabase { database throws(LedgerError) in
            try database.query(
                "SELECT \(Self.grantColumns) FROM grants WHERE store = ? AND order_id = ? ORDER BY granted_at, transaction_id",
                [.text(store.rawValue), .text(orderID)], row: Self.grant)
        }
    }

    public func grants(account: String) async throws(LedgerError) -> [Grant] {
        try withDatabase { database throws(LedgerError) in
            try database.query("SELECT \(Self.grantColumns) FROM grants WHERE account = ? ORDER BY granted_at, transaction_id", [.text(account)], row: Self.grant)
        }
    }

    /// A row of `grants`, read as ``GrantRow`` and checked there.
    static func grant(_ row: SQLiteRow) throws(LedgerError) -> Grant {
        try GrantRow(
            store: try row.text(0, "store"), transactionID: try row.text(1, "transaction_id"), originalTransactionID: try row.text(2, "original_transaction_id"),
            orderID: try row.optionalText(3, "order_id"), productID: try row.text(4, "product_id"), kind: try row.text(5, "kind"),
            environment: try row.text(6, "environment"), quantity: try row.integer(7, "quantity"), purchasedAt: try row.integer(8, "purchased_at"),
            expiresAt: try row.optionalInteger(9, "expires_at"), appAccountToken: try row.optionalText(10, "app_account_token"),
            account: try row.text(11, "account"), grantedAt: try row.integer(12, "granted_at"), revokedAt: try row.optionalInteger(13, "revoked_at"),
            revocationReason: try row.optionalText(14, "revocation_reason")
        ).grant()
    }
}
