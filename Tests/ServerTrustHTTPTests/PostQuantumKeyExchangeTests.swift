import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import ServerTrustTestSupport
import Testing

/// Issue #43: post-quantum key exchange, reported and requirable per host. On OpenSSL 3.5 and
/// later (Debian 13) against `openssl s_server` offering or refusing the hybrid groups; on
/// OpenSSL 3.0 (Debian 12), which offers none, a policy requiring one is refused at set-up,
/// naming the version. Each platform's outcome is asserted, never either.
@Suite struct PostQuantumKeyExchangeTests {
    static let host = SessionFixture.host

    /// `openssl s_server`, TLS 1.3, offering only `groups`, serving the fixture's chain.
    private static func startServer(_ fixture: SessionFixture, groups: String, connections: Int) throws -> OpenSSLServer {
        try OpenSSLServer.start(
            leaf: fixture.leaf.certificate.pemEncoded, chain: fixture.intermediate.certificate.pemEncoded, key: fixture.leaf.key.pemPrivateKey,
            arguments: "-tls1_3 -groups '\(groups)'", connections: connections)
    }

    private static func session(_ fixture: SessionFixture, port: Int, keyExchange: KeyExchangeRequirement) throws -> Session {
        var configuration = try fixture.configuration()
        configuration.resolve = ["\(host):\(port):127.0.0.1"]
        return try Session(
            configuration: configuration,
            trustManager: ServerTrustManager(policies: [try HostPattern(host): HostPolicy(keyExchange: keyExchange)]))
    }

    /// OpenSSL 3.5+: a server offering the hybrid is accepted under a post-quantum requirement
    /// and the group is reported; a server offering only X25519 is refused, naming the group.
    /// OpenSSL 3.0: the requirement is refused when the manager is made, naming the version.
    @Test func aPostQuantumRequirementAcceptsTheHybridAndRefusesAClassicalGroup() async throws {
        guard KeyExchangeRequirement.isAvailable else {
            #expect {
                try ServerTrustManager(policies: [try HostPattern(Self.host): HostPolicy(keyExchange: .postQuantum)])
            } throws: { error in
                let error = try #require(error as? TrustError)
                return error.code == .invalidConfiguration && error.reason.contains("OpenSSL 3.0") && error.reason.contains("OpenSSL 3.5 or later")
            }
            return
        }
        let fixture = try SessionFixture()
        let hybrid = try Self.startServer(fixture, groups: "X25519MLKEM768", connections: 1)
        defer { hybrid.removeFiles() }
        let accepting = try Self.session(fixture, port: hybrid.port, keyExchange: .postQuantum)
        defer { accepting.shutdown() }
        let response = try await accepting.get("https://\(Self.host):\(hybrid.port)/")
        #expect(response.status.code == 200)
        #expect(response.trust.handshake.keyExchangeGroup == "X25519MLKEM768")

        let classical = try Self.startServer(fixture, groups: "X25519", connections: 1)
        defer { classical.removeFiles() }
        let refusing = try Self.session(fixture, port: classical.port, keyExchange: .postQuantum)
        defer { refusing.shutdown() }
        do {
            _ = try await refusing.get("https://\(Self.host):\(classical.port)/")
            Issue.record("a classical key exchange was accepted under a post-quantum requirement")
        } catch let error as SessionError {
            #expect(error.trustError?.code == .keyExchangeBelowPolicy)
            #expect(error.trustError?.reason.contains("classical key-exchange group X25519,") == true, "\(error)")
        }
    }

    /// ServerTrust sets no group list of its own: OpenSSL's default offers the hybrid first, so
    /// a server that has it negotiates it with no requirement at all (OpenSSL 3.5+); OpenSSL
    /// 3.0 negotiates X25519 against the same server offering X25519 beside the hybrid.
    @Test func theDefaultGroupListKeepsTheHybridsTheLibraryOffers() async throws {
        let fixture = try SessionFixture()
        let groups = KeyExchangeRequirement.isAvailable ? "X25519MLKEM768:X25519" : "X25519"
        let server = try Self.startServer(fixture, groups: groups, connections: 1)
        defer { server.removeFiles() }
        let session = try Self.session(fixture, port: server.port, keyExchange: .any)
        defer { session.shutdown() }
        let response = try await session.get("https://\(Self.host):\(server.port)/")
        #expect(response.trust.handshake.keyExchangeGroup == OpenSSLDefaults.tls13KeyExchangeGroup)
    }

    /// The policy file's `keyExchange`: read on OpenSSL 3.5+, refused at its field with the
    /// version on OpenSSL 3.0.
    @Test func thePolicyFileReadsOrRefusesAPostQuantumRequirement() throws {
        let text = #"{"version": 1, "hosts": {"api.example.com": {"keyExchange": "postQuantum"}}}"#
        if KeyExchangeRequirement.isAvailable {
            let file = try TrustPolicyFile(data: Array(text.utf8))
            #expect(file.hosts[0].policy.keyExchange == .postQuantum)
            #expect(file.hosts[0].policy.keyExchange == .postQuantum)
        } else {
            #expect {
                try TrustPolicyFile(data: Array(text.utf8))
            } throws: { error in
                let error = try #require(error as? TrustError)
                return error.code == .invalidPolicyFile && error.reason.hasPrefix(#"policy.json:1: hosts["api.example.com"].keyExchange: requires post-quantum key exchange"#)
                    && error.reason.contains("OpenSSL 3.0")
            }
        }
    }
}
