import Foundation
import InMemoryTracing
import MetricsTestKit
import Testing
import ServerTrustTestSupport
import ServerTrust
@testable import ServerTrustHTTP

/// Metrics and traces against nginx: HTTP/2 connection reuse (one handshake timed for several
/// requests) and live OCSP from `openssl ocsp`, fetched through the session's counted fetcher.
@Suite struct NginxObservabilityInteropTests {
    typealias Name = SessionMetrics.Name

    private func session(
        _ nginx: NginxInterop.Environment, _ evaluator: any ServerTrustEvaluating, metrics: TestMetrics, tracer: InMemoryTracer
    ) throws -> Session {
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try TrustAnchors(contentsOfFile: nginx.root))
        configuration.resolve = nginx.resolve
        configuration.metricsFactory = metrics
        configuration.tracer = tracer
        return try Session(configuration: configuration, trustManager: try ServerTrustManager(evaluators: [try HostPattern(nginx.host): evaluator]))
    }

    @Test func requestsOnAnHTTP2ConnectionTimeItsHandshakeOnceAndReportProtocolVersion2() async throws {
        let nginx = try NginxInterop.environment()
        let metrics = TestMetrics()
        let tracer = InMemoryTracer()
        let session = try session(nginx, try PinnedKeyHashesTrustEvaluator([nginx.ecdsaLeafPin]), metrics: metrics, tracer: tracer)
        defer { session.shutdown() }

        for _ in 0..<3 {
            #expect(try await session.get(nginx.url("TLS13_ECDSA_H2_STAPLED")).httpVersion == "HTTP/2")
        }
        #expect(try metrics.expectCounter(Name.requests, [("method", "GET"), ("outcome", "success")]).totalValue == 3)
        #expect(try metrics.expectTimer(Name.handshakeDuration).values.count == 1)
        #expect(try metrics.expectCounter(Name.evaluations, [("evaluator", "PinnedKeyHashesTrustEvaluator"), ("result", "accepted")]).totalValue == 1)
        let hops = tracer.finishedSpans.filter { $0.operationName == "GET" }
        #expect(hops.count == 3)
        #expect(hops.allSatisfy { $0.attributes.get("network.protocol.version") == .string("2") })
        #expect(hops.allSatisfy { $0.events.first?.attributes.get("servertrust.trust.result") == .string("accepted") })
    }

    @Test func aLiveOCSPQueryToOpenSSLsResponderIsCountedAsAFetchAndAMiss() async throws {
        let nginx = try NginxInterop.environment()
        let metrics = TestMetrics()
        let session = try session(
            nginx, RevocationTrustEvaluator(options: .hardFail, cache: RevocationCache()), metrics: metrics, tracer: InMemoryTracer())
        defer { session.shutdown() }

        let response = try await session.get(nginx.url("TLS13_LIVE_OCSP_GOOD"))
        #expect(response.trust.revocation.first?.source == .ocsp(nginx.ocspResponderURL))
        // One successful fetch; a GET the responder refused first (and was retried by POST) would
        // be counted apart, under its own outcome.
        #expect(try metrics.expectCounter(Name.revocationFetches, [("kind", "ocsp"), ("outcome", "success")]).totalValue == 1)
        #expect(try metrics.expectCounter(Name.revocationCacheLookups, [("result", "miss")]).totalValue == 1)
    }
}
