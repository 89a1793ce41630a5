import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// Audit finding 6: a connection lives no longer than what its evaluation relied on. Before
/// the expiry requests reuse the connection; after it a request is sent on a new connection,
/// evaluated afresh — over HTTP/1.1 keep-alive (LocalTLSServer) and HTTP/2 (nginx).
@Suite struct ConnectionLifetimeTests {
    /// What the acceptance of the first connection relied on, and so what expires.
    enum Expiry: String, CaseIterable, CustomTestStringConvertible {
        case maximumLifetime, pinSetExpiration, leafNotAfter, ocspNextUpdate
        var testDescription: String { rawValue }
    }

    /// The clock the session judges evaluations and stamps by; tests move it forward.
    final class TestClock: Sendable {
        private let now: Locked<Date>
        init(_ start: Date) { now = Locked(start) }
        func read() -> Date { now.withLock { $0 } }
        func set(_ date: Date) { now.withLock { $0 = date } }
    }

    // MARK: HTTP/1.1 keep-alive, LocalTLSServer

    /// A PKI and server where each expiry falls 30 minutes after `start`, well inside the
    /// one-hour maximum lifetime (except for `.maximumLifetime`, where nothing else expires).
    private struct LocalSetup {
        let root: LabCA
        let intermediate: LabCA
        let leaf: LabLeaf
        let server: LocalTLSServer
        let evaluator: any ServerTrustEvaluating
        let expiry: Date

        init(_ kind: Expiry, start: Date) throws {
            root = try LabPKI.makeRoot(commonName: "Lifetime Root")
            intermediate = try root.issueIntermediate(commonName: "Lifetime Intermediate")
            let soon = start.addingTimeInterval(30 * 60)
            leaf = try intermediate.issueLeaf(
                dnsNames: [SessionFixture.host], notAfter: kind == .leafNotAfter ? soon : start.addingTimeInterval(30 * 86400))
            var configuration = LocalTLSServer.Configuration(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey)
            configuration.maximumTLSVersion = .v1_2  // a staple reaches the status callback, sessions resume
            server = try LocalTLSServer(configuration)
            switch kind {
            case .maximumLifetime:
                evaluator = DefaultTrustEvaluator()
                expiry = start.addingTimeInterval(3600)
            case .pinSetExpiration:
                let pins = try PinSet(
                    [PinSet.Entry(intermediate.certificate.spkiPin, label: "intermediate"), PinSet.Entry(SessionFixture.unrelatedPin, label: "backup")],
                    expiration: soon, expiryBehaviour: .failClosed)
                evaluator = try PinSetTrustEvaluator(pinSet: pins)
                expiry = soon
            case .leafNotAfter:
                evaluator = DefaultTrustEvaluator()
                expiry = soon
            case .ocspNextUpdate:
                server.setStapledOCSPResponse(try Self.staple(leaf, intermediate, thisUpdate: start.addingTimeInterval(-3600), nextUpdate: soon))
                evaluator = RevocationTrustEvaluator(options: .stapleRequired, cache: RevocationCache())
                expiry = soon
            }
        }

        static func staple(_ leaf: LabLeaf, _ issuer: LabCA, thisUpdate: Date, nextUpdate: Date) throws -> [UInt8] {
            try OCSPResponseBuilder(signer: issuer).adding(.good, for: leaf.certificate, issuedBy: issuer, thisUpdate: thisUpdate, nextUpdate: nextUpdate).build()
        }

        func session(clock: TestClock, configure: (inout Session.Configuration) -> Void = { _ in }) throws -> Session {
            var configuration = Session.Configuration()
            configuration.anchors = .bundle(try root.trustAnchors())
            configuration.resolve = [server.resolveEntry(host: SessionFixture.host)]
            configuration.httpVersion = .http1_1
            configuration.clock = { clock.read() }
            configure(&configuration)
            return try Session(configuration: configuration, trustManager: try ServerTrustManager(evaluators: [try HostPattern(SessionFixture.host): evaluator]))
        }

        var url: String { server.url("/status/200", host: SessionFixture.host) }
    }

    @Test(arguments: Expiry.allCases)
    func connectionIsNotReusedPastItsEvaluationsExpiry(_ kind: Expiry) async throws {
        let start = Date()
        let clock = TestClock(start)
        let setup = try LocalSetup(kind, start: start)
        let session = try setup.session(clock: clock)
        defer { session.shutdown() }

        for _ in 0..<3 { #expect(try await session.get(setup.url).status == 200) }
        #expect(setup.server.acceptedConnections == 1)  // kept alive until the expiry
        #expect(session.counters.snapshot.evaluations == 1)

        clock.set(setup.expiry.addingTimeInterval(-1))
        #expect(try await session.get(setup.url).status == 200)
        #expect(setup.server.acceptedConnections == 1)  // a second before it, still the same connection

        // Past the expiry and past the revocation checker's 5-minute clock-skew tolerance.
        clock.set(setup.expiry.addingTimeInterval(600))
        let after = await outcome { try await session.get(setup.url) }
        #expect(setup.server.acceptedConnections == 2)  // never the old connection
        #expect(setup.server.resumedHandshakes == 0)  // nor its TLS session: a full handshake
        #expect(setup.server.requestsServed == (kind == .maximumLifetime ? 5 : 4))  // the refused attempt sent nothing
        #expect(session.counters.snapshot.evaluations == 2)  // the new connection was evaluated, once
        switch kind {
        case .maximumLifetime:
            #expect(try after.get().status == 200)
        case .pinSetExpiration:
            #expect(after.sessionError?.trustError?.code == .pinSetExpired)
        case .leafNotAfter:
            #expect(after.sessionError?.trustError?.code == .chainValidationFailed)
            #expect(after.sessionError?.trustError?.reason.contains("expired") == true)
        case .ocspNextUpdate:
            #expect(after.sessionError?.trustError?.code == .revocationStatusUnknown)
        }
    }

    /// The renewal a fresh connection exists for: once the staple the first connection relied
    /// on is past its nextUpdate, the request gets a new connection and the server's new staple.
    @Test func aNewStapleIsUsedOnceTheOldOnesNextUpdateHasPassed() async throws {
        let start = Date()
        let clock = TestClock(start)
        let setup = try LocalSetup(.ocspNextUpdate, start: start)
        let session = try setup.session(clock: clock)
        defer { session.shutdown() }
        #expect(try await session.get(setup.url).status == 200)

        let later = setup.expiry.addingTimeInterval(600)
        clock.set(later)
        setup.server.setStapledOCSPResponse(
            try LocalSetup.staple(setup.leaf, setup.intermediate, thisUpdate: later.addingTimeInterval(-60), nextUpdate: later.addingTimeInterval(3600)))
        let response = try await session.get(setup.url)
        #expect(response.status == 200)
        #expect(setup.server.acceptedConnections == 2)
        #expect(response.trust.revocation.first?.status == .good)
        #expect(response.trust.revocation.first?.source == .stapledOCSP)
    }

    // MARK: HTTP/2, nginx

    /// The same over one multiplexed HTTP/2 connection: concurrent streams share it until the
    /// expiry, and the request after it gets a connection of its own, evaluated afresh. The
    /// dates come from nginx's PKI (made by `scripts/interop/nginx.sh`), read off a first
    /// evaluation: the chain's first notAfter and the staple's freshness limit.
    @Test(arguments: Expiry.allCases)
    func anHTTP2ConnectionIsNotReusedPastItsEvaluationsExpiry(_ kind: Expiry) async throws {
        let nginx = try NginxInterop.environment()
        let url = nginx.url("TLS13_ECDSA_H2_STAPLED", "/")
        let now = Date()
        let evaluator: any ServerTrustEvaluating
        switch kind {
        case .maximumLifetime, .leafNotAfter:
            evaluator = DefaultTrustEvaluator()
        case .pinSetExpiration:
            let pins = try PinSet(
                [try PinSet.Entry(nginx.intermediatePin, label: "intermediate"), PinSet.Entry(SessionFixture.unrelatedPin, label: "backup")],
                expiration: now.addingTimeInterval(30 * 60), expiryBehaviour: .failClosed)
            evaluator = try PinSetTrustEvaluator(pinSet: pins)
        case .ocspNextUpdate:
            evaluator = RevocationTrustEvaluator(options: .stapleRequired, cache: RevocationCache())
        }
        func session(_ clock: TestClock) throws -> Session {
            var configuration = Session.Configuration()
            configuration.anchors = .bundle(try TrustAnchors(contentsOfFile: nginx.root))
            configuration.resolve = nginx.resolve
            configuration.clock = { clock.read() }
            return try Session(configuration: configuration, trustManager: try ServerTrustManager(evaluators: [try HostPattern(nginx.host): evaluator]))
        }
        let expiry: Date
        switch kind {
        case .maximumLifetime: expiry = now.addingTimeInterval(3600)
        case .pinSetExpiration: expiry = now.addingTimeInterval(30 * 60)
        case .leafNotAfter, .ocspNextUpdate:
            let probe = try session(TestClock(now))
            defer { probe.shutdown() }
            expiry = try #require(try await probe.get(url).trust.reliedOnUntil)
        }
        let clock = TestClock(kind == .leafNotAfter || kind == .ocspNextUpdate ? expiry.addingTimeInterval(-30 * 60) : now)
        let session = try session(clock)
        defer { session.shutdown() }

        async let a = session.get(url)
        async let b = session.get(url)
        async let c = session.get(url)
        for response in try await [a, b, c] {
            #expect(response.status == 200)
            #expect(response.httpVersion == "HTTP/2")
        }
        clock.set(expiry.addingTimeInterval(-1))
        #expect(try await session.get(url).status == 200)
        #expect(session.counters.snapshot.evaluations == 1)  // one connection, one handshake, four streams

        clock.set(expiry.addingTimeInterval(600))
        let after = await outcome { try await session.get(url) }
        #expect(session.counters.snapshot.evaluations == 2)  // a new connection, evaluated in its handshake
        switch kind {
        case .maximumLifetime:
            #expect(try after.get().status == 200)
        case .pinSetExpiration:
            #expect(after.sessionError?.trustError?.code == .pinSetExpired)
        case .leafNotAfter:
            #expect(after.sessionError?.trustError?.code == .chainValidationFailed)
            #expect(after.sessionError?.trustError?.reason.contains("expired") == true)
        case .ocspNextUpdate:
            #expect(after.sessionError?.trustError?.code == .revocationStatusUnknown)
        }
    }

    /// The guard is what retires the connection: without it the expired connection keeps serving.
    @Test(arguments: Expiry.allCases)
    func withoutTheGuardAnExpiredConnectionKeepsServing(_ kind: Expiry) async throws {
        let start = Date()
        let clock = TestClock(start)
        let setup = try LocalSetup(kind, start: start)
        let session = try setup.session(clock: clock) { $0.unsafeDisableConnectionGuard = true }
        defer { session.shutdown() }
        #expect(try await session.get(setup.url).status == 200)
        clock.set(setup.expiry.addingTimeInterval(600))
        #expect(try await session.get(setup.url).status == 200)  // the bypass the expiry exists for
        #expect(setup.server.acceptedConnections == 1)
    }

    /// A TLS session resumed after the expiry carries no stamp: the guard evaluates it afresh.
    @Test func aSessionResumedPastThePinSetsExpirationIsEvaluatedAgain() async throws {
        let start = Date()
        let clock = TestClock(start)
        let setup = try LocalSetup(.pinSetExpiration, start: start)
        let session = try setup.session(clock: clock)
        defer { session.shutdown() }
        #expect(try await session.get(setup.server.url("/close", host: SessionFixture.host)).status == 200)
        // Until the server's close is seen, curl could still pick the old connection, which the
        // guard would refuse for its expired stamp: a full handshake, not the resumption tested here.
        while setup.server.openConnections > 0 { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(20))
        clock.set(setup.expiry.addingTimeInterval(600))
        let after = await outcome { try await session.get(setup.url) }
        // The client rejects right after its side of the handshake; the server thread records
        // the handshake a moment later.
        let deadline = ContinuousClock.now + .seconds(5)
        while setup.server.completedHandshakes < 2 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(setup.server.resumedHandshakes == 1, "\(setup.server.handshakes)")
        #expect(after.sessionError?.trustError?.code == .pinSetExpired)
        #expect(setup.server.requestsServed == 1)
    }

    /// A date already past at the evaluation was not relied on (a report-only evaluator saw the
    /// expired leaf and let it through): the connection lives its normal life, not one request.
    @Test func aReportOnlyFailureOnAnExpiredLeafDoesNotRetireTheConnection() async throws {
        let root = try LabPKI.makeRoot(commonName: "Lifetime Root")
        let intermediate = try root.issueIntermediate(commonName: "Lifetime Intermediate")
        let leaf = try intermediate.issueLeaf(
            dnsNames: [SessionFixture.host], notBefore: Date(timeIntervalSinceNow: -7200), notAfter: Date(timeIntervalSinceNow: -3600))
        let server = try LocalTLSServer(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey)
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try root.trustAnchors())
        configuration.resolve = [server.resolveEntry(host: SessionFixture.host)]
        configuration.httpVersion = .http1_1
        let session = try Session(
            configuration: configuration,
            trustManager: try ServerTrustManager(evaluators: [try HostPattern(SessionFixture.host): InformationalTrustEvaluator(DefaultTrustEvaluator())]))
        defer { session.shutdown() }
        for _ in 0..<3 {
            let response = try await session.get(server.url("/status/200", host: SessionFixture.host))
            #expect(response.status == 200)
            #expect(response.trust.findings.first?.error.code == .chainValidationFailed)
        }
        #expect(server.acceptedConnections == 1)
        #expect(session.counters.snapshot.evaluations == 1)
    }

    @Test func aMaximumConnectionLifetimeThatIsNotPositiveIsRefused() throws {
        var configuration = Session.Configuration()
        configuration.maximumConnectionLifetime = .zero
        #expect { try Session(configuration: configuration) } throws: { ($0 as? SessionError)?.code == .invalidRequest }
    }
}
