import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustTestSupport
import ServerTrustTUF
import ServerTrustUpdates
import Testing

/// Fifth review, finding 2: a verified state whose deny-list or `jwks.json` this release cannot
/// read (newer repository tooling, one entry it cannot parse) is refused by the running client,
/// which keeps the last deny-list and key withdrawals it could read. A restart on that store
/// keeps them too: `restore()` joins the record of refusals kept beside the store to whatever
/// the store yields, so refusals only accumulate.
@Suite struct UnreadableRefusalsRestartTests {
    typealias Fixture = TrustUpdateTests.Fixture

    /// State 4 deny-lists key A (the key the floor pins); state 17, properly signed, carries a
    /// deny-list in a format this release does not read. The running client keeps key A
    /// refused; so does a client restarted on the store, and its next refresh.
    @Test func aRestartOnAStateWithAnUnreadableDenyListKeepsTheDenyListInForce() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let directory = TUFTooling.temporaryDirectory("unreadable-denylist")
        let running = try fixture.client(updateSession, directory: directory)
        fixture.servedState = 4
        #expect(await running.refresh().lastOutcome == .applied)
        fixture.servedState = 17
        let refused = await running.refresh()
        #expect(refused.lastOutcome == .refused && refused.refusal?.code == .invalidTarget, "\(refused)")
        #expect(refused.refusal?.description.contains("denylist.json") == true, "\(refused)")
        #expect(refused.denyListEntries == 1 && running.liveTrustManager.current.denyList.keys == [fixture.leafA.certificate.spkiPin])

        let restarted = try await fixture.restartExpectingDeniedKey(updateSession, directory: directory)
        defer { restarted.session.shutdown() }
        #expect(restarted.restored.lastOutcome == .refused, "\(restarted.restored)")
        #expect(restarted.restored.refusal?.code == .invalidTarget, "\(restarted.restored)")
        _ = await fixture.refreshExpectingDeniedKey(restarted)
    }

    /// State 10 delivers key 1's set (key 2 withdrawn); state 18, properly signed, carries a
    /// `jwks.json` this release cannot read. After a restart the floor is in force, and the
    /// compiled-in key 2 stays withdrawn: the recorded key set still bounds the compiled-in keys.
    @Test func aRestartOnAStateWithAnUnreadableKeySetKeepsWithdrawnKeysWithdrawn() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        let updateSession = try fixture.updateSession()
        defer { updateSession.shutdown() }
        let directory = TUFTooling.temporaryDirectory("unreadable-jwks")
        let compiledIn = SigningKeySet(keys: ["k1": fixture.signingKey1.publicKey, "k2": fixture.signingKey2.publicKey])
        let running = try fixture.client(updateSession, directory: directory)
        fixture.servedState = 10
        #expect(await running.refresh().lastOutcome == .applied)
        fixture.servedState = 18
        let refused = await running.refresh()
        #expect(refused.lastOutcome == .refused && refused.refusal?.code == .invalidTarget, "\(refused)")
        #expect(refused.refusal?.description.contains("jwks.json") == true, "\(refused)")
        #expect(running.signingKeys(orFloor: compiledIn).keyIDs == ["k1"])

        let restarted = try fixture.client(updateSession, directory: directory)
        let restored = await restarted.restore()
        #expect(restored.inForce == .floorNoUpdateYet && restarted.deliveredPolicy == nil, "\(restored)")
        #expect(restored.lastVerifiedSigningKeyIDs == ["k1"], "\(restored)")
        #expect(restarted.signingKeys(orFloor: compiledIn).keyIDs == ["k1"])
    }
}
