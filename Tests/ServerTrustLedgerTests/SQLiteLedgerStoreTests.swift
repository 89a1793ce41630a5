import Foundation
import Testing

@testable import ServerTrustLedger

/// What is SQLite's own: migrations, a schema from the future, damaged rows, an unusable file.
@Suite struct SQLiteLedgerStoreTests {
    func path() -> String { FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).sqlite").path }

    @Test func aNewFileIsMigratedOnceAndReopenedAsIs() async throws {
        let file = path()
        #expect(try SQLiteLedgerStore(path: file).schemaVersion == SQLiteLedgerStore.migrations.last?.version)
        #expect(try SQLiteLedgerStore(path: file).schemaVersion == 1)
        let database = try SQLiteDatabase(path: file, busyTimeout: .seconds(1))
        #expect(try database.query("SELECT count(*) FROM ledger_migrations") { row throws(LedgerError) in try row.integer(0, "count") } == [1])
    }

    @Test func aSchemaFromANewerVersionIsRefused() async throws {
        let file = path()
        _ = try SQLiteLedgerStore(path: file)
        try SQLiteDatabase(path: file, busyTimeout: .seconds(1)).run("INSERT INTO ledger_migrations (version, applied_at) VALUES (99, 0)")
        let refused = refusal { try SQLiteLedgerStore(path: file) }
        #expect(refused?.code == .corruptRecord && refused?.reason.contains("schema version 99") == true)
    }

    @Test func aDamagedRowIsACorruptRecordNeverADefault() async throws {
        for damage in [
            "UPDATE grants SET kind = 'bogus'", "UPDATE grants SET quantity = 3000000000", "UPDATE grants SET expires_at = 'soon'",
            "UPDATE grants SET app_account_token = 'not-a-uuid'", "UPDATE grants SET account = ''", "UPDATE grants SET transaction_id = 'a b'",
            "UPDATE grants SET granted_at = NULL",
        ] {
            let file = path()
            let ledger = PurchaseLedger(store: try SQLiteLedgerStore(path: file))
            _ = try await ledger.claim(try LedgerContractTests.purchase(), for: "alice")
            let database = try SQLiteDatabase(path: file, busyTimeout: .seconds(1))
            do {
                try database.execute(damage)
            } catch {
                // The schema itself refuses it (NOT NULL): no claim can have written it either.
                #expect(error.code == .storeFailed, "\(damage): \(error)")
                continue
            }
            var found = await refusal { try await ledger.grants(account: "alice") }
            if found == nil { found = await refusal { try await ledger.grant(store: .appStore, transactionID: "2000000000000001") } }
            #expect(found?.code == .corruptRecord, "\(damage): \(String(describing: found))")
        }
        // The schema refuses what no claim writes.
        let file = path()
        _ = try SQLiteLedgerStore(path: file)
        let database = try SQLiteDatabase(path: file, busyTimeout: .seconds(1))
        try LedgerContractTests.insertRaw(into: database, quantity: 1)
        #expect(refusal { try database.run("UPDATE grants SET quantity = 0") }?.code == .storeFailed)
    }

    @Test func aFileThatCannotBeOpenedIsUnavailable() async throws {
        let refused = refusal { try SQLiteLedgerStore(path: "/nonexistent-directory/ledger.sqlite") }
        #expect(refused?.code == .storeUnavailable && refused?.isRetryable == true)
        let notADatabase = path()
        try Data("this is not an SQLite file, it is long enough to have a header".utf8).write(to: URL(fileURLWithPath: notADatabase))
        #expect(refusal { try SQLiteLedgerStore(path: notADatabase) }?.code == .corruptRecord)
    }
}

extension LedgerContractTests {
    static func insertRaw(into database: SQLiteDatabase, quantity: Int64) throws {
        try database.run(
            "INSERT INTO grants (\(SQLiteLedgerStore.grantColumns)) VALUES ('app_store', '1', '1', NULL, 'p', 'consumable', 'Production', ?, 0, NULL, NULL, 'alice', 0, NULL, NULL)",
            [.integer(quantity)])
    }
}

extension PurchaseLedger {
    func grants(account: String) async throws(LedgerError) -> [Grant] { try await store.grants(account: account) }
}
