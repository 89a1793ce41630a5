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
}
