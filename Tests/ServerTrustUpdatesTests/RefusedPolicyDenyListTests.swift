import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import ServerTrustTestSupport
import ServerTrustTUF
import ServerTrustUpdates
import Testing

/// #42 finding 2, the policy beside the deny-list: a deny-list only ever refuses, so it is put in
/// force from a verified state whose policy is not — expired, or refused by the floor — at a
/// restart and at a refresh; nothing else of that state is. The server of key A, which the floor
/// pins, is refused with `.deniedKey` each time.
@Suite struct RefusedPolicyDenyListTests {
    typealias Fixture = TrustUpdateTests.Fixture

    /// A client restarted after its delivered policy's own `expires` passed (its metadata still
    /// valid) starts at the floor, says `floorPolicyExpired`, and keeps that state's deny-list
    /// and key withdrawals; a refresh that finds the same state refuses it again and changes
    /// nothing in force.
    @Test func aRestartWithAnExpiredPolicyKeepsItsDenyListAndKeyWithdrawals() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let clock = TrustUpdateTests.TestClock()
        let directory = TUFTooling.temporaryDirectory("updates")
        let compiled = SigningKeySet(keys: ["k1": fixture.signingKey1.publicKey, "k2": fixture.signingKey2.publicKey])
        fixture.servedState = 14
        let applied = await (try fixture.client(updateSession, directory: directory, clock: clock)).refresh()
        #expect(applied.lastOutcome == .applied, "\(applied)")
        #expect(applied.denyListEntries == 1)

        clock.advance(days: 2)  // the policy expired a day ago; its metadata has 28 days to go
        let restarted = try await fixture.restartExpectingDeniedKey(updateSession, directory: directory, clock: clock)
        defer { restarted.session.shutdown() }
        let restored = restarted.restored
        #expect(restored.inForce == .floorPolicyExpired, "\(restored)")
        #expect(restored.refusal?.description.contains("expired") == true, "\(restored.refusal?.description ?? "")")
        #expect(restarted.client.signingKeys.isEmpty)
        #expect(restarted.client.signingKeys(orFloor: compiled).keyIDs == ["k1"])

        let refreshed = await fixture.refreshExpectingDeniedKey(restarted)
        #expect(refreshed.lastOutcome == .refused, "\(refreshed)")
        #expect(refreshed.inForce == .floorPolicyExpired)
    }

    /// A new release whose floor requires revocation checking starts on a store whose policy
    /// (pins only) it counts as a weakening: the policy is refused, the floor is in force
    /// (`floorNoUpdateYet`, outcome `refused`), and the deny-list delivered beside it is too.
    @Test func aRestartUnderAStricterFloorKeepsTheDenyListOfTheRefusedPolicy() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let directory = TUFTooling.temporaryDirectory("updates")
        fixture.servedState = 4
        let applied = await (try fixture.client(updateSession, directory: directory)).refresh()
        #expect(applied.lastOutcome == .applied, "\(applied)")
        #expect(applied.denyListEntries == 1)

        let floorRevocation = RevocationOptions(methods: .ocsp, requirePositiveResponse: true, networkAccessDisabled: true, scope: .wholeChain)
        let release = try await fixture.restartExpectingDeniedKey(updateSession, directory: directory, floorRevocation: floorRevocation)
        defer { release.session.shutdown() }
        let restored = release.restored
        #expect(restored.inForce == .floorNoUpdateYet, "\(restored)")
        #expect(restored.lastOutcome == .refused)
        #expect(restored.refusal?.description.contains("has no revocation checking") == true, "\(restored.refusal?.description ?? "")")

        let refreshed = await fixture.refreshExpectingDeniedKey(release)
        #expect(refreshed.lastOutcome == .refused, "\(refreshed)")
    }

    /// A running client with pins A and B and key 1 delivered; the repository publishes a state
    /// that unpins the host (refused: no `.unpinHosts`), deny-lists key A and publishes key 2
    /// only. The delivered policy and key set in force stay (a server of another key is still
    /// refused); the deny-list is put in force under them (key A refused on the kept-alive
    /// connection), and key 2's set becomes the bound of the compiled-in keys.
    @Test func aRefreshedPolicyRefusedAsAWeakeningStillPutsItsDenyListInForce() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let client = try fixture.client(updateSession, directory: TUFTooling.temporaryDirectory("updates"))
        let session = try fixture.apiSession(client)
        defer { session.shutdown() }
        fixture.servedState = 10
        let applied = await client.refresh()
        #expect(applied.lastOutcome == .applied, "\(applied)")
        #expect(try await TrustUpdateTests.result(session, fixture.apiURL()).get().trust.isTrusted)

        fixture.servedState = 15
        let status = await client.refresh()
        #expect(status.lastOutcome == .refused, "\(status)")
        #expect(status.refusal?.description.contains("default validation only") == true, "\(status.refusal?.description ?? "")")
        #expect(status.inForce == .delivered)
        #expect(status.policySHA256 == applied.policySHA256)
        #expect(status.denyListEntries == 1)
        #expect(status.signingKeyIDs == ["k1"])
        #expect(status.lastVerifiedSigningKeyIDs == ["k2"])
        #expect(client.signingKeys.keyIDs == ["k1"])
        let refused = await TrustUpdateTests.result(session, fixture.apiURL())
        #expect(TrustUpdateTests.trustCode(refused) == .deniedKey, "\(refused)")
        #expect(fixture.api.acceptedConnections == 1, "refused on the kept-alive connection")
        // The host is still pinned (to A and B): a server with another key is refused, which the
        // refused policy would have accepted.
        let leafC = try fixture.root.issueLeaf(dnsNames: [TrustUpdateTests.apiHost])
        try fixture.api.replaceIdentity(.init(chain: leafC.chain, privateKeyPEM: leafC.key.pemPrivateKey))
        let freshSession = try fixture.apiSession(client)
        defer { freshSession.shutdown() }
        let unpinned = await TrustUpdateTests.result(freshSession, fixture.apiURL())
        #expect(TrustUpdateTests.trustCode(unpinned) == .pinMismatch, "\(unpinned)")

        let generation = client.liveTrustManager.generation
        #expect(await client.refresh().lastOutcome == .refused)
        #expect(client.liveTrustManager.generation == generation)
    }
}
