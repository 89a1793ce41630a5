import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustTUF
import ServerTrustUpdates
import Testing

/// The sequence every deny-list-survives-a-restart test runs: a client restarted on a store
/// whose newest verified state deny-lists key A (the key the floor pins), then a refresh.
extension TrustUpdateTests.Fixture {
    /// A restarted client, what its restore reported, and a session for the API host on its
    /// live manager (shut it down).
    struct Restarted {
        let client: TrustUpdateClient
        let restored: TrustUpdateStatus
        let session: Session
    }

    /// Restarts a client on `directory` and restores it, expecting what every such restart
    /// keeps: no delivered policy, key A's deny-list (one entry) in the live manager, and the
    /// server of key A refused with `.deniedKey`.
    func restartExpectingDeniedKey(
        _ updateSession: Session, directory: String, clock: any TUFClock = SystemTUFClock(), floorRevocation: RevocationOptions? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Restarted {
        let client = try self.client(updateSession, directory: directory, clock: clock, floorRevocation: floorRevocation)
        let restored = await client.restore()
        #expect(restored.denyListEntries == 1, "\(restored)", sourceLocation: sourceLocation)
        #expect(client.deliveredPolicy == nil, sourceLocation: sourceLocation)
        #expect(client.liveTrustManager.current.denyList.keys == [leafA.certificate.spkiPin], sourceLocation: sourceLocation)
        let session = try apiSession(client)
        let refused = await TrustUpdateTests.result(session, apiURL())
        #expect(TrustUpdateTests.trustCode(refused) == .deniedKey, "\(refused)", sourceLocation: sourceLocation)
        return Restarted(client: client, restored: restored, session: session)
    }

    /// Refreshes the restarted client, expecting the deny-list to stay: the live manager left
    /// alone (its generation unchanged), one entry, and the server of key A still refused with
    /// `.deniedKey` on a new connection.
    func refreshExpectingDeniedKey(_ restarted: Restarted, sourceLocation: SourceLocation = #_sourceLocation) async -> TrustUpdateStatus {
        let generation = restarted.client.liveTrustManager.generation
        let refreshed = await restarted.client.refresh()
        #expect(refreshed.denyListEntries == 1, "\(refreshed)", sourceLocation: sourceLocation)
        #expect(restarted.client.liveTrustManager.generation == generation, sourceLocation: sourceLocation)
        let stillRefused = await TrustUpdateTests.result(restarted.session, apiURL(), closing: true)
        #expect(TrustUpdateTests.trustCode(stillRefused) == .deniedKey, "\(stillRefused)", sourceLocation: sourceLocation)
        return refreshed
    }
}
