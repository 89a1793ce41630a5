import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// The pin-bypass attacks of libcurl + OpenSSL: a second request under different, wrong pins
/// must be rejected however its connection came to be. Each attack test also runs with the
/// guard removed (a testing hook) and shows the wrong pins then pass, so the test has teeth.
@Suite struct ConnectionGuardTests {
    private func evaluators(_ fixture: SessionFixture) throws -> (right: any ServerTrustEvaluating, wrong: any ServerTrustEvaluating) {
        (try PinnedKeyHashesTrustEvaluator(pins: [fixture.intermediatePin]), try PinnedKeyHashesTrustEvaluator(pins: [SessionFixture.unrelatedPin]))
    }

    /// (a) A reused connection: curl never calls the ctx or verify callback again.
    @Test(arguments: [false, true])
    func wrongPinsOnAReusedConnectionAreRejected(guardRemoved: Bool) async throws {
        let fixture = try SessionFixture()
        let (right, wrong) = try evaluators(fixture)
        let session = try fixture.session { $0.unsafeDisableConnectionGuard = guardRemoved }
        defer { session.shutdown() }

        let first = try await session.data(for: Request(url: fixture.url("/status/200"), trustEvaluator: right))
        #expect(first.status == 200)
        let second = await outcome { try await session.data(for: Request(url: fixture.url("/status/200"), trustEvaluator: wrong)) }
        #expect(fixture.server.acceptedConnections == 1)  // the connection really was reused
        if guardRemoved {
            #expect(try second.get().status == 200)  // the bypass the guard exists for
        } else {
            #expect(second.sessionError?.code == .trustEvaluationFailed)
            #expect(second.sessionError?.trustError?.code == .pinMismatch)
            #expect(second.sessionError?.curlCode == 42)  // CURLE_ABORTED_BY_CALLBACK: the prerequisite guard
            #expect(fixture.server.requestsServed == 1)  // the second request never left the client
        }
    }

    /// (b) A resumed TLS session: neither the verify nor the status callback runs.
    @Test(arguments: [false, true])
    func wrongPinsOnAResumedSessionAreRejected(guardRemoved: Bool) async throws {
        let fixture = try SessionFixture(maximumTLSVersion: .v1_2)
        let (right, wrong) = try evaluators(fixture)
        let session = try fixture.session {
            $0.unsafeShareTLSSessionsAcrossPolicies = true
            $0.unsafeDisableConnectionGuard = guardRemoved
        }
        defer { session.shutdown() }

        _ = try await session.data(for: Request(url: fixture.url("/close"), trustEvaluator: right))
        let second = await outcome { try await session.data(for: Request(url: fixture.url("/status/200"), trustEvaluator: wrong)) }
        // The guard rejects right after the client's side of the handshake; the server thread
        // records the handshake a moment later (under load, after this line was reached).
        let deadline = ContinuousClock.now + .seconds(5)
        while fixture.server.completedHandshakes < 2 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(fixture.server.acceptedConnections == 2)
        #expect(fixture.server.resumedHandshakes == 1)  // the second connection resumed the first's session
        if guardRemoved {
            #expect(try second.get().status == 200)
        } else {
            #expect(second.sessionError?.trustError?.code == .pinMismatch)
            #expect(second.sessionError?.curlCode == 42)
        }
    }

    /// Without the testing hook, SSL sessions are never shared across policies: the second
    /// policy gets a full handshake and the verify callback itself rejects.
    @Test func sessionsAreNotResumedAcrossPolicies() async throws {
        let fixture = try SessionFixture(maximumTLSVersion: .v1_2)
        let (right, wrong) = try evaluators(fixture)
        let session = try fixture.session()
        defer { session.shutdown() }
        _ = try await session.data(for: Request(url: fixture.url("/close"), trustEvaluator: right))
        let second = await outcome { try await session.data(for: Request(url: fixture.url("/status/200"), trustEvaluator: wrong)) }
        #expect(fixture.server.resumedHandshakes == 0)
        #expect(second.sessionError?.trustError?.code == .pinMismatch)
        #expect(second.sessionError?.curlCode == 60)  // rejected in the handshake's verify callback

        // The same policy does resume, so resumption is on where it is safe.
        _ = try await session.data(for: Request(url: fixture.url("/close"), trustEvaluator: right))
        _ = try await session.data(for: Request(url: fixture.url("/close"), trustEvaluator: right))
        #expect(fixture.server.resumedHandshakes >= 1)
    }

    /// (c) A concurrent transfer on the multi handle waiting for the one connection allowed.
    @Test(arguments: [false, true])
    func wrongPinsOnAConcurrentTransferSharingTheConnectionAreRejected(guardRemoved: Bool) async throws {
        let fixture = try SessionFixture()
        let (right, wrong) = try evaluators(fixture)
        let session = try fixture.session {
            $0.maximumConnectionsPerHost = 1
            $0.httpVersion = .http1_1
            $0.unsafeDisableConnectionGuard = guardRemoved
        }
        defer { session.shutdown() }
        async let first = outcome { try await session.data(for: Request(url: fixture.url("/slow/200"), trustEvaluator: right)) }
        try await Task.sleep(for: .milliseconds(50))
        async let second = outcome { try await session.data(for: Request(url: fixture.url("/status/200"), trustEvaluator: wrong)) }
        let (a, b) = await (first, second)
        #expect(try a.get().status == 200)
        #expect(fixture.server.acceptedConnections == 1)
        if guardRemoved {
            #expect(try b.get().status == 200)
        } else {
            #expect(b.sessionError?.trustError?.code == .pinMismatch)
        }
    }

    /// A policy that turns curl's VERIFYPEER off (as naive pinning code does) is still enforced:
    /// the ctx callback forces SSL_VERIFY_PEER, without which OpenSSL ignores our rejection.
    @Test func turningOffCurlsVerifyPeerDoesNotTurnOffThePolicy() async throws {
        let fixture = try SessionFixture()
        let (_, wrong) = try evaluators(fixture)
        let session = try fixture.session([SessionFixture.host: wrong]) { $0.unsafeCurlVerifyPeerOff = true }
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/").absoluteString) }.sessionError
        #expect(error?.trustError?.code == .pinMismatch)
        #expect(fixture.server.requestsServed == 0)
    }

    /// An impostor taking over the address after the first request is evaluated on its new
    /// connection, and rejected.
    @Test func anImpostorOnANewConnectionIsRejected() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session([SessionFixture.host: try PinnedKeyHashesTrustEvaluator(pins: [fixture.intermediatePin])])
        defer { session.shutdown() }
        _ = try await session.get(fixture.url("/close").absoluteString)
        // Another CA the client also trusts (the proxy case) issues a certificate for the host.
        let impostorCA = try fixture.root.issueIntermediate(commonName: "Proxy CA")
        let impostor = try impostorCA.issueLeaf(dnsNames: [SessionFixture.host])
        try fixture.server.replaceIdentity(.init(chain: impostor.chain, privateKeyPEM: impostor.key.pemPrivateKey))
        let error = await outcome { try await session.get(fixture.url("/").absoluteString) }.sessionError
        #expect(error?.trustError?.code == .pinMismatch)
        #expect(error?.trustError?.evidence.chain.map(\.pin).contains(impostorCA.certificate.spkiPin) == true)
    }
}
