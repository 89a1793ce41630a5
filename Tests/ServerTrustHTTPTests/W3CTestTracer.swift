import InMemoryTracing
import Tracing

/// swift-distributed-tracing's `InMemoryTracer` with W3C Trace Context propagation: 32- and
/// 16-hex-digit IDs, and `inject` writing `traceparent: 00-{trace-id}-{span-id}-01`, as an
/// OpenTelemetry tracer does. (`InMemoryTracer` itself injects `in-memory-trace-id` and
/// `in-memory-span-id`.) The spans are the in-memory tracer's, read through ``recorded``.
struct W3CTestTracer: Tracer {
    let recorded = InMemoryTracer(idGenerator: .init(
        nextTraceID: { Self.hex(bytes: 16) }, nextSpanID: { Self.hex(bytes: 8) }))

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> InMemorySpan {
        recorded.startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Carrier == Inject.Carrier {
        guard let span = context.inMemorySpanContext else { return }
        injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
    }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Carrier == Extract.Carrier {}

    private static func hex(bytes: Int) -> String {
        (0..<bytes).map { _ in
            let byte = UInt8.random(in: 0...255)
            return String(byte >> 4, radix: 16) + String(byte & 0xF, radix: 16)
        }.joined()
    }
}
