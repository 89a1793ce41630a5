import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import ServerTrustTestSupport
import ServerTrustTUF
import ServerTrustUpdates
import Testing

/// The CT log list delivered as the trust-update target `ct_log_list.json` (#45 item 2),
/// published with python-tuf and served by a local update host: the API host requires CT
/// (enforced) beside its pins, and its leaf carries SCTs from logs A and B (two operators).
/// The floor's list knows only log A, so the host is refused until a delivered list adds B.
@Suite struct TrustUpdateCTLogListTests {
    static let apiHost = TrustUpdateTests.apiHost
    static let updateHost = TrustUpdateTests.updateHost

    final class Fixture: @unchecked Sendable {
        let root: LabCA
        let logA = try! TestCTLog(description: "Log A", operatorName: "Operator A")
        let logB = try! TestCTLog(description: "Log B", operatorName: "Operator B")
        let leaf: EmbeddedSCTLeaf
        let updateLeaf: LabLeaf
        let api: LocalTLSServer
        let published: PublishedPolicyStates
        let backup = try! Pin("sha256/" + Data(repeating: 9, count: 32).base64EncodedString())
        /// The floor's list: log A only, three days old.
        let floorListDate = Date(timeIntervalSinceNow: -3 * 86_400)

        static func logList(_ logs: [TestCTLog], at date: Date) -> String {
            var list = TestCTLogList()
            for log in logs { list.add(log, state: .usable, since: Date(timeIntervalSinceNow: -100 * 86_400)) }
            return String(decoding: list.json(timestamp: date), as: UTF8.self)
        }

        /// The published states: 0 the policy with a list of A and B a day old; 1 the same with
        /// a list of A and B five days old (older than 0's: a rollback); 2 the same with a list
        /// whose log key is not base64.
        init() throws {
            root = try LabPKI.makeRoot(commonName: "CT Trust Update Test Root")
            leaf = try root.issueLeafWithEmbeddedSCTs(from: [logA, logB], dnsNames: [TrustUpdateCTLogListTests.apiHost])
            updateLeaf = try root.issueLeaf(dnsNames: [TrustUpdateCTLogListTests.updateHost])
            api = try LocalTLSServer(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey)
            let policy = "{\"version\": 1, \"hosts\": {\"\(TrustUpdateCTLogListTests.apiHost)\": {\"pins\": [{\"pin\": \"\(leaf.certificate.spkiPin)\"}, "
                + "{\"pin\": \"\(backup)\"}], \"certificateTransparency\": {\"mode\": \"enforced\"}}}}"
            let garbled = #"{"log_list_timestamp": "2026-01-01T00:00:00Z", "operators": [{"name": "X", "logs": [{"key": "not base64!", "log_id": "AAAA"}]}]}"#
            let states: [[String: Any]] = [
                ["targets": ["policy.json": policy, "ct_log_list.json": Self.logList([logA, logB], at: Date(timeIntervalSinceNow: -86_400))]],
                ["targets": ["policy.json": policy, "ct_log_list.json": Self.logList([logA, logB], at: Date(timeIntervalSinceNow: -5 * 86_400))]],
                ["targets": ["policy.json": policy, "ct_log_list.json": garbled]],
            ]
            published = try PublishedPolicyStates("ct-policies", states: states, identity: updateLeaf)
        }

        /// The update host.
        var updates: LocalTLSServer { published.server }
        /// Where the states were generated.
        var repository: String { published.directory }

        func stop() {
            api.stop()
            published.stop()
        }

        /// The compiled-in floor: the API host pinned, CT enforced, with a list of log A only.
        func floor() throws -> ServerTrustManager {
            let logs = try CertificateTransparencyLogs(try CTLogList(json: Array(Self.logList([logA], at: floorListDate).utf8)))
            let policy = HostPolicy(
                pins: try PinSet([.init(leaf.certificate.spkiPin, label: "leaf"), .init(backup, label: "backup")]),
                certificateTransparency: .enforced())
            return try ServerTrustManager(policies: [try HostPattern(TrustUpdateCTLogListTests.apiHost): policy], certificateTransparencyLogs: logs)
        }

        func updateSession() throws -> Session {
            var configuration = Session.Configuration()
            configuration.anchors = .bundle(try root.trustAnchors())
            configuration.resolve = [updates.resolveEntry(host: TrustUpdateCTLogListTests.updateHost)]
            configuration.redirectPolicy = .disallow
            configuration.requestTimeout = .seconds(300)
            let manager = try ServerTrustManager(
                evaluators: [try HostPattern(TrustUpdateCTLogListTests.updateHost): PinnedKeyHashesTrustEvaluator(pins: [updateLeaf.certificate.spkiPin])])
            return try Session(configuration: configuration, trustManager: manager)
        }

        func client(_ session: Session, directory: String) throws -> TrustUpdateClient {
            var configuration = TrustUpdateClient.Configuration(
                metadataDirectory: directory, initialRoot: try InitialRoot(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: repository + "/root.json")))),
                repositoryURL: updates.url("", host: TrustUpdateCTLogListTests.updateHost))
            configuration.updater.downloadTimeBudget = .seconds(600)
            return try TrustUpdateClient(floor: try floor(), configuration: configuration, fetcher: SessionTUFFetcher(session: session))
        }

        func apiSession(_ client: TrustUpdateClient) throws -> Session {
            var configuration = Session.Configuration()
            configuration.anchors = .bundle(try root.trustAnchors())
            configuration.resolve = [api.resolveEntry(host: TrustUpdateCTLogListTests.apiHost)]
            configuration.requestTimeout = .seconds(300)
            return try Session(configuration: configuration, liveTrustManager: client.liveTrustManager)
        }

        /// nil when accepted, else the refusal.
        func refusal(_ session: Session) async -> TrustError? {
            switch await TrustUpdateTests.result(session, URL(string: api.url("/", host: TrustUpdateCTLogListTests.apiHost))!, closing: true) {
            case .success: nil
            case .failure(let error): (error as? SessionError)?.trustError ?? TrustError(.openSSLFailure, "\(error)")
            }
        }
    }

    @Test func aDeliveredLogListIsPutInForceKeptAtARestartAndNeverRolledBack() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let directory = TUFTooling.temporaryDirectory("ct-updates")
        let client = try fixture.client(updateSession, directory: directory)
        #expect(client.status.certificateTransparencyLogList?.source == .floor)
        #expect(client.status.certificateTransparencyLogList?.logCount == 1)
        let session = try fixture.apiSession(client)
        defer { session.shutdown() }
        // The floor's list knows log A only: B's SCT is not counted, the host is refused.
        let before = await fixture.refusal(session)
        #expect(before?.code == .certificateTransparency, "\(String(describing: before))")

        // The delivered list adds log B: accepted, without a new binary or a restart.
        fixture.published.servedState = 0
        let applied = await client.refresh()
        #expect(applied.lastOutcome == .applied, "\(applied)")
        #expect(applied.certificateTransparencyLogList?.source == .delivered)
        #expect(applied.certificateTransparencyLogList?.logCount == 2)
        #expect(client.certificateTransparencyLogs?.current.list.log(id: fixture.logB.logID) != nil)
        let after = await fixture.refusal(session)
        #expect(after == nil, "\(String(describing: after))")

        // A restart (a new floor, whose list is log A only again) puts the stored list back.
        let restarted = try fixture.client(updateSession, directory: directory)
        let restored = await restarted.restore()
        #expect(restored.inForce == .delivered, "\(restored)")
        #expect(restored.certificateTransparencyLogList?.source == .delivered)
        let restartedSession = try fixture.apiSession(restarted)
        defer { restartedSession.shutdown() }
        let afterRestart = await fixture.refusal(restartedSession)
        #expect(afterRestart == nil, "\(String(describing: afterRestart))")

        // An older list is refused as a rollback; the list in force stays, and so does the host.
        fixture.published.servedState = 1
        let rolledBack = await restarted.refresh()
        #expect(rolledBack.lastOutcome == .refused, "\(rolledBack)")
        #expect(rolledBack.refusal?.code == .logListRollback, "\(String(describing: rolledBack.refusal))")
        #expect(rolledBack.certificateTransparencyLogList == restored.certificateTransparencyLogList)
        #expect(await fixture.refusal(restartedSession) == nil)

        // A garbled list is refused naming the file and the member.
        fixture.published.servedState = 2
        let garbled = await restarted.refresh()
        #expect(garbled.refusal?.code == .invalidLogList, "\(String(describing: garbled.refusal))")
        #expect(garbled.refusal?.reason.contains("ct_log_list.json:1: operators[0].logs[0].key") == true, "\(String(describing: garbled.refusal))")
        #expect(garbled.certificateTransparencyLogList == restored.certificateTransparencyLogList)
        #expect(await fixture.refusal(restartedSession) == nil)
    }
}
