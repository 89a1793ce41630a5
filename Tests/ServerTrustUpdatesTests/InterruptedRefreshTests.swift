import Foundation
import MetricsTestKit
import ServerTrust
import ServerTrustHTTP
import ServerTrustTestSupport
import ServerTrustTUF
import ServerTrustUpdates
import Testing

/// #46, a refresh interrupted between the files of the store: the TUF client stores each file as
/// soon as it is verified, so a cut after the new `timestamp.json` (or the new targets metadata)
/// leaves a store it rightly refuses to load. A restart on it keeps the deny-list and key
/// withdrawals of the last verified state, from the record the client keeps beside the store
/// (`floorStoreInterrupted`), instead of the floor's deny-list alone — an attacker who cuts the
/// update host's connection at will cannot get the denied key A (which the floor pins) accepted.
@Suite struct InterruptedRefreshTests {
    typealias Fixture = TrustUpdateTests.Fixture

    /// The update host's files through `inner`, except one: its download fails, as a network
    /// cut does (matched as `HoldingFetcher` does: the name, or a consistent snapshot's
    /// `VERSION.name` / `HASH.name`).
    struct CuttingFetcher: TUFFetching {
        let inner: any TUFFetching
        let cut: String
        func fetch(_ url: String, maximumLength: Int, deadline: ContinuousClock.Instant) async throws(TUFError) -> [UInt8] {
            let name = String(url.split(separator: "/").last ?? "")
            if name == cut || name.hasSuffix("." + cut) { throw TUFError(.downloadFailed, "\(url): the connection was cut") }
            return try await inner.fetch(url, maximumLength: maximumLength, deadline: deadline)
        }
    }

    /// A store whose newest verified state is state 4 (key A deny-listed), then a refresh to
    /// state 15 (key A still deny-listed, key 2's set, the host unpinned) cut at `cut`: the
    /// store's directory, and what the complete refresh reported.
    static func storeInterrupted(at cut: String, _ fixture: Fixture, _ updateSession: Session) async throws -> (String, TrustUpdateStatus) {
        let directory = TUFTooling.temporaryDirectory("interrupted")
        fixture.servedState = 4
        let applied = await (try fixture.client(updateSession, directory: directory)).refresh()
        #expect(applied.lastOutcome == .applied, "\(applied)")
        #expect(applied.denyListEntries == 1)
        fixture.servedState = 15
        let cutting = CuttingFetcher(inner: SessionTUFFetcher(session: updateSession), cut: cut)
        let interrupted = await (try fixture.client(updateSession, directory: directory, fetcher: cutting)).refresh()
        #expect(interrupted.lastOutcome == .failed, "\(interrupted)")
        #expect(interrupted.lastError?.description.contains("the connection was cut") == true, "\(interrupted)")
        return (directory, applied)
    }

    /// Cut after the new `timestamp.json` is stored (its snapshot's download fails): the store
    /// holds a timestamp that names a snapshot it does not have. The restarted client refuses
    /// key A (`floorStoreInterrupted`, the reason in `lastError`, the log and the metric say
    /// so); `servertrust updates show` says the same. The next refresh that completes replaces
    /// the record: state 15's policy is refused (it unpins the host), its deny-list stays in
    /// force, and the status says `floorNoUpdateYet`.
    @Test func aRestartAfterARefreshCutAfterTheNewTimestampKeepsTheDeliveredDenyList() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let (directory, applied) = try await Self.storeInterrupted(at: "snapshot.json", fixture, updateSession)

        let metrics = TestMetrics()
        let client = try fixture.client(updateSession, directory: directory, metrics: metrics)
        let restored = await client.restore()
        #expect(restored.inForce == .floorStoreInterrupted, "\(restored)")
        #expect(restored.lastError?.stage == .restoreInterrupted, "\(restored)")
        #expect(restored.lastError?.description.contains("snapshot") == true, "\(restored.lastError?.description ?? "")")
        #expect(restored.targetsVersion == applied.targetsVersion)
        #expect(try metrics.expectGauge("servertrust_trust_update_in_force", [("state", "floorStoreInterrupted")]).lastValue == 1)
        #expect(try metrics.expectGauge("servertrust_trust_update_generation").lastValue == 2)

        // The CLI reads the same store the same way.
        let show = Child.run(PackageFiles.servertrustBinary, ["updates", "--metadata-dir", directory, "show"])
        #expect(show.status == 0, "\(show.output)")
        #expect(show.output.contains("the store could not be restored"), "\(show.output)")
        #expect(show.output.contains("the floor is (floorStoreInterrupted)"), "\(show.output)")
        #expect(show.output.contains("deny-list entries: 1"), "\(show.output)")

        let restarted = try await fixture.restartExpectingDeniedKey(updateSession, directory: directory)
        defer { restarted.session.shutdown() }
        #expect(restarted.restored.inForce == .floorStoreInterrupted)
        let refreshed = await fixture.refreshExpectingDeniedKey(restarted)
        #expect(refreshed.lastOutcome == .refused, "\(refreshed)")
        #expect(refreshed.refusal?.code == .weakensFloor, "\(refreshed)")
        #expect(refreshed.inForce == .floorNoUpdateYet, "\(refreshed)")
        #expect(refreshed.lastVerifiedSigningKeyIDs == ["k2"], "\(refreshed)")
        // The store is whole again: a restart restores it as it is, nothing from the record.
        let again = await (try fixture.client(updateSession, directory: directory)).restore()
        #expect(again.inForce == .floorNoUpdateYet && again.lastOutcome == .refused && again.lastError == nil, "\(again)")
        #expect(again.denyListEntries == 1 && again.lastVerifiedSigningKeyIDs == ["k2"], "\(again)")
    }

    /// Cut after the new targets metadata is stored, before a target it lists is downloaded:
    /// the policy (the first target read), or the key set (after the policy and the
    /// deny-list, whose bytes are those already cached). The cached targets no longer match the
    /// stored metadata; the restarted client refuses key A.
    @Test(arguments: ["policy.json", "jwks.json"])
    func aRestartAfterARefreshCutBeforeATargetKeepsTheDeliveredDenyList(cut: String) async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let (directory, applied) = try await Self.storeInterrupted(at: cut, fixture, updateSession)

        let restarted = try await fixture.restartExpectingDeniedKey(updateSession, directory: directory)
        defer { restarted.session.shutdown() }
        let restored = restarted.restored
        #expect(restored.inForce == .floorStoreInterrupted, "\(restored)")
        #expect(restored.lastError?.stage == .restoreInterrupted, "\(restored)")
        #expect(restored.lastError?.description.contains("\(cut) is not in the local cache") == true, "\(restored.lastError?.description ?? "")")
        #expect(restored.targetsVersion == applied.targetsVersion)
        // State 4 delivered no key set: nothing bounds the compiled-in keys.
        #expect(restored.lastVerifiedSigningKeyIDs == nil)
    }

    /// A record that does not read — not JSON, another format, a deny-list that does not parse
    /// — is not used: the restore falls back to the floor alone (its own deny-list, here none),
    /// as before the record existed, and `lastError` names the record and why.
    @Test func aRecordThatDoesNotReadIsNotUsedAndTheStatusSaysSo() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let (directory, _) = try await Self.storeInterrupted(at: "snapshot.json", fixture, updateSession)
        let record = directory + "/servertrust+in-force-refusals.json"
        #expect(FileManager.default.fileExists(atPath: record))
        let garbled: [(String, String)] = [
            ("{\"format\": 1, \"denyList\": tr", "not JSON"),
            ("{\"format\": 2, \"denyList\": null, \"signingKeys\": null}", "format 2 is not 1"),
            ("{\"format\": 1, \"denyList\": \"\(Data("{\"version\": 1, \"spki\": [\"sha256/x\"]}".utf8).base64EncodedString())\"}", "denylist.json"),
        ]
        for (bytes, reason) in garbled {
            try Data(bytes.utf8).write(to: URL(fileURLWithPath: record))
            let client = try fixture.client(updateSession, directory: directory)
            let restored = await client.restore()
            #expect(restored.inForce == .floorNoUpdateYet, "\(reason): \(restored)")
            #expect(restored.lastError?.stage == .restore, "\(reason): \(restored)")
            let description = restored.lastError?.description ?? ""
            #expect(description.contains("servertrust+in-force-refusals.json, does not read"), "\(reason): \(description)")
            #expect(reason == "not JSON" || description.contains(reason), "\(reason): \(description)")
            #expect(restored.denyListEntries == 0 && restored.generation == 1, "\(reason): \(restored)")
            #expect(client.liveTrustManager.current.denyList.keys.isEmpty && client.deliveredPolicy == nil, "\(reason)")
        }
    }
}
