import Foundation
import HTTPTypes
import MetricsTestKit
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// swift-metrics through `Session.Configuration.metricsFactory`: exact names, labels and counts,
/// each session with its own `TestMetrics` (no global bootstrap, so tests run in parallel).
@Suite struct SessionMetricsTests {
    typealias Name = SessionMetrics.Name

    private func session(
        _ fixture: SessionFixture, _ metrics: TestMetrics, evaluator: any ServerTrustEvaluating,
        configure: (inout Session.Configuration) -> Void = { _ in }
    ) throws -> Session {
        try fixture.session([SessionFixture.host: evaluator]) {
            $0.metricsFactory = metrics
            configure(&$0)
        }
    }

    @Test func aRequestIsCountedAndTimedAndItsHandshakeIsTimedOnlyOnTheNewConnection() async throws {
        let fixture = try SessionFixture()
        let metrics = TestMetrics()
        let session = try session(fixture, metrics, evaluator: try PinnedKeyHashesTrustEvaluator(pins: [fixture.intermediatePin])) {
            $0.httpVersion = .http1_1
        }
        defer { session.shutdown() }

        let clock = ContinuousClock()
        let around = try await clock.measure { _ = try await session.get(fixture.url("/status/200").absoluteString) }
        #expect(try metrics.expectCounter(Name.requests, [("method", "GET"), ("outcome", "success")]).totalValue == 1)
        let timed = try metrics.expectTimer(Name.requestDuration, [("method", "GET"), ("outcome", "success")]).values
        #expect(timed.count == 1)
        // The call's own time: more than nothing, and no more than the time around it.
        let (seconds, attoseconds) = around.components
        #expect(timed.allSatisfy { $0 > 0 && $0 <= seconds * 1_000_000_000 + attoseconds / 1_000_000_000 })
        #expect(try metrics.expectCounter(Name.evaluations, [("evaluator", "PinnedKeyHashesTrustEvaluator"), ("result", "accepted")]).totalValue == 1)
        #expect(try metrics.expectTimer(Name.handshakeDuration).values.count == 1)
        #expect(metrics.counters(label: Name.requestFailures).isEmpty)
        #expect(metrics.counters(label: Name.trustFailures).isEmpty)

        // Kept alive: the second request makes no handshake and runs no new evaluation.
        _ = try await session.data(for: Request(method: .post, url: fixture.url("/echo"), body: Array("x".utf8)))
        #expect(fixture.server.acceptedConnections == 1)
        #expect(try metrics.expectCounter(Name.requests, [("method", "POST"), ("outcome", "success")]).totalValue == 1)
        #expect(try metrics.expectTimer(Name.handshakeDuration).values.count == 1)
        #expect(try metrics.expectCounter(Name.evaluations, [("evaluator", "PinnedKeyHashesTrustEvaluator"), ("result", "accepted")]).totalValue == 1)
        // The names are bounded: no host, URL or path in any label.
        let labelValues = (metrics.counters.flatMap(\.dimensions) + metrics.timers.flatMap(\.dimensions)).map(\.1)
        #expect(!labelValues.contains { $0.contains("servertrust.test") || $0.contains("/") })
    }

    @Test func aPinMismatchIsCountedAsARejectionByEvaluatorAndAFailureByCode() async throws {
        let fixture = try SessionFixture()
        let metrics = TestMetrics()
        let session = try session(fixture, metrics, evaluator: try PinnedKeyHashesTrustEvaluator(pins: [SessionFixture.unrelatedPin]))
        defer { session.shutdown() }

        let error = await outcome { try await session.get(fixture.url("/status/200").absoluteString) }.sessionError
        #expect(error?.code == .trustEvaluationFailed)
        #expect(try metrics.expectCounter(Name.evaluations, [("evaluator", "PinnedKeyHashesTrustEvaluator"), ("result", "rejected")]).totalValue == 1)
        #expect(
            try metrics.expectCounter(
                Name.trustFailures, [("evaluator", "PinnedKeyHashesTrustEvaluator"), ("reason", "pinMismatch"), ("mode", "enforced")]
            ).totalValue == 1)
        #expect(try metrics.expectCounter(Name.requests, [("method", "GET"), ("outcome", "failure")]).totalValue == 1)
        #expect(try metrics.expectCounter(Name.requestFailures, [("method", "GET"), ("code", "trustEvaluationFailed")]).totalValue == 1)
        #expect(try metrics.expectTimer(Name.requestDuration, [("method", "GET"), ("outcome", "failure")]).values.count == 1)
        // The handshake was aborted by the rejection: nothing completed, nothing timed.
        #expect(metrics.timers(label: Name.handshakeDuration).isEmpty)
        // TrustCounters, the in-process snapshot, counts the same events.
        #expect(session.counters.snapshot.evaluations == 1)
        #expect(session.counters.snapshot.failuresByReason == ["pinMismatch": 1])
    }

    @Test func aReportOnlyFailureIsCountedWithItsModeWhileTheRequestSucceeds() async throws {
        let fixture = try SessionFixture()
        let metrics = TestMetrics()
        let trial = InformationalTrustEvaluator(try PinnedKeyHashesTrustEvaluator(pins: [SessionFixture.unrelatedPin]))
        let session = try session(fixture, metrics, evaluator: trial)
        defer { session.shutdown() }

        let response = try await session.get(fixture.url("/status/200").absoluteString)
        #expect(response.status == 200)
        let evaluator = "InformationalTrustEvaluator(PinnedKeyHashesTrustEvaluator)"
        #expect(try metrics.expectCounter(Name.evaluations, [("evaluator", evaluator), ("result", "accepted")]).totalValue == 1)
        #expect(
            try metrics.expectCounter(Name.trustFailures, [("evaluator", evaluator), ("reason", "pinMismatch"), ("mode", "informational")])
                .totalValue == 1)
        #expect(try metrics.expectCounter(Name.requests, [("method", "GET"), ("outcome", "success")]).totalValue == 1)
    }

    @Test func failuresAreCountedByTheirSessionErrorCodeAndUnknownMethodsAsOther() async throws {
        let fixture = try SessionFixture()
        let metrics = TestMetrics()
        let session = try session(fixture, metrics, evaluator: DefaultTrustEvaluator()) { $0.maximumResponseBodySize = 100 }
        defer { session.shutdown() }

        let error = await outcome { try await session.data(for: Request(method: HTTPRequest.Method("PURGE")!, url: fixture.url("/large/5000"))) }.sessionError
        #expect(error?.code == .responseTooLarge)
        #expect(try metrics.expectCounter(Name.requestFailures, [("method", "_OTHER"), ("code", "responseTooLarge")]).totalValue == 1)
        #expect(try metrics.expectCounter(Name.requests, [("method", "_OTHER"), ("outcome", "failure")]).totalValue == 1)
    }

    @Test func withoutAMetricsBackendTheSessionMakesNoInstruments() throws {
        let fixture = try SessionFixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        #expect(session.probe.metricsEnabled == false)
        let metered = try fixture.session { $0.metricsFactory = TestMetrics() }
        defer { metered.shutdown() }
        #expect(metered.probe.metricsEnabled)
    }
}
