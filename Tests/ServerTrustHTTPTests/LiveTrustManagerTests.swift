import Foundation
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport
import Testing

/// A `Session` over a `LiveTrustManager`: a replaced manager governs the next request of a
/// running session — on new connections, and on kept-alive ones, which the connection guard
/// evaluates again under the new policy before sending.
@Suite struct LiveTrustManagerTests {
    static let host = SessionFixture.host

    func pinned(_ pins: [Pin], denyList: KeyDenyList = KeyDenyList()) throws -> ServerTrustManager {
        try ServerTrustManager(evaluators: [try HostPattern(Self.host): PinnedKeyHashesTrustEvaluator(pins: pins)], denyList: denyList)
    }

    /// Pin A; the policy becomes A+B; the server rotates to B: every request succeeds, and the
    /// last one is accepted by pin B. With the session keeping its first manager, the rotated
    /// server is refused (the test's last assertions fail).
    @Test func aRotationPublishedBeforeTheServerRotatesKeepsRequestsSucceeding() async throws {
        let fixture = try SessionFixture()
        defer { fixture.server.stop() }
        let live = LiveTrustManager(try pinned([fixture.leafPin]))
        let session = try Session(configuration: try fixture.configuration(), liveTrustManager: live)
        defer { session.shutdown() }
        #expect(try await session.data(for: Request(url: fixture.url("/status/200?a"))).status.code == 200)

        let rotated = try fixture.intermediate.issueLeaf(dnsNames: [Self.host], ipAddresses: ["127.0.0.1"])
        #expect(live.replace(with: try pinned([fixture.leafPin, rotated.certificate.spkiPin])) == 2)
        #expect(session.trustManager === live.current)
        #expect(try await session.data(for: Request(url: fixture.url("/status/200?b"))).status.code == 200)

        try fixture.server.replaceIdentity(.init(chain: rotated.chain, privateKeyPEM: rotated.key.pemPrivateKey))
        var request = Request(url: fixture.url("/status/200?c"))
        request.headers[.connection] = "close"
        _ = try await session.data(for: request)
        let response = try await session.data(for: Request(url: fixture.url("/status/200?d")))
        #expect(response.status.code == 200)
        #expect(response.trust.presentedChain.first?.pin == rotated.certificate.spkiPin)
    }

    /// A key put on the deny-list while a connection to the host is kept alive: the next
    /// request on it is refused with `.deniedKey`, before anything is sent — although the
    /// host's pins still name that key. Without the deny-list check the request succeeds.
    @Test func aDenyListedKeyIsRefusedOnAKeptAliveConnectionAtItsNextRequest() async throws {
        let fixture = try SessionFixture()
        defer { fixture.server.stop() }
        let live = LiveTrustManager(try pinned([fixture.leafPin, fixture.intermediatePin]))
        let session = try Session(configuration: try fixture.configuration(), liveTrustManager: live)
        defer { session.shutdown() }
        #expect(try await session.data(for: Request(url: fixture.url("/status/200?a"))).status.code == 200)
        let requestsBefore = fixture.server.requestsServed

        live.replace(with: try live.current.replacing(denyList: KeyDenyList(keys: [fixture.leafPin])))
        let result = await outcome { try await session.data(for: Request(url: fixture.url("/status/200?b"))) }
        let error = try #require(result.sessionError, "\(result)")
        #expect(error.code == .trustEvaluationFailed)
        #expect(error.trustError?.code == .deniedKey)
        #expect(error.trustError?.reason.contains(fixture.leafPin.description) == true)
        #expect(fixture.server.requestsServed == requestsBefore, "the refused request reached the server")
        #expect(fixture.server.acceptedConnections == 1, "refused on the kept-alive connection, not a new one")

        // Lifted again: the host is reachable at once.
        live.replace(with: try live.current.replacing(denyList: KeyDenyList()))
        #expect(try await session.data(for: Request(url: fixture.url("/status/200?c"))).status.code == 200)
    }

    /// The deny-list holds whatever the host's policy: default validation, and a request's
    /// own evaluator, are refused too; an issuer + serial entry refuses one certificate.
    @Test func theDenyListOverridesEveryPolicyAndMatchesIssuerAndSerial() async throws {
        let fixture = try SessionFixture()
        defer { fixture.server.stop() }
        let leaf = fixture.leaf.certificate
        let entry = try KeyDenyList.IssuerAndSerial(issuer: leaf.issuer, serial: "00:" + leaf.serialNumber.lowercased())
        let manager = try ServerTrustManager(
            evaluators: [try HostPattern(Self.host): DefaultTrustEvaluator()], denyList: KeyDenyList(keys: [], certificates: [entry]))
        let session = try Session(configuration: try fixture.configuration(), trustManager: manager)
        defer { session.shutdown() }
        let plain = await outcome { try await session.data(for: Request(url: fixture.url("/status/200?a"))) }
        #expect(plain.sessionError?.trustError?.code == .deniedKey, "\(plain)")
        var own = Request(url: fixture.url("/status/200?b"))
        own.trustEvaluator = try PinnedKeyHashesTrustEvaluator(pins: [fixture.leafPin])
        let overridden = await outcome { try await session.data(for: own) }
        #expect(overridden.sessionError?.trustError?.code == .deniedKey, "\(overridden)")
    }

    /// A client identity OpenSSL would refuse in every handshake (RSA under 2048 bits).
    static func weakIdentity() throws -> ClientIdentity {
        let client = try LabPKI.makeRoot(commonName: "Weak Client Root")
            .issueLeaf(commonName: "weak-client", key: .rsa(bits: 1024), extendedKeyUsage: [.clientAuth])
        return try ClientIdentity(certificatePEM: client.certificate.pemEncoded, privateKeyPEM: client.key.pemPrivateKey)
    }

    /// A manager the session cannot use (a client identity OpenSSL refuses) fails every request
    /// closed, naming its generation, until one that fits replaces it.
    @Test func aManagerThatDoesNotFitTheConfigurationFailsRequestsClosed() async throws {
        let fixture = try SessionFixture()
        defer { fixture.server.stop() }
        let live = LiveTrustManager(try pinned([fixture.leafPin, fixture.intermediatePin]))
        let configuration = try fixture.configuration()
        let session = try Session(configuration: configuration, liveTrustManager: live)
        defer { session.shutdown() }
        #expect(try await session.data(for: Request(url: fixture.url("/status/200?a"))).status.code == 200)

        let conflicting = try ServerTrustManager(policies: [
            try HostPattern(Self.host): HostPolicy.custom(
                PinnedKeyHashesTrustEvaluator(pins: [fixture.leafPin]), clientIdentity: try Self.weakIdentity())
        ])
        live.replace(with: conflicting)
        let refused = await outcome { try await session.data(for: Request(url: fixture.url("/status/200?b"))) }
        #expect(refused.sessionError?.code == .trustEvaluationFailed, "\(refused)")
        #expect(refused.sessionError?.reason.contains("generation 2") == true, "\(refused)")

        live.replace(with: try pinned([fixture.leafPin]))
        #expect(try await session.data(for: Request(url: fixture.url("/status/200?c"))).status.code == 200)
    }

    /// The same manager already in force when the session is made: the initialiser throws the
    /// problem itself, so there is no session whose requests could fail later.
    @Test func aSessionMadeWhileAManagerThatDoesNotFitIsInForceThrows() throws {
        let live = LiveTrustManager(try ServerTrustManager(policies: [
            try HostPattern(Self.host): HostPolicy(clientIdentity: try Self.weakIdentity())
        ]))
        let error = #expect(throws: TrustError.self) { try Session(configuration: Session.Configuration(), liveTrustManager: live) }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.reason.contains("OpenSSL refuses the client identity") == true)
    }
}
