#if PostgreSQLLedger
import Foundation
import Logging
import PostgresNIO
import Testing

@testable import ServerTrustLedger

/// The PostgreSQL server the tests use: SERVERTRUST_TEST_POSTGRES_URL
/// (postgres://USER@HOST:PORT/DATABASE, trust authentication), which .ci/run sets for the
/// throwaway cluster scripts/interop/postgres.sh starts. One client for the process, run in a
/// task of its own.
enum TestPostgres {
    static let variable = "SERVERTRUST_TEST_POSTGRES_URL"

    private static let shared: Result<PostgresClient, TestPostgresMissing> = {
        guard let text = ProcessInfo.processInfo.environment[variable], let url = URLComponents(string: text), url.scheme == "postgres",
            let host = url.host, let port = url.port, let user = url.user
        else { return .failure(TestPostgresMissing()) }
        let database = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
        var configuration = PostgresClient.Configuration(host: host, port: port, username: user, password: url.password, database: database, tls: .disable)
        configuration.options.maximumConnections = 40
        let client = PostgresClient(configuration: configuration, backgroundLogger: Logger(label: "servertrust.ledger.tests"))
        Task.detached { await client.run() }
        return .success(client)
    }()

    static func client() throws -> PostgresClient { try shared.get() }
}

struct TestPostgresMissing: Error, CustomStringConvertible {
    var description: String {
        "Set \(TestPostgres.variable) to a PostgreSQL server (scripts/interop/postgres.sh start DIR prints one); .ci/run starts a throwaway cluster."
    }
}

/// The ledger's contract (LedgerContractTests) against a real PostgreSQL server, test for test.
@Suite struct PostgresLedgerContractTests {
    let contract = LedgerContractTests()

    @Test func theFirstClaimGrantsTheSameAccountGetsItBackAnotherIsAReplay() async throws { try await contract.theFirstClaimGrantsTheSameAccountGetsItBackAnotherIsAReplay(store: .postgres) }
    @Test func aPurchaseForAnotherAccountsTokenIsRefusedAndWritesNothing() async throws { try await contract.aPurchaseForAnotherAccountsTokenIsRefusedAndWritesNothing(store: .postgres) }
    @Test func badInputIsATypedErrorAndWritesNothing() async throws { try await contract.badInputIsATypedErrorAndWritesNothing(store: .postgres) }
    @Test func aRevokedPurchaseIsNeverGrantedAndARefundEndsTheGrant() async throws { try await contract.aRevokedPurchaseIsNeverGrantedAndARefundEndsTheGrant(store: .postgres) }
    @Test func aRefundBeforeAnyClaimIsRememberedAndTheLaterClaimRefused() async throws { try await contract.aRefundBeforeAnyClaimIsRememberedAndTheLaterClaimRefused(store: .postgres) }
    @Test func aSubscriptionIsOneEntitlementMovedForwardByRenewalsAndEndedByExpiry() async throws { try await contract.aSubscriptionIsOneEntitlementMovedForwardByRenewalsAndEndedByExpiry(store: .postgres) }
    @Test func notificationsAppliedInAnyOrderLeaveWhatSignedDateOrderDoes() async throws { try await contract.notificationsAppliedInAnyOrderLeaveWhatSignedDateOrderDoes(store: .postgres) }
    @Test func concurrentClaimsOfOneTransactionGrantItOnce() async throws { try await contract.concurrentClaimsOfOneTransactionGrantItOnce(store: .postgres) }
    @Test func aGrantIsOnDiskWhenTheClaimReturns() async throws { try await contract.aGrantIsOnDiskWhenTheClaimReturns(store: .postgres) }

    @Test func aSchemaFromANewerVersionIsRefused() async throws {
        let (_, schema) = try await StoreKind.postgres.make()
        try await TestPostgres.client().query("INSERT INTO \(unescaped: "\"" + schema + "\"").ledger_migrations (version, applied_at) VALUES (99, 0)")
        let refused = await refusal { try await StoreKind.postgres.open(schema) }
        #expect(refused?.code == .corruptRecord && refused?.reason.contains("version 99") == true, "\(String(describing: refused))")
    }

    @Test func aDamagedRowIsACorruptRecordNeverADefault() async throws {
        for damage in ["kind = 'bogus'", "quantity = 3000000000", "app_account_token = 'not-a-uuid'", "account = ''", "transaction_id = 'a b'"] {
            let (ledger, schema) = try await StoreKind.postgres.make()
            _ = try await ledger.claim(try LedgerContractTests.purchase(), for: "alice")
            try await TestPostgres.client().query(PostgresQuery(unsafeSQL: "UPDATE \"\(schema)\".grants SET \(damage)"))
            var found = await refusal { try await ledger.grants(account: "alice") }
            if found == nil { found = await refusal { try await ledger.grant(store: .appStore, transactionID: "2000000000000001") } }
            #expect(found?.code == .corruptRecord, "\(damage): \(String(describing: found))")
        }
    }

    @Test func aSchemaNameThatIsNotAnIdentifierIsRefused() async throws {
        for name in ["", "Ledger", "a-b", "x; DROP TABLE grants", String(repeating: "a", count: 64)] {
            let refused = await refusal { try await PostgresLedgerStore(client: try TestPostgres.client(), schema: name) }
            #expect(refused?.code == .invalidPurchase, "\(name)")
        }
    }
}
#endif
