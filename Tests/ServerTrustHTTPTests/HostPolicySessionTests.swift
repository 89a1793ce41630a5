import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing
@testable import ServerTrustHTTP

/// Issue #33: a host's whole policy (`HostPolicy`) resolved once by the trust manager and applied
/// by the session — the TLS floor, signed responses, client identity and report URIs come from
/// the pattern that chose the evaluator — and the handshake evidence reaching evaluators.
@Suite struct HostPolicySessionTests {
    static let host = SessionFixture.host

    /// Records what each evaluation's handshake gave.
    final class EvidenceRecorder: ServerTrustEvaluating {
        private let seen = Locked<[HandshakeEvidence]>([])
        let usesSignedCertificateTimestamps: Bool

        init(usesSignedCertificateTimestamps: Bool = false) { self.usesSignedCertificateTimestamps = usesSignedCertificateTimestamps }

        func evaluate(_ trust: PeerTrust, forHost host: String) throws {
            seen.withLock { $0.append(trust.handshake) }
            try DefaultTrustEvaluator().evaluate(trust, forHost: host)
        }

        var evidence: [HandshakeEvidence] { seen.withLock { $0 } }
    }

    private func session(_ fixture: SessionFixture, _ policies: [String: HostPolicy], configure: (inout Session.Configuration) -> Void = { _ in }) throws -> Session {
        var configuration = try fixture.configuration()
        configure(&configuration)
        return try Session(
            configuration: configuration,
            trustManager: ServerTrustManager(policies: Dictionary(uniqueKeysWithValues: try policies.map { (try HostPattern($0.key), $0.value) })))
    }

    // MARK: Handshake evidence

    @Test(arguments: [(LocalTLSServer.TLSVersion.v1_3, TLSProtocolVersion.tls13), (.v1_2, .tls12)])
    func theNegotiatedProtocolCipherAndALPNReachTheEvaluatorAndTheReport(
        maximum: LocalTLSServer.TLSVersion, expected: TLSProtocolVersion
    ) async throws {
        let fixture = try SessionFixture(maximumTLSVersion: maximum)
        let recorder = EvidenceRecorder()
        let session = try session(fixture, [Self.host: HostPolicy.custom(recorder)])
        defer { session.shutdown() }
        let response = try await session.get(fixture.url("/status/200").absoluteString)
        let seen = try #require(recorder.evidence.first)
        #expect(recorder.evidence.count == 1)
        #expect(seen.protocolVersion == expected)
        #expect(seen.cipherSuite?.hasPrefix("TLS_") == true, "\(String(describing: seen.cipherSuite))")
        #expect(seen.applicationProtocol == "http/1.1")
        // TLS 1.3 agrees on the group in the ServerHello, before the chain; a TLS 1.2 server
        // sends it after the chain, so the evaluation cannot know it yet.
        #expect((seen.keyExchangeGroup != nil) == (expected == .tls13), "\(String(describing: seen.keyExchangeGroup))")
        // By name, each stack's default: X25519 on OpenSSL 3.0, X25519MLKEM768 (no NID: named
        // through SSL_get0_group_name) on OpenSSL 3.5.
        if expected == .tls13 { #expect(seen.keyExchangeGroup == OpenSSLDefaults.tls13KeyExchangeGroup) }
        #expect(seen.stapledOCSPResponse == nil)
        #expect(seen.signedCertificateTimestamps.isEmpty)
        #expect(response.trust.handshake == seen)
        #expect(response.trust.description.contains("negotiated: \(expected)"))
    }

    // MARK: The per-host TLS floor

    @Test func aHostPolicyRequiringTLS13RefusesATLS12OnlyServerAndNamesTheFloor() async throws {
        let fixture = try SessionFixture(maximumTLSVersion: .v1_2)
        let session = try session(fixture, [Self.host: HostPolicy(minimumTLSVersion: .tls13)])
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/status/200").absoluteString) }.sessionError
        #expect(error?.code == .transferFailed)
        #expect(error?.reason.contains("at or above TLS 1.3, the lowest its host policy accepts") == true, "\(String(describing: error))")
        #expect(fixture.server.requestsServed == 0)
        // The control: the same server under the default floor.
        let lenient = try self.session(fixture, [Self.host: HostPolicy()])
        defer { lenient.shutdown() }
        let response = try await lenient.get(fixture.url("/status/200").absoluteString)
        #expect(response.trust.handshake.protocolVersion == .tls12)
    }

    @Test func aHostPolicyRequiringTLS13AcceptsATLS13Server() async throws {
        let fixture = try SessionFixture()
        let session = try session(fixture, [Self.host: HostPolicy(minimumTLSVersion: .tls13)])
        defer { session.shutdown() }
        let response = try await session.get(fixture.url("/status/200").absoluteString)
        #expect(response.trust.handshake.protocolVersion == .tls13)
    }

    // MARK: Signed responses by the manager's pattern

    @Test func signedResponsesOfAHostPolicyAreEnforcedForItsHosts() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        fixture.serveSigned(keys) { _ in SignedReply(body: "unsigned") }
        let session = try session(fixture, [
            "**.servertrust.test": HostPolicy(signedResponses: .enforced(roots: keys.roots))
        ])
        defer { session.shutdown() }
        // The server signs only when asked: it was asked, and the response verifies.
        let response = try await session.data(for: Request(url: fixture.url("/v1/balance")))
        #expect(response.verification == .verified)
        #expect(fixture.server.recentRequests.last?.header(SignedResponseHeader.nonce) != nil)
    }

    /// The bug class a table per setting allowed: `api.servertrust.test` has a policy of its
    /// own, without signed responses, so the wildcard's signed-response policy does not reach
    /// it, as its evaluator does not.
    @Test func aMoreSpecificHostPolicyWithoutSignedResponsesGovernsItsHost() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        fixture.serveSigned(keys) { _ in SignedReply(body: "plain") }
        let session = try session(fixture, [
            "**.servertrust.test": HostPolicy(signedResponses: .enforced(roots: keys.roots)),
            Self.host: HostPolicy(),
        ])
        defer { session.shutdown() }
        let response = try await session.data(for: Request(url: fixture.url("/v1/balance")))
        #expect(response.verification == .notRequested)
        #expect(response.trust.matchedPattern?.description == Self.host)
        #expect(fixture.server.recentRequests.last?.header(SignedResponseHeader.nonce) == nil)
    }

    // MARK: Client identity and report URIs by the manager's pattern

    private static func identity(_ name: String) throws -> ClientIdentity {
        let leaf = try LabPKI.makeRoot().issueLeaf(commonName: name, extendedKeyUsage: [.clientAuth])
        return try ClientIdentity(certificatePEM: leaf.certificate.pemEncoded, privateKeyPEM: leaf.key.pemPrivateKey)
    }

    /// The identity of the pattern that chose the evaluator: the deeper wildcard's for its
    /// hosts, none for a host whose exact policy has none.
    @Test func eachHostGetsTheClientIdentityOfItsOwnHostPolicy() throws {
        let fixture = try SessionFixture()
        let wide = try Self.identity("wide")
        let session = try session(fixture, [
            "**.servertrust.test": HostPolicy(clientIdentity: wide),
            Self.host: HostPolicy(),
        ])
        defer { session.shutdown() }
        func identity(_ host: String) throws -> ClientIdentity? { try session.policy(forRawHost: host, override: nil).clientIdentity }
        #expect(try identity("other.servertrust.test") === wide)
        #expect(try identity(Self.host) == nil)
    }

    @Test func aNonHTTPSReportURIInAHostPolicyIsRefused() {
        let error = #expect(throws: TrustError.invalidConfiguration) {
            try ServerTrustManager(policies: [
                try HostPattern(Self.host): HostPolicy(reportURIs: [URL(string: "http://reports.servertrust.test/pins")!])
            ])
        }
        #expect(error?.reason.contains("not an https: URL") == true)
    }
}
