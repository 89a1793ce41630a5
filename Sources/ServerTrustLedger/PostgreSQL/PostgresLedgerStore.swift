#if PostgreSQLLedger
public import Foundation
public import Logging
public import PostgresNIO

/// The ledger on a PostgreSQL server, for services on more than one machine (package trait
/// `PostgreSQLLedger`, postgres-nio). Each claim and each notification is one transaction that
/// first takes a transaction-level advisory lock on its chain (`pg_advisory_xact_lock` of the
/// store and original transaction id), so claims of one chain from any number of servers run
/// one after another while other chains go in parallel; a commit has returned before an answer
/// is given. The tables live in their own schema, migrated once under a lock.
///
/// The `PostgresClient` is yours: run it (`client.run()` in a task, or in a `ServiceGroup`)
/// before the first claim.
public final class PostgresLedgerStore: LedgerStore {
    private let client: PostgresClient
    private let schema: String
    private let logger: Logger

    /// The schema's versions, each applied once in order, recorded in `ledger_migrations`.
    static func migrations(_ schema: String) -> [(version: Int, statements: [String])] {
        [
            (
                1,
                [
                    """
                    CREATE TABLE \(schema).grants (
                        store TEXT NOT NULL, transaction_id TEXT NOT NULL, original_transaction_id TEXT NOT NULL, order_id TEXT,
                        product_id TEXT NOT NULL, kind TEXT NOT NULL, environment TEXT NOT NULL, quantity BIGINT NOT NULL CHECK (quantity >= 1),
                        purchased_at BIGINT NOT NULL, expires_at BIGINT, app_account_token TEXT, account TEXT NOT NULL, granted_at BIGINT NOT NULL,
                        revoked_at BIGINT, revocation_reason TEXT, PRIMARY KEY (store, transaction_id))
                    """,
                    "CREATE INDEX grants_by_chain ON \(schema).grants (store, original_transaction_id)",
                    "CREATE INDEX grants_by_account ON \(schema).grants (account)",
                    "CREATE INDEX grants_by_order ON \(schema).grants (store, order_id)",
                    """
                    CREATE TABLE \(schema).revocations (
                        store TEXT NOT NULL, transaction_id TEXT NOT NULL, revoked_at BIGINT NOT NULL, reason TEXT, PRIMARY KEY (store, transaction_id))
                    """,
                    """
                    CREATE TABLE \(schema).notifications (
                        store TEXT NOT NULL, notification_id TEXT NOT NULL, signed_at BIGINT NOT NULL, applied_at BIGINT NOT NULL,
                        PRIMARY KEY (store, notification_id))
                    """,
                ]
            )
        ]
    }

    /// Connects the ledger to `schema` (created if missing) and brings it to the newest version.
    ///
    /// - Parameters:
    ///   - client: a `PostgresClient` whose `run()` is going (or will be).
    ///   - schema: a lower-case SQL identifier (`[a-z_][a-z0-9_]*`, at most 63).
    ///   - logger: where postgres-nio logs the ledger's statements.
    /// - Throws: ``LedgerError/Code/invalidPurchase`` for another schema name,
    ///   ``LedgerError/Code/storeUnavailable`` when the server cannot be reached,
    ///   ``LedgerError/Code/corruptRecord`` for a schema newer than this code.
    public init(client: PostgresClient, schema: String = "servertrust_ledger", logger: Logger = Logger(label: "servertrust.ledger")) async throws(LedgerError) {
        guard let first = schema.unicodeScalars.first, schema.unicodeScalars.count <= 63,
            first == "_" || ("a"..."z").contains(first),
            schema.unicodeScalars.allSatisfy({ $0 == "_" || ("a"..."z").contains($0) || ("0"..."9").contains($0) })
        else {
            throw LedgerError(.invalidPurchase, "The schema name \"\(schema.prefix(64))\" is not a lower-case SQL identifier of at most 63 characters.")
        }
        self.client = client
        self.schema = "\"\(schema)\""
        self.logger = logger
        try await migrate()
    }

    private func migrate() async throws(LedgerError) {
        let schema = self.schema
        try await transaction(lock: "migrations \(schema)") { connection in
            try await connection.query("CREATE SCHEMA IF NOT EXISTS \(unescaped: schema)", logger: self.logger)
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS \(unescaped: schema).ledger_migrations (version BIGINT PRIMARY KEY, applied_at BIGINT NOT NULL)",
                logger: self.logger)
            var applied: [Int64] = []
            for try await row in try await connection.query("SELECT version FROM \(unescaped: schema).ledger_migrations ORDER BY version", logger: self.logger) {
                applied.append(try Self.cell(row.makeRandomAccess(), 0, Int64.self, "version"))
            }
            let newest = Self.migrations(schema).last?.version ?? 0
            if let beyond = applied.last, beyond > newest {
                throw LedgerError(.corruptRecord, "The ledger schema \(schema) is at version \(beyond); this code knows up to \(newest).")
            }
            for migration in Self.migrations(schema) where !applied.contains(Int64(migration.version)) {
                for statement in migration.statements { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: self.logger) }
                let version = Int64(migration.version)
                let now = LedgerTime.milliseconds(Date())
                try await connection.query("INSERT INTO \(unescaped: schema).ledger_migrations (version, applied_at) VALUES (\(version), \(now))", logger: self.logger)
            }
        }
    }

    /// The schema version of the ledger.
    public var schemaVersion: Int {
        get async throws(LedgerError) {
            try await transaction(lock: nil) { connection in
                var version: Int64 = 0
                for try await row in try await connection.query("SELECT coalesce(max(version), 0) FROM \(unescaped: self.schema).ledger_migrations", logger: self.logger) {
                    version = try Self.cell(row.makeRandomAccess(), 0, Int64.self, "version")
                }
                return Int(version)
            }
        }
    }

    public func claim(_ purchase: LedgerPurchase, account: String, at time: Date) async throws(LedgerError) -> StoreClaim {
        try await transaction(lock: Self.chainLock(purchase)) { connection in
            let (store, id) = (purchase.store.rawValue, purchase.transactionID)
            if let existing = try await self.grants(connection, "SELECT \(unescaped: GrantRow.columns) FROM \(unescaped: self.schema).grants WHERE store = \(store) AND transaction_id = \(id)").first {
                return .existing(existing)
            }
            for try await row in try await connection.query(
                "SELECT revoked_at FROM \(unescaped: self.schema).revocations WHERE store = \(store) AND transaction_id = \(id)", logger: self.logger)
            {
                return .revokedBeforeClaim(LedgerTime.date(try Self.cell(row.makeRandomAccess(), 0, Int64.self, "revoked_at")))
            }
            let original = purchase.originalTransactionID
            if let holder = try await self.grants(
                connection, "SELECT \(unescaped: GrantRow.columns) FROM \(unescaped: self.schema).grants WHERE store = \(store) AND original_transaction_id = \(original) AND account <> \(account) ORDER BY granted_at LIMIT 1"
            ).first {
                return .chainHeld(holder)
            }
            let grant = Grant(purchase: purchase, account: account, grantedAt: LedgerTime.date(LedgerTime.milliseconds(time)), revokedAt: nil, revocationReason: nil)
            try await self.insert(grant, connection)
            return .inserted(grant)
        }
    }

    public func apply(_ notification: LedgerNotification, at time: Date) async throws(LedgerError) -> NotificationOutcome {
        try await transaction(lock: notification.purchase.map(Self.chainLock)) { connection in
            let (store, id) = (notification.store.rawValue, notification.id)
            let signed = LedgerTime.milliseconds(notification.signedDate)
            let applied = LedgerTime.milliseconds(time)
            var inserted = false
            for try await _ in try await connection.query(
                """
                INSERT INTO \(unescaped: self.schema).notifications (store, notification_id, signed_at, applied_at)
                VALUES (\(store), \(id), \(signed), \(applied)) ON CONFLICT DO NOTHING RETURNING 1
                """, logger: self.logger)
            {
                inserted = true
            }
            guard inserted else { return .alreadyApplied }
            guard let purchase = notification.purchase else { return .recorded }
            let (pstore, txn) = (purchase.store.rawValue, purchase.transactionID)
            switch notification.effect {
            case .none:
                return .recorded
            case .purchase:
                guard try await self.grants(connection, "SELECT \(unescaped: GrantRow.columns) FROM \(unescaped: self.schema).grants WHERE store = \(pstore) AND transaction_id = \(txn)").isEmpty,
                    let holder = try await self.grants(
                        connection, "SELECT \(unescaped: GrantRow.columns) FROM \(unescaped: self.schema).grants WHERE store = \(pstore) AND original_transaction_id = \(purchase.originalTransactionID) ORDER BY granted_at LIMIT 1"
                    ).first
                else { return .recorded }
                let grant = Grant(
                    purchase: purchase, account: holder.account, grantedAt: LedgerTime.date(applied),
                    revokedAt: purchase.revocationDate.map { LedgerTime.date(LedgerTime.milliseconds($0)) }, revocationReason: purchase.revocationReason)
                try await self.insert(grant, connection)
                return .applied([grant])
            case .revocation:
                let date = LedgerTime.milliseconds(purchase.revocationDate ?? notification.signedDate)
                let reason = purchase.revocationReason
                try await connection.query(
                    """
                    INSERT INTO \(unescaped: self.schema).revocations (store, transaction_id, revoked_at, reason)
                    VALUES (\(pstore), \(txn), \(date), \(reason)) ON CONFLICT DO NOTHING
                    """, logger: self.logger)
                let changed = try await self.grants(
                    connection,
                    """
                    UPDATE \(unescaped: self.schema).grants SET revoked_at = \(date), revocation_reason = \(reason)
                    WHERE store = \(pstore) AND transaction_id = \(txn) AND revoked_at IS NULL RETURNING \(unescaped: GrantRow.columns)
                    """)
                return changed.isEmpty ? .recorded : .applied(changed)
            case .revocationReversed:
                try await connection.query(
                    "DELETE FROM \(unescaped: self.schema).revocations WHERE store = \(pstore) AND transaction_id = \(txn)", logger: self.logger)
                let changed = try await self.grants(
                    connection,
                    """
                    UPDATE \(unescaped: self.schema).grants SET revoked_at = NULL, revocation_reason = NULL
                    WHERE store = \(pstore) AND transaction_id = \(txn) AND revoked_at IS NOT NULL RETURNING \(unescaped: GrantRow.columns)
                    """)
                return changed.isEmpty ? .recorded : .applied(changed)
            }
        }
    }

    public func grant(store: PurchaseStore, transactionID: String) async throws(LedgerError) -> Grant? {
        try await transaction(lock: nil) { connection in
            try await self.grants(connection, "SELECT \(unescaped: GrantRow.columns) FROM \(unescaped: self.schema).grants WHERE store = \(store.rawValue) AND transaction_id = \(transactionID)").first
        }
    }

    public func grants(store: PurchaseStore, orderID: String) async throws(LedgerError) -> [Grant] {
        try await transaction(lock: nil) { connection in
            try await self.grants(connection, "SELECT \(unescaped: GrantRow.columns) FROM \(unescaped: self.schema).grants WHERE store = \(store.rawValue) AND order_id = \(orderID) ORDER BY granted_at, transaction_id")
        }
    }

    public func grants(account: String) async throws(LedgerError) -> [Grant] {
        try await transaction(lock: nil) { connection in
            try await self.grants(connection, "SELECT \(unescaped: GrantRow.columns) FROM \(unescaped: self.schema).grants WHERE account = \(account) ORDER BY granted_at, transaction_id")
        }
    }

    // MARK: - Statements

    /// The lock a chain's claims and notifications take.
    private static func chainLock(_ purchase: LedgerPurchase) -> String { "\(purchase.store.rawValue)\u{1F}\(purchase.originalTransactionID)" }

    /// The grants `query` returns (a SELECT or an UPDATE … RETURNING of ``GrantRow/columns``).
    private func grants(_ connection: PostgresConnection, _ query: PostgresQuery) async throws -> [Grant] {
        var grants: [Grant] = []
        for try await row in try await connection.query(query, logger: logger) {
            grants.append(try Self.grant(row.makeRandomAccess()))
        }
        return grants
    }

    private func insert(_ grant: Grant, _ connection: PostgresConnection) async throws {
        let row = GrantRow(grant)
        try await connection.query(
            """
            INSERT INTO \(unescaped: schema).grants (\(unescaped: GrantRow.columns)) VALUES (\(row.store), \(row.transactionID), \(row.originalTransactionID),
            \(row.orderID), \(row.productID), \(row.kind), \(row.environment), \(row.quantity), \(row.purchasedAt), \(row.expiresAt),
            \(row.appAccountToken), \(row.account), \(row.grantedAt), \(row.revokedAt), \(row.revocationReason))
            """, logger: logger)
    }

    private static func grant(_ row: PostgresRandomAccessRow) throws -> Grant {
        try GrantRow(
            store: try cell(row, 0, String.self, "store"), transactionID: try cell(row, 1, String.self, "transaction_id"),
            originalTransactionID: try cell(row, 2, String.self, "original_transaction_id"), orderID: try cell(row, 3, String?.self, "order_id"),
            productID: try cell(row, 4, String.self, "product_id"), kind: try cell(row, 5, String.self, "kind"),
            environment: try cell(row, 6, String.self, "environment"), quantity: try cell(row, 7, Int64.self, "quantity"),
            purchasedAt: try cell(row, 8, Int64.self, "purchased_at"), expiresAt: try cell(row, 9, Int64?.self, "expires_at"),
            appAccountToken: try cell(row, 10, String?.self, "app_account_token"), account: try cell(row, 11, String.self, "account"),
            grantedAt: try cell(row, 12, Int64.self, "granted_at"), revokedAt: try cell(row, 13, Int64?.self, "revoked_at"),
            revocationReason: try cell(row, 14, String?.self, "revocation_reason")
        ).grant()
    }

    /// One column, of the type the schema says, or ``LedgerError/Code/corruptRecord``.
    private static func cell<Value: PostgresDecodable>(_ row: PostgresRandomAccessRow, _ index: Int, _ type: Value.Type, _ name: String) throws(LedgerError) -> Value {
        guard index < row.count else { throw LedgerError(.corruptRecord, "The ledger row has no \(name) column.") }
        do {
            return try row[index].decode(Value.self)
        } catch {
            throw LedgerError(.corruptRecord, "The ledger row's \(name) is not a \(Value.self).")
        }
    }

    /// `body` in one transaction, after the advisory lock of `lock` when given; every error a
    /// ``LedgerError``.
    private func transaction<Result: Sendable>(
        lock: String?, _ body: @escaping (PostgresConnection) async throws -> Result
    ) async throws(LedgerError) -> Result {
        do {
            return try await client.withTransaction(logger: logger) { connection in
                if let lock {
                    try await connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\(lock), 0))", logger: self.logger)
                }
                return try await body(connection)
            }
        } catch {
            throw Self.ledgerError(error)
        }
    }

    static func ledgerError(_ error: any Error) -> LedgerError {
        if let ledger = error as? LedgerError { return ledger }
        if let transaction = error as? PostgresTransactionError {
            return ledgerError(transaction.closureError ?? transaction.commitError ?? transaction.beginError ?? transaction.rollbackError ?? error)
        }
        if let psql = error as? PSQLError {
            guard let state = psql.serverInfo?[.sqlState] else {
                return LedgerError(.storeUnavailable, "The ledger database is unreachable (\(psql.code)); retry later.")
            }
            let message = psql.serverInfo?[.message] ?? "\(psql.code)"
            // Connection, resources, shutdown, serialisation and deadlock: nothing was decided.
            if ["08", "53", "57", "58"].contains(String(state.prefix(2))) || state == "40001" || state == "40P01" {
                return LedgerError(.storeUnavailable, "The ledger database is unavailable: \(message) (SQLSTATE \(state)); retry later.")
            }
            return LedgerError(.storeFailed, "The ledger database refused a statement: \(message) (SQLSTATE \(state)).")
        }
        return LedgerError(.storeUnavailable, "The ledger database failed: \(error); retry later.")
    }
}
#endif
