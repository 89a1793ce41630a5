import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import ServerTrustTUF
import ServerTrustUpdates
import ServerTrustTestSupport
import Testing

/// A target delivered by a delegated role is trusted only while that role is: the specification
/// trusts no expired delegated role, so a running client must stop trusting what it delivered
/// when it expires, not only when the top-level metadata does.
@Suite struct DelegatedExpiryTests {
    /// The `expires` of the delegated role "policies", which lists policy.json (2 days; the
    /// top-level metadata 30).
    static func policiesExpires() throws -> Int64 {
        try Metadata<Targets>(bytes: try TUFTooling.file("delegatedexpiry/0/metadata/1.policies.json")).signed.common.expires
    }

    @Test func aTargetFromADelegatedRoleIsTrustedOnlyUntilThatRoleExpires() async throws {
        let expires = try Self.policiesExpires()
        let updater = try TUFTooling.updater("delegatedexpiry")
        _ = try #require(try await updater.targetInfo("policy.json"))
        _ = try #require(try await updater.targetInfo("file.txt"))
        let topLevel = try #require(await updater.trustedUntil)
        #expect(expires < topLevel)
        #expect(await updater.trustedUntil(forTargets: ["policy.json"]) == expires)
        #expect(await updater.trustedUntil(forTargets: ["file.txt"]) == topLevel)
        #expect(await updater.trustedUntil(forTargets: ["file.txt", "policy.json", "absent.txt"]) == expires)

        // Past it, with the top-level metadata still valid, the role is refused when loaded.
        let late = try TUFTooling.updater("delegatedexpiry", clock: expires)
        let error = await #expect(throws: TUFError.self) { try await late.targetInfo("policy.json") }
        #expect(error?.code == .expired)
        #expect(error?.reason.hasPrefix("policies expired at") == true, "\(String(describing: error))")
    }

    /// `TrustUpdateClient` applies policy.json from the delegated role, reports that role's
    /// expiry as the metadata's, and reverts to the floor when it passes — while the top-level
    /// metadata is still valid for 27 more days.
    @Test func aPolicyFromADelegatedRoleRevertsToTheFloorWhenThatRoleExpires() async throws {
        let expires = try Self.policiesExpires()
        let pins = try [1, 2].map { try Pin("sha256/" + Data(repeating: UInt8($0), count: 32).base64EncodedString()) }
        let floor = try ServerTrustManager(policies: [
            try HostPattern("api.servertrust.test"): HostPolicy(pins: try PinSet([.init(pins[0], label: "1"), .init(pins[1], label: "2")]))
        ])
        let configuration = TrustUpdateClient.Configuration(
            metadataDirectory: TUFTooling.temporaryDirectory("delegated-updates"),
            initialRoot: try InitialRoot(bytes: try TUFTooling.file("delegatedexpiry/root.json")), repositoryURL: "repo://0")
        let clock = TrustUpdateTests.TestClock()
        let client = try TrustUpdateClient(
            floor: floor, configuration: configuration, fetcher: FileFetcher(base: "\(TUFTooling.repositories)/delegatedexpiry"), clock: clock)

        let applied = await client.refresh()
        #expect(applied.lastOutcome == .applied, "\(applied)")
        #expect(applied.inForce == .delivered)
        #expect(applied.metadataExpires == Date(timeIntervalSince1970: TimeInterval(expires)))

        clock.advance(days: 3)
        client.checkExpiry()
        #expect(client.status.inForce == .floorMetadataExpired)
        #expect(client.liveTrustManager.generation == 3)
    }

    /// A client restarted after the delegated role that delivered policy.json expired (the
    /// top-level metadata valid for 27 more days) restores as after expired top-level metadata:
    /// the floor, `floorMetadataExpired` (the role's expiry reported), and the deny-list of the
    /// stored state — the server of key A, which the floor pins, refused with `.deniedKey`.
    @Test func aRestartAfterTheDelegatedRoleExpiredKeepsTheLastVerifiedDenyList() async throws {
        let fixture = try TrustUpdateTests.Fixture()
        defer { fixture.stop() }
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let clock = TrustUpdateTests.TestClock()
        let directory = TUFTooling.temporaryDirectory("updates")
        fixture.servedState = 16
        let applied = await (try fixture.client(updateSession, directory: directory, clock: clock)).refresh()
        #expect(applied.lastOutcome == .applied, "\(applied)")
        #expect(applied.denyListEntries == 1)
        let roleExpires = try #require(applied.metadataExpires)
        #expect(roleExpires < Date().addingTimeInterval(3 * 86_400), "the role's 2 days, not the top-level 30")

        clock.advance(days: 3)
        fixture.updates.stop()
        let restarted = try await fixture.restartExpectingDeniedKey(updateSession, directory: directory, clock: clock)
        defer { restarted.session.shutdown() }
        let restored = restarted.restored
        #expect(restored.inForce == .floorMetadataExpired, "\(restored)")
        #expect(restored.metadataExpires == roleExpires)
        #expect(restored.lastError?.description.contains("expired") == true, "\(restored.lastError?.description ?? "")")
    }
}
