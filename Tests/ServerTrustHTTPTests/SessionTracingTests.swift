import Foundation
import HTTPTypes
import InMemoryTracing
import Testing
import Tracing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// swift-distributed-tracing through `Session.Configuration.tracer`: a client span per call, a
/// child span per hop with OpenTelemetry's HTTP attributes and a trust-evaluation event, and the
/// hop's context injected into its request headers. Each session has its own in-memory tracer.
@Suite struct SessionTracingTests {
    static let otherHost = "b.servertrust.test"
    static let event = HopObservation.trustEvaluationEvent

    private func redirect(_ fixture: SessionFixture, to url: String) -> URL {
        fixture.url("/redirect/302?to=" + url.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
    }

    @Test func aRedirectedRequestIsOneClientSpanWithAChildSpanPerHopEachWithItsTrustEvent() async throws {
        let fixture = try SessionFixture()
        let otherRoot = try LabPKI.makeRoot(commonName: "Other Root")
        let otherLeaf = try otherRoot.issueLeaf(dnsNames: [Self.otherHost])
        let other = try LocalTLSServer(chain: otherLeaf.chain, privateKeyPEM: otherLeaf.key.pemPrivateKey)
        let tracer = InMemoryTracer()
        var configuration = try fixture.configuration()
        configuration.resolve.append(other.resolveEntry(host: Self.otherHost))
        configuration.anchors = .bundle(try TrustAnchors([fixture.root.certificate, otherRoot.certificate]))
        configuration.tracer = tracer
        let session = try Session(configuration: configuration, trustManager: try ServerTrustManager(evaluators: [
            try HostPattern("*.servertrust.test"): try PinnedKeyHashesTrustEvaluator(pins: [fixture.intermediatePin]),
            try HostPattern(Self.otherHost): DefaultTrustEvaluator(),
        ]))
        defer { session.shutdown() }

        let target = other.url("/status/200?token=secret", host: Self.otherHost)
        let response = try await session.get(redirect(fixture, to: target).absoluteString)
        #expect(response.status == 200)

        let spans = tracer.finishedSpans
        #expect(spans.map(\.operationName) == ["GET", "GET", "HTTP GET"])
        let (first, second, request) = (spans[0], spans[1], spans[2])
        #expect(spans.allSatisfy { $0.kind == .client && $0.traceID == request.traceID })
        #expect(request.parentSpanID == nil)
        #expect(first.parentSpanID == request.spanID && second.parentSpanID == request.spanID)

        #expect(first.attributes.get("http.request.method") == .string("GET"))
        #expect(first.attributes.get("server.address") == .string(SessionFixture.host))
        #expect(first.attributes.get("server.port") == .int64(Int64(fixture.server.port)))
        #expect(first.attributes.get("url.full") == .string("https://\(SessionFixture.host):\(fixture.server.port)/redirect/302"))
        #expect(first.attributes.get("http.response.status_code") == .int64(302))
        #expect(first.attributes.get("network.protocol.version") == .string("2") || first.attributes.get("network.protocol.version") == .string("1.1"))
        #expect(first.attributes.get("http.request.resend_count") == nil)
        #expect(second.attributes.get("server.address") == .string(Self.otherHost))
        #expect(second.attributes.get("url.full") == .string("https://\(Self.otherHost):\(other.port)/status/200"))  // no query
        #expect(second.attributes.get("http.response.status_code") == .int64(200))
        #expect(second.attributes.get("http.request.resend_count") == .int64(1))
        #expect(request.attributes.get("http.response.status_code") == .int64(200))
        #expect(spans.allSatisfy { $0.status == nil && $0.errors.isEmpty })

        #expect(first.events.map(\.name) == [Self.event])
        #expect(first.events.first?.attributes == [
            "servertrust.trust.host": .string(SessionFixture.host),
            "servertrust.trust.matched_pattern": .string("*.servertrust.test"),
            "servertrust.trust.evaluator": .string("PinnedKeyHashesTrustEvaluator"),
            "servertrust.trust.result": .string("accepted"),
        ])
        #expect(second.events.first?.attributes == [
            "servertrust.trust.host": .string(Self.otherHost),
            "servertrust.trust.matched_pattern": .string(Self.otherHost),
            "servertrust.trust.evaluator": .string("DefaultTrustEvaluator"),
            "servertrust.trust.result": .string("accepted"),
        ])
        #expect(request.events.isEmpty)
    }

    @Test func aRejectedHopCarriesTheRejectionEventAndBothSpansEndInError() async throws {
        let fixture = try SessionFixture()
        let tracer = InMemoryTracer()
        let session = try fixture.session([SessionFixture.host: try PinnedKeyHashesTrustEvaluator(pins: [SessionFixture.unrelatedPin])]) {
            $0.tracer = tracer
        }
        defer { session.shutdown() }

        let error = await outcome { try await session.get(fixture.url("/status/200").absoluteString) }.sessionError
        #expect(error?.code == .trustEvaluationFailed)
        let spans = tracer.finishedSpans
        #expect(spans.map(\.operationName) == ["GET", "HTTP GET"])
        #expect(spans.allSatisfy { $0.status?.code == .error && $0.errors.count == 1 })
        #expect(spans.allSatisfy { $0.attributes.get("error.type") == .string("trustEvaluationFailed") })
        #expect(spans[0].attributes.get("http.response.status_code") == nil)
        #expect(spans[0].events.first?.attributes == [
            "servertrust.trust.host": .string(SessionFixture.host),
            "servertrust.trust.matched_pattern": .string(SessionFixture.host),
            "servertrust.trust.evaluator": .string("PinnedKeyHashesTrustEvaluator"),
            "servertrust.trust.result": .string("rejected"),
            "servertrust.trust.failure_code": .string("pinMismatch"),
        ])
    }

    @Test func withoutAConfiguredTracerTheScopesTracerRecordsAndOutsideItNothingIs() async throws {
        // No configuration.tracer: the session asks the instrumentation system per request,
        // and skips the search only when the active instrument is NoOpInstrument.
        let fixture = try SessionFixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        #expect(RequestObservation.activeTracer == nil)
        let tracer = InMemoryTracer()
        let response = try await withTracer(tracer) {
            #expect(RequestObservation.activeTracer is InMemoryTracer)
            return try await session.get(fixture.url("/status/200").absoluteString)
        }
        #expect(response.status == 200)
        #expect(tracer.finishedSpans.map(\.operationName) == ["GET", "HTTP GET"])
        _ = try await session.get(fixture.url("/status/200").absoluteString)
        #expect(tracer.finishedSpans.count == 2)
        #expect(RequestObservation.activeTracer == nil)
    }

    @Test func eachHopSendsItsOwnSpanAsW3CTraceContextAndTheCallerSpanIsTheParent() async throws {
        let fixture = try SessionFixture()
        let tracer = W3CTestTracer()
        let session = try fixture.session { $0.tracer = tracer }
        defer { session.shutdown() }
        let stale = "00-0123456789abcdef0123456789abcdef-0123456789abcdef-01"

        let response = try await tracer.withSpan("caller") { _ in
            try await session.data(for: Request(url: redirect(fixture, to: fixture.url("/headers").absoluteString), headers: [HTTPField.Name("traceparent")!: stale]))
        }
        let spans = tracer.recorded.finishedSpans
        #expect(spans.map(\.operationName) == ["GET", "GET", "HTTP GET", "caller"])
        let (secondHop, request, caller) = (spans[1], spans[2], spans[3])
        #expect(request.parentSpanID == caller.spanID)
        // The server saw one traceparent, the final hop's: not the caller's stale one, not hop 1's.
        let received = response.text.split(separator: "\n").filter { $0.lowercased().hasPrefix("traceparent:") }
        #expect(received == ["traceparent: 00-\(secondHop.traceID)-\(secondHop.spanID)-01"])
        #expect(secondHop.traceID.count == 32 && secondHop.spanID.count == 16)
    }

    @Test func theTracersOwnPropagationFieldsCarryTheHopSpan() async throws {
        let fixture = try SessionFixture()
        let tracer = InMemoryTracer()
        let session = try fixture.session { $0.tracer = tracer }
        defer { session.shutdown() }

        let response = try await session.get(fixture.url("/headers").absoluteString)
        let hop = try #require(tracer.finishedSpans.first)
        #expect(hop.operationName == "GET")
        #expect(response.text.contains("\(InMemoryTracer.traceIDKey): \(hop.traceID)\n"))
        #expect(response.text.contains("\(InMemoryTracer.spanIDKey): \(hop.spanID)\n"))
    }

    @Test func withoutATracerNoSpanIsStartedAndNoHeaderIsAdded() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        let mine = "00-0123456789abcdef0123456789abcdef-0123456789abcdef-01"

        let bare = try await session.get(fixture.url("/headers").absoluteString)
        #expect(!bare.text.lowercased().contains("traceparent"))
        #expect(!bare.text.contains("in-memory"))
        // The caller's own field goes out untouched.
        let own = try await session.data(for: Request(url: fixture.url("/headers"), headers: [HTTPField.Name("traceparent")!: mine]))
        #expect(own.text.contains("traceparent: \(mine)\n"))
    }

    @Test func credentialsAndQueriesNeverReachASpan() async throws {
        let fixture = try SessionFixture()
        let tracer = InMemoryTracer()
        let session = try fixture.session { $0.tracer = tracer }
        defer { session.shutdown() }

        let url = "https://user:hunter2@\(SessionFixture.host):\(fixture.server.port)/status/200?token=t0ps3cret#part"
        _ = try await session.get(url)
        let expected = SpanAttribute.string("https://\(SessionFixture.host):\(fixture.server.port)/status/200")
        #expect(tracer.finishedSpans.count == 2)
        #expect(tracer.finishedSpans.allSatisfy { $0.attributes.get("url.full") == expected })
    }

    @Test func aStreamIsTracedUntilItsHeadArrives() async throws {
        let fixture = try SessionFixture()
        let tracer = InMemoryTracer()
        let session = try fixture.session { $0.tracer = tracer }
        defer { session.shutdown() }

        let response = try await session.stream(Request(url: fixture.url("/large/1000")))
        #expect(tracer.finishedSpans.map(\.operationName) == ["GET", "HTTP GET"])
        #expect(tracer.finishedSpans.first?.events.map(\.name) == [Self.event])
        _ = try await response.body.collect(upTo: 2000)
    }
}
