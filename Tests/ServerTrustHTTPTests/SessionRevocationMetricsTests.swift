import Foundation
import MetricsTestKit
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// Revocation metrics: live OCSP fetches through the session's fetcher (libcurl, local
/// responder), by kind and outcome, and cache hits and misses, by evaluation.
@Suite struct SessionRevocationMetricsTests {
    typealias Name = SessionMetrics.Name

    /// A server whose leaf names a local OCSP responder; `answer` nil makes the responder say 503.
    private struct Setup {
        let intermediate: LabCA
        let leaf: LabLeaf
        let server: LocalTLSServer
        let responder: LocalHTTPServer
        let session: Session
        let metrics = TestMetrics()
        var url: String { server.url("/close", host: SessionFixture.host) }

        init(answering status: OCSPResponseBuilder.CertificateStatus?) throws {
            let root = try LabPKI.makeRoot(commonName: "Revocation Metrics Root")
            let intermediate = try root.issueIntermediate(commonName: "Revocation Metrics Intermediate")
            let responder = try LocalHTTPServer()
            let leaf = try intermediate.issueLeaf(dnsNames: [SessionFixture.host], ocspURL: responder.url("/ocsp"))
            let server = try LocalTLSServer(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey)
            (self.intermediate, self.leaf, self.responder, self.server) = (intermediate, leaf, responder, server)
            let body = try status.map { try OCSPResponseBuilder(signer: intermediate).adding($0, for: leaf.certificate, issuedBy: intermediate).build() }
            responder.setHandler { request in
                guard request.path.hasPrefix("/ocsp") else { return nil }
                guard let body else { return .text("responder down\n", status: 503) }
                return LocalHTTPResponse(headers: [("Content-Type", "application/ocsp-response")], body: .bytes(body))
            }
            var configuration = Session.Configuration()
            configuration.anchors = .bundle(try root.trustAnchors())
            configuration.resolve = [server.resolveEntry(host: SessionFixture.host)]
            configuration.metricsFactory = metrics
            let evaluator = RevocationTrustEvaluator(options: .softFail, cache: RevocationCache())
            session = try Session(configuration: configuration, trustManager: try ServerTrustManager(evaluators: [try HostPattern(SessionFixture.host): evaluator]))
        }
    }

    @Test func aLiveOCSPFetchIsCountedOnceAndTheNextHandshakeIsACacheHit() async throws {
        let setup = try Setup(answering: .good)
        defer { setup.session.shutdown() }

        let first = try await setup.session.get(setup.url)
        #expect(first.trust.revocation.first?.source == .ocsp(setup.responder.url("/ocsp")))
        #expect(try setup.metrics.expectCounter(Name.revocationFetches, [("kind", "ocsp"), ("outcome", "success")]).totalValue == 1)
        #expect(try setup.metrics.expectCounter(Name.revocationCacheLookups, [("result", "miss")]).totalValue == 1)
        #expect(setup.metrics.counters(label: Name.revocationCacheLookups, dimensions: [("result", "hit")]).isEmpty)

        // /close ends the connection: a second full handshake, answered from the cache.
        let second = try await setup.session.get(setup.url)
        #expect(second.trust.revocation.first?.fromCache == true)
        #expect(setup.server.acceptedConnections == 2)
        #expect(try setup.metrics.expectCounter(Name.revocationCacheLookups, [("result", "hit")]).totalValue == 1)
        #expect(try setup.metrics.expectCounter(Name.revocationFetches, [("kind", "ocsp"), ("outcome", "success")]).totalValue == 1)
        #expect(try setup.metrics.expectCounter(Name.evaluations, [("evaluator", "RevocationTrustEvaluator"), ("result", "accepted")]).totalValue == 2)
    }

    @Test func aFailedFetchIsCountedWithItsOutcomeWithoutTheStatusCodeAsALabel() async throws {
        let setup = try Setup(answering: nil)
        defer { setup.session.shutdown() }

        let response = try await setup.session.get(setup.url)  // soft-fail: accepted as unknown
        #expect(response.trust.revocation.first?.source == CertificateRevocationResult.Source.none)
        #expect(try setup.metrics.expectCounter(Name.revocationFetches, [("kind", "ocsp"), ("outcome", "fetchHTTPStatus")]).totalValue == 1)
        #expect(setup.metrics.counters(label: Name.revocationFetches, dimensions: [("outcome", "success")]).isEmpty)
        #expect(try setup.metrics.expectCounter(Name.revocationCacheLookups, [("result", "miss")]).totalValue == 1)
    }
}
