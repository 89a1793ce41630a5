import Foundation
import Testing
import ServerTrust
import ServerTrustHTTP
import ServerTrustTestSupport

/// README's "Anchors, proxies and fixed addresses" snippet, run: the calls it shows exist, take
/// the forms it shows, and make a session that reaches a server through them.
@Suite struct ReadmeSessionExampleTests {
    @Test func theAnchorsProxyAndResolveExampleMakesAWorkingSession() async throws {
        let fixture = try SessionFixture()
        let caFile = try LabPKI.writeTemporaryFile(fixture.root.certificate.pemEncoded, name: "internal-ca.pem")
        defer { LabPKI.removeTemporaryFile(caFile) }

        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try TrustAnchors(contentsOfFile: caFile))
        configuration.proxy = .http(URL(string: "http://proxy.internal:3128")!)
        configuration.resolve = ["api.example.com:443:10.0.0.7", "api.example.com:8443:[2001:db8::7]"]
        let session = try Session(configuration: configuration)
        session.shutdown()

        // The same anchors and a resolve entry of that form, against a local server, direct.
        configuration.proxy = nil
        configuration.resolve = [fixture.server.resolveEntry(host: SessionFixture.host)]
        let direct = try Session(configuration: configuration)
        defer { direct.shutdown() }
        let response = try await direct.get(fixture.url("/status/200").absoluteString)
        #expect(response.status == 200)
        #expect(response.trust.evaluator == "DefaultTrustEvaluator")
    }

    /// README's "Host policies" snippet, with real pins and key: the calls compile as shown and
    /// each host resolves to its own policy.
    @Test func theHostPolicyExampleResolvesEachHostToItsPolicy() throws {
        let keys = try SigningKeys()
        let signedResponseRootKey = keys.roots[0].key.base64
        let current = "sha256/" + Data(repeating: 1, count: 32).base64EncodedString()
        let backup = "sha256/" + Data(repeating: 2, count: 32).base64EncodedString()
        let manager = try ServerTrustManager(policies: [
            try HostPattern("api.example.com"): HostPolicy.custom(
                try .pinnedKeyHashes([current, backup]),
                minimumTLSVersion: .tls13,
                signedResponses: .enforced(roots: [try SignedResponseRoot(base64: signedResponseRootKey)])),
            try HostPattern("**.cdn.example.com"): HostPolicy(),
        ])
        let api = try manager.resolve(host: "api.example.com")
        #expect(api.evaluator is PinnedKeyHashesTrustEvaluator)
        #expect(api.policy.minimumTLSVersion == .tls13)
        #expect(api.policy.signedResponses?.mode == .enforced)
        let cdn = try manager.resolve(host: "img.cdn.example.com")
        #expect(cdn.pattern?.description == "**.cdn.example.com")
        #expect(cdn.policy.signedResponses == nil)
    }
}
