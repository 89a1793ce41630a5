import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import ServerTrustPurchases
import ServerTrustTestSupport
import ServerTrustTUF
import ServerTrustUpdates
import Testing

/// The App Store signing trust delivered as a trust-update target (#52 item 5), published with
/// python-tuf and served by a local update host: the floor trusts lab A's root; a delivered set
/// adds lab B's, and a purchase verifier on the client's `appleSigningTrust` follows it without
/// a new binary — while a set that drops the floor's root is refused unless permitted.
@Suite struct TrustUpdateAppleSigningTrustTests {
    static let updateHost = TrustUpdateTests.updateHost
    static let target = "apple_signing_trust.json"
    static let bundleID = "com.example.app"

    final class Fixture: @unchecked Sendable {
        let root: LabCA
        let updateLeaf: LabLeaf
        let labA: AppStoreLab
        let labB: AppStoreLab
        let published: PublishedPolicyStates
        let policy = #"{"version": 1, "hosts": {"api.servertrust.test": {"pins": [{"pin": "sha256/CQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQk="}, {"pin": "sha256/CgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgo="}]}}}"#

        static func trust(_ roots: [AppStoreLab]) -> String {
            let list = roots.map { "\"" + Data($0.root.certificate.derEncoded).base64EncodedString() + "\"" }.joined(separator: ",")
            return #"{"version": 1, "roots": ["# + list + #"], "intermediates": [], "intermediateMarkers": ["1.2.840.113635.100.6.2.1"], "leafMarkers": ["1.2.840.113635.100.6.11.1"]}"#
        }

        /// The published states: 0 the floor's root and B's; 1 B's alone (the floor's dropped);
        /// 2 a set whose root is not base64; 3 the policy alone.
        init() throws {
            root = try LabPKI.makeRoot(commonName: "Apple Signing Trust Update Test Root")
            updateLeaf = try root.issueLeaf(dnsNames: [TrustUpdateAppleSigningTrustTests.updateHost])
            (labA, labB) = (try AppStoreLab(rootName: "Lab Root A"), try AppStoreLab(rootName: "Lab Root B"))
            let garbled = #"{"version": 1, "roots": ["not base64!"], "intermediateMarkers": [], "leafMarkers": []}"#
            let target = TrustUpdateAppleSigningTrustTests.target
            let states: [[String: Any]] = [
                ["targets": ["policy.json": policy, target: Self.trust([labA, labB])]],
                ["targets": ["policy.json": policy, target: Self.trust([labB])]],
                ["targets": ["policy.json": policy, target: garbled]],
                ["targets": ["policy.json": policy]],
            ]
            published = try PublishedPolicyStates("apple-trust-policies", states: states, identity: updateLeaf)
        }

        func stop() { published.stop() }

        /// Lab A's root and Apple's markers: the compiled-in floor of this application.
        func floorTrust() throws -> AppleSigningTrust {
            try AppleSigningTrust(
                roots: [labA.root.certificate], intermediateMarkerOIDs: [AppStoreLab.intermediateMarkerOID], leafMarkerOIDs: [AppStoreLab.leafMarkerOID])
        }

        func updateSession() throws -> Session {
            var configuration = Session.Configuration()
            configuration.anchors = .bundle(try root.trustAnchors())
            configuration.resolve = [published.server.resolveEntry(host: TrustUpdateAppleSigningTrustTests.updateHost)]
            configuration.redirectPolicy = .disallow
            configuration.requestTimeout = .seconds(300)
            let manager = try ServerTrustManager(
                evaluators: [try HostPattern(TrustUpdateAppleSigningTrustTests.updateHost): PinnedKeyHashesTrustEvaluator(pins: [updateLeaf.certificate.spkiPin])])
            return try Session(configuration: configuration, trustManager: manager)
        }

        func client(
            _ session: Session, directory: String, permissions: TrustUpdateRules.Permissions = [], clock: any TUFClock = SystemTUFClock()
        ) throws -> TrustUpdateClient {
            var configuration = TrustUpdateClient.Configuration(
                metadataDirectory: directory,
                initialRoot: try InitialRoot(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: published.directory + "/root.json")))),
                repositoryURL: published.server.url("", host: TrustUpdateAppleSigningTrustTests.updateHost))
            configuration.updater.downloadTimeBudget = .seconds(600)
            configuration.appleSigningTrustTarget = TrustUpdateAppleSigningTrustTests.target
            configuration.appleSigningTrustFloor = try floorTrust()
            configuration.rules.permissions = permissions
            let floor = try ServerTrustManager(policies: [try HostPattern("api.servertrust.test"): HostPolicy()])
            return try TrustUpdateClient(floor: floor, configuration: configuration, fetcher: SessionTUFFetcher(session: session), clock: clock)
        }

        /// The code a transaction from `lab` gets from a verifier on `client`'s set, nil when verified.
        func refusal(_ client: TrustUpdateClient, _ lab: AppStoreLab) throws -> PurchaseVerificationError.Code? {
            let live = try #require(client.appleSigningTrust)
            let verifier = try AppStoreSignedDataVerifier(
                trust: live, bundleID: TrustUpdateAppleSigningTrustTests.bundleID, appAppleID: nil, environment: .sandbox, revocation: .disabled)
            let jws = try lab.jws(payload: AppStoreLab.transactionJSON(bundleID: TrustUpdateAppleSigningTrustTests.bundleID))
            do {
                _ = try verifier.verifyTransaction(jws)
                return nil
            } catch {
                return error.code
            }
        }
    }

    @Test func aDeliveredSetIsPutInForceKeptAtARestartAndNeverWeakenedWithoutPermission() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let session = try fixture.updateSession()
        defer { session.shutdown() }
        let directory = TUFTooling.temporaryDirectory("apple-trust-updates")
        let client = try fixture.client(session, directory: directory)
        #expect(client.status.appleSigningTrust?.source == .floor)
        #expect(try fixture.refusal(client, fixture.labA) == nil)
        #expect(try fixture.refusal(client, fixture.labB) == .untrustedRoot)

        // The delivered set adds B's root: B's data verifies, without a new binary or a restart.
        fixture.published.servedState = 0
        let applied = await client.refresh()
        #expect(applied.lastOutcome == .applied, "\(String(describing: applied.refusal))")
        #expect(applied.appleSigningTrust?.source == .delivered)
        #expect(applied.appleSigningTrust?.rootPins == [fixture.labA.root.certificate.spkiPin.description, fixture.labB.root.certificate.spkiPin.description])
        #expect(try fixture.refusal(client, fixture.labB) == nil)

        // A restart puts the stored set back.
        let restarted = try fixture.client(session, directory: directory)
        let restored = await restarted.restore()
        #expect(restored.inForce == .delivered, "\(restored)")
        #expect(restored.appleSigningTrust?.source == .delivered)
        #expect(try fixture.refusal(restarted, fixture.labB) == nil)

        // Dropping the floor's root is a weakening: refused, naming the root; the set in force stays.
        fixture.published.servedState = 1
        let dropped = await restarted.refresh()
        #expect(dropped.lastOutcome == .refused, "\(dropped)")
        #expect(dropped.refusal?.code == .weakensFloor, "\(String(describing: dropped.refusal))")
        #expect(dropped.refusal?.reason.contains("drops the root CN=Lab Root A") == true, "\(String(describing: dropped.refusal))")
        #expect(dropped.appleSigningTrust == restored.appleSigningTrust)
        #expect(try fixture.refusal(restarted, fixture.labA) == nil)

        // A set that does not read is refused naming the member; the set in force stays.
        fixture.published.servedState = 2
        let garbled = await restarted.refresh()
        #expect(garbled.refusal?.code == .invalidAppleSigningTrust, "\(String(describing: garbled.refusal))")
        #expect(garbled.refusal?.reason.contains("apple_signing_trust.json: roots[0] is not a base64 DER certificate") == true, "\(String(describing: garbled.refusal))")
        #expect(try fixture.refusal(restarted, fixture.labB) == nil)

        // A state that delivers no set puts the floor's back with its policy.
        fixture.published.servedState = 3
        let none = await restarted.refresh()
        #expect(none.lastOutcome == .applied, "\(none)")
        #expect(none.appleSigningTrust?.source == .floor)
        #expect(try fixture.refusal(restarted, fixture.labB) == .untrustedRoot)
    }

    @Test func droppingTheFloorsRootIsAppliedWithItsPermission() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let session = try fixture.updateSession()
        defer { session.shutdown() }
        let client = try fixture.client(session, directory: TUFTooling.temporaryDirectory("apple-trust-permitted"), permissions: .weakerPurchaseVerification)
        fixture.published.servedState = 1
        let applied = await client.refresh()
        #expect(applied.lastOutcome == .applied, "\(String(describing: applied.refusal))")
        #expect(try fixture.refusal(client, fixture.labA) == .untrustedRoot)
        #expect(try fixture.refusal(client, fixture.labB) == nil)
    }

    /// The TUF metadata behind the delivered set expires (no refresh succeeds): with the
    /// default rules the floor goes back in force, and its roots alone verify.
    @Test func metadataExpiryPutsTheFloorsSetBack() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let session = try fixture.updateSession()
        defer { session.shutdown() }
        let clock = TrustUpdateTests.TestClock()
        let client = try fixture.client(session, directory: TUFTooling.temporaryDirectory("apple-trust-expiry"), clock: clock)
        fixture.published.servedState = 0
        #expect(await client.refresh().lastOutcome == .applied)
        #expect(try fixture.refusal(client, fixture.labB) == nil)
        clock.advance(days: 400)  // past the metadata's expiry
        fixture.published.server.stop()
        let status = await client.refresh()
        #expect(status.inForce == .floorMetadataExpired, "\(status)")
        #expect(status.appleSigningTrust?.source == .floor)
        #expect(try fixture.refusal(client, fixture.labB) == .untrustedRoot)
        #expect(try fixture.refusal(client, fixture.labA) == nil)
    }
}
