import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// Which host gets which client identity: the most specific pattern, by the rule the trust
/// manager uses, and nothing for a host no pattern covers. Checked on the session's resolved
/// policies, no server needed.
@Suite struct ClientIdentitySelectionTests {
    private static func identity(_ name: String) throws -> ClientIdentity {
        let leaf = try LabPKI.makeRoot().issueLeaf(commonName: name, extendedKeyUsage: [.clientAuth])
        return try ClientIdentity(certificatePEM: leaf.certificate.pemEncoded, privateKeyPEM: leaf.key.pemPrivateKey)
    }

    private func session(_ identities: [String: ClientIdentity]) throws -> Session {
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try LabPKI.makeRoot().trustAnchors())
        let policies = Dictionary(uniqueKeysWithValues: try identities.map { (try HostPattern($0.key), HostPolicy(clientIdentity: $0.value)) })
        return try Session(configuration: configuration, trustManager: ServerTrustManager(policies: policies, allHostsMustBeEvaluated: false))
    }

    @Test func eachHostGetsTheIdentityOfItsMostSpecificPatternAndOtherHostsNone() throws {
        let exact = try Self.identity("exact")
        let deep = try Self.identity("deep")
        let single = try Self.identity("single")
        let address = try Self.identity("address")
        let session = try session([
            "api.example.com": exact, "**.api.example.com": deep, "*.example.com": single, "127.0.0.1": address,
        ])
        defer { session.shutdown() }
        func identity(_ host: String) throws -> ClientIdentity? { try session.policy(forRawHost: host, override: nil).clientIdentity }
        #expect(try identity("api.example.com") === exact)
        #expect(try identity("API.Example.COM.") === exact)
        #expect(try identity("v1.api.example.com") === deep)
        #expect(try identity("www.example.com") === single)
        #expect(try identity("127.0.0.1") === address)
        #expect(try identity("[::ffff:127.0.0.1]") === address)
        #expect(try identity("example.com") == nil)
        #expect(try identity("a.b.example.com") == nil)
        #expect(try identity("evil-example.com") == nil)
        #expect(try identity("127.0.0.2") == nil)
    }

    @Test func aPerRequestEvaluatorKeepsTheHostsIdentity() throws {
        let exact = try Self.identity("exact")
        let session = try session(["api.example.com": exact])
        defer { session.shutdown() }
        let policy = try session.policy(forRawHost: "api.example.com", override: DefaultTrustEvaluator())
        #expect(policy.clientIdentity === exact)
    }

    /// Two spellings of one pattern are one `HostPattern` key: the identity filed under one
    /// is the identity of hosts the other spelling names.
    @Test func twoSpellingsOfOnePatternAreOneKey() throws {
        #expect(try HostPattern("api.example.com") == HostPattern("API.example.com."))
        let identity = try Self.identity("a")
        let session = try session(["API.example.com.": identity])
        defer { session.shutdown() }
        #expect(try session.policy(forRawHost: "api.example.com", override: nil).clientIdentity === identity)
    }
}
