import Foundation
import Tracing

extension Session {
    /// Starts observing one call: metrics per ``Configuration/metricsFactory``, a span per
    /// ``Configuration/tracer``.
    func observe(_ request: Request) -> RequestObservation {
        RequestObservation(request, metrics: metrics, tracer: hasConfiguredTracer ? configuration.tracer : Self.activeTracer)
    }

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
}
