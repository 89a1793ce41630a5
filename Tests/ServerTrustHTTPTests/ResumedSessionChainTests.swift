import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// A resumed TLS session is evaluated on the chain our validation built at the full handshake
/// that made the session (`ValidatedChainStore`), never on what the peer sent.
///
/// libcurl 8.10 and later restore a cached session from its serialised form, which keeps the
/// peer's leaf and not its chain; before the store, every resumed connection on Debian 13
/// (libcurl 8.14.1) failed with `noCertificates`. libcurl 7.88 keeps the chain the peer sent.
/// These tests hold on both: the server here sends an extra, unrelated certificate (a decoy no
/// path uses), and a resumed evaluation that took the peer's chain, or a stored copy of it,
/// would show the decoy.
@Suite struct ResumedSessionChainTests {
    private struct Setup {
        let root: LabCA
        let intermediate: LabCA
        let leaf: LabLeaf
        let decoy: LabCA
        let server: LocalTLSServer

        init(version: LocalTLSServer.TLSVersion) throws {
            root = try LabPKI.makeRoot(commonName: "Resumption Root")
            intermediate = try root.issueIntermediate(commonName: "Resumption Intermediate")
            leaf = try intermediate.issueLeaf(dnsNames: [SessionFixture.host])
            decoy = try LabPKI.makeRoot(commonName: "Resumption Decoy")
            var configuration = LocalTLSServer.Configuration(
                chain: [leaf.certificate, intermediate.certificate, decoy.certificate], privateKeyPEM: leaf.key.pemPrivateKey)
            configuration.minimumTLSVersion = version
            configuration.maximumTLSVersion = version
            server = try LocalTLSServer(configuration)
        }

        func session(pins: [Pin]) throws -> Session {
            var configuration = Session.Configuration()
            configuration.anchors = .bundle(try root.trustAnchors())
            configuration.resolve = [server.resolveEntry(host: SessionFixture.host)]
            configuration.requestTimeout = .seconds(300)
            return try Session(
                configuration: configuration,
                trustManager: try ServerTrustManager(evaluators: [try HostPattern(SessionFixture.host): try PinnedKeyHashesTrustEvaluator(pins: pins)]))
        }

        /// `/close`: the server closes after the response, so the next request opens a new
        /// connection and resumes the session. Waits until the close is seen.
        func requestOnItsOwnConnection(_ session: Session) async -> Result<Response, any Error> {
            let result = await outcome { try await session.get(server.url("/close", host: SessionFixture.host)) }
            while server.openConnections > 0 { try? await Task.sleep(for: .milliseconds(5)) }
            try? await Task.sleep(for: .milliseconds(20))
            return result
        }

        /// Waits until the server thread has recorded `count` handshakes (it does so a moment
        /// after the client's side of a handshake ends).
        func waitForHandshakes(_ count: Int) async throws {
            let deadline = ContinuousClock.now + .seconds(5)
            while server.completedHandshakes < count && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        }
    }

    @Test(arguments: [LocalTLSServer.TLSVersion.v1_2, .v1_3])
    func aResumedSessionIsEvaluatedOnTheChainValidatedAtItsFullHandshakeNotOnWhatThePeerSent(
        version: LocalTLSServer.TLSVersion
    ) async throws {
        let setup = try Setup(version: version)
        let session = try setup.session(pins: [setup.intermediate.certificate.spkiPin])
        defer { session.shutdown() }
        let first = try await setup.requestOnItsOwnConnection(session).get()
        let decoyPin = setup.decoy.certificate.spkiPin
        // The full handshake: the decoy was sent, and no validated path uses it.
        #expect(first.trust.presentedChain.map(\.pin).contains(decoyPin))
        let validated = first.trust.validatedChain
        #expect(validated.map(\.pin) == [setup.leaf.certificate.spkiPin, setup.intermediate.certificate.spkiPin, setup.root.certificate.spkiPin])

        let second = try await setup.requestOnItsOwnConnection(session).get()
        try await setup.waitForHandshakes(2)
        #expect(setup.server.resumedHandshakes == 1)  // the second connection resumed the first's session
        #expect(setup.server.acceptedConnections == 2)  // and was admitted, with no retry
        #expect(second.status == 200)
        // Evaluated again, on the chain validated at the full handshake: the decoy is nowhere.
        #expect(second.trust.presentedChain == validated)
        #expect(second.trust.validatedChain == validated)
        #expect(!second.trust.presentedChain.map(\.pin).contains(decoyPin))
        #expect(session.counters.snapshot.evaluations == 2)
    }

    @Test(arguments: [LocalTLSServer.TLSVersion.v1_2, .v1_3])
    func aRightPinIsAcceptedOnAResumedSession(version: LocalTLSServer.TLSVersion) async throws {
        let setup = try Setup(version: version)
        let session = try setup.session(pins: [setup.leaf.certificate.spkiPin])
        defer { session.shutdown() }
        for attempt in 1...3 {
            let response = try await setup.requestOnItsOwnConnection(session).get()
            #expect(response.status == 200, "request \(attempt)")
            #expect(response.trust.isTrusted, "request \(attempt)")
        }
        try await setup.waitForHandshakes(3)
        #expect(setup.server.resumedHandshakes == 2)  // resumption keeps working: no full handshake forced
        #expect(setup.server.acceptedConnections == 3)
        #expect(session.counters.snapshot.failures == 0)
    }

    /// The re-evaluation is a whole evaluation at the current time, not a replay of the first:
    /// a session resumed after the anchors' trust in the intermediate ended is refused.
    @Test func aResumedSessionIsValidatedAgainAtTheCurrentTime() async throws {
        let setup = try Setup(version: .v1_3)
        let clock = Locked(Date())
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try setup.root.trustAnchors())
        configuration.resolve = [setup.server.resolveEntry(host: SessionFixture.host)]
        configuration.requestTimeout = .seconds(300)
        configuration.clock = { clock.withLock { $0 } }
        let session = try Session(
            configuration: configuration,
            trustManager: try ServerTrustManager(evaluators: [try HostPattern(SessionFixture.host): try PinnedKeyHashesTrustEvaluator(pins: [setup.leaf.certificate.spkiPin])]))
        defer { session.shutdown() }
        _ = try await setup.requestOnItsOwnConnection(session).get()
        // Past the leaf's notAfter: the stored chain no longer validates.
        clock.withLock { $0 = setup.leaf.certificate.notValidAfter.addingTimeInterval(60) }
        let second = await setup.requestOnItsOwnConnection(session)
        try await setup.waitForHandshakes(2)
        #expect(setup.server.resumedHandshakes == 1)
        #expect(second.sessionError?.trustError?.code == .chainValidationFailed, "\(second)")
        #expect(setup.server.requestsServed == 1)
    }
}
