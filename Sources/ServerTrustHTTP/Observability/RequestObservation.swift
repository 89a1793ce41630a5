import Foundation
import ServerTrust
import Tracing

/// One `data(for:)` or `stream(_:)` call as metrics and traces see it: its span (kind
/// `client`, named `HTTP {method}`), one child span per hop, and the request counters and
/// timer recorded when it ends.
///
/// With no tracer (swift-distributed-tracing's `NoOpTracer`) no span is started at all, and with
/// no metrics backend nothing is timed: a session without either pays two nil checks per
/// request and per hop.
struct RequestObservation {
    private let metrics: SessionMetrics?
    private let tracer: (any Tracer)?
    private let span: (any Span)?
    private let method: String
    // Fast path: docs/PERFORMANCE.md#fast-paths, "Fewer frames and copies per request".
    /// When the call started, as the time since ``origin``; nil without metrics.
    ///
    /// A `Duration`, not a `ContinuousClock.Instant`: the instant is a resilient type of the
    /// standard library (not `@frozen`), so a struct holding one has no size known at compile
    /// time. `data(for:)` keeps this observation across its awaits, and a value of unknown size
    /// there cost a task allocation, a metadata look-up and value-witness copies and destroys
    /// on every request, metrics or not. `Duration` is frozen.
    private let start: Duration?

    /// The instant ``start`` is counted from (the first observation's, or any earlier one's).
    private static let origin = ContinuousClock.now

    // Fast path: docs/PERFORMANCE.md#fast-paths, "No tracer without its search".
    /// `InstrumentationSystem.tracer`, or nil — no tracer — without its search when nothing is
    /// bootstrapped or bound: the active instrument (a `withTracer` scope's, else the
    /// bootstrapped one) is then `NoOpInstrument`, a concrete-type check, where the search casts
    /// it to `any Tracer` twice, and nil spares `RequestObservation` its own `NoOpTracer` check. Anything else — a tracer, a
    /// multiplexing instrument — takes the library's own lookup.
    static var activeTracer: (any Tracer)? {
        // A metatype comparison, not `is NoOpInstrument` (a dynamic cast): `NoOpInstrument` is
        // a struct, so the two agree.
        type(of: InstrumentationSystem.instrument) == NoOpInstrument.self ? nil : InstrumentationSystem.tracer
    }

    /// `tracer` nil or a `NoOpTracer`: no spans.
    init(_ request: Request, metrics: SessionMetrics?, tracer: (any Tracer)?) {
        self.metrics = metrics
        method = request.method.rawValue  // bounded and upper-cased only when a metric or span needs it
        start = metrics == nil ? nil : Self.origin.duration(to: .now)
        guard let tracer, !(tracer is NoOpTracer) else {
            self.tracer = nil
            span = nil
            return
        }
        self.tracer = tracer
        let method = SessionMetrics.boundedMethod(method)
        let span = tracer.startSpan("HTTP \(method)", context: ServiceContext.current ?? .topLevel, ofKind: .client)
        if span.isRecording {
            span.updateAttributes { attributes in
                attributes["http.request.method"] = method
                attributes["url.full"] = URLRedaction.redacted(request.url)
                attributes["server.address"] = request.url.host ?? ""
                attributes["server.port"] = SpanURL.port(of: request.url)
            }
        }
        self.span = span
    }

    /// Starts the span of hop `index` (0 for the first request, then one per redirect) as a
    /// child of the request's span, and injects its context into the hop's headers through
    /// the tracer (W3C `traceparent` with an OpenTelemetry tracer), replacing any field of the
    /// same name. Each hop injects its own span, so a redirect target never sees another hop's.
    /// Whether each hop gets a span of its own (a tracer is set).
    var tracesHops: Bool { span != nil }

    func startHop(_ request: inout Request, index: Int) -> HopObservation {
        guard let tracer, let span else { return HopObservation(span: nil) }
        let hop = tracer.startSpan(SessionMetrics.boundedMethod(request.method.rawValue), context: span.context, ofKind: .client)
        tracer.inject(hop.context, into: &request.headers, using: HeaderFieldInjector())
        if hop.isRecording {
            let url = request.url
            hop.updateAttributes { attributes in
                attributes["http.request.method"] = SessionMetrics.boundedMethod(request.method.rawValue)
                attributes["url.full"] = URLRedaction.redacted(url)
                attributes["server.address"] = url.host ?? ""
                attributes["server.port"] = SpanURL.port(of: url)
                if index > 0 { attributes["http.request.resend_count"] = index }
            }
        }
        return HopObservation(span: hop)
    }

    /// Ends the call with its response (status of the final hop).
    func succeeded(status: Int) {
        metrics?.requestFinished(method: method, error: nil, nanoseconds: elapsed)
        guard let span else { return }
        span.attributes["http.response.status_code"] = status
        if status >= 400 {
            span.attributes["error.type"] = String(status)
            span.setStatus(SpanStatus(code: .error))
        }
        span.end()
    }

    /// Ends the call with the error it throws, and returns that error.
    func failed(_ error: any Error) -> any Error {
        metrics?.requestFinished(method: method, error: error, nanoseconds: elapsed)
        guard let span else { return error }
        span.attributes["error.type"] = SessionMetrics.code(of: error)
        span.recordError(error)
        span.setStatus(SpanStatus(code: .error, message: (error as? SessionError)?.reason ?? "\(error)"))
        span.end()
        return error
    }

    private var elapsed: Int64 {
        guard let start else { return 0 }
        let (seconds, attoseconds) = (Self.origin.duration(to: .now) - start).components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
