import Tracing

/// The span of one hop (one request on the wire): its response's attributes, and one
/// `servertrust.trust_evaluation` event describing the evaluation that admitted or rejected
/// its connection. Empty (no span) when the session has no tracer.
struct HopObservation {
    let span: (any Span)?

    /// The hop got a response: status, protocol version and the trust evaluation it ran under.
    func succeeded(status: Int, httpVersion: String, trust: TrustReport) {
        guard let span else { return }
        if span.isRecording {
            span.addEvent(Self.event(for: trust))
            span.attributes["http.response.status_code"] = status
            let version = httpVersion.hasPrefix("HTTP/") ? String(httpVersion.dropFirst(5)) : httpVersion
            if !version.isEmpty { span.attributes["network.protocol.version"] = version }
            if status >= 400 {
                span.attributes["error.type"] = String(status)
                span.setStatus(SpanStatus(code: .error))
            }
        }
        span.end()
    }

    /// The hop failed; when trust evaluation rejected its server, the event says how.
    func failed(_ error: any Error) {
        guard let span else { return }
        if span.isRecording {
            if let rejected = (error as? SessionError)?.rejectedTrust { span.addEvent(Self.event(for: rejected)) }
            span.attributes["error.type"] = SessionMetrics.code(of: error)
        }
        span.recordError(error)
        span.setStatus(SpanStatus(code: .error, message: (error as? SessionError)?.reason ?? "\(error)"))
        span.end()
    }

    /// The name of the event a hop span carries for its trust evaluation.
    static let trustEvaluationEvent = "servertrust.trust_evaluation"

    /// host, matched pattern (when a manager pattern matched), evaluator, result
    /// (`accepted`, `rejected`, `notEvaluated` for plain HTTP), the failure code of a rejection
    /// and the codes of report-only findings.
    static func event(for report: TrustReport) -> SpanEvent {
        var attributes: SpanAttributes = [:]
        attributes["servertrust.trust.host"] = report.host
        if let pattern = report.matchedPattern { attributes["servertrust.trust.matched_pattern"] = pattern.description }
        attributes["servertrust.trust.evaluator"] = report.evaluator
        switch (report.result, report.failure) {
        case (.notRequested, _):
            attributes["servertrust.trust.result"] = "notEvaluated"
        case (_, let failure?):
            attributes["servertrust.trust.result"] = "rejected"
            attributes["servertrust.trust.failure_code"] = failure.code.description
        case (_, nil):
            attributes["servertrust.trust.result"] = "accepted"
        }
        if !report.findings.isEmpty {
            attributes["servertrust.trust.findings"] = SpanAttribute.stringArray(report.findings.map { "\($0.mode):\($0.error.code)" })
        }
        return SpanEvent(name: trustEvaluationEvent, attributes: attributes)
    }
}

extension HopObservation {
    /// Runs the hop; if it throws, ends the span with the error (``failed(_:)``) and rethrows.
    /// On success the caller ends the span with ``succeeded(status:httpVersion:trust:)``.
    nonisolated(nonsending) func observing<T>(_ hop: nonisolated(nonsending) () async throws -> T) async throws -> T {
        do {
            return try await hop()
        } catch {
            failed(error)
            throw error
        }
    }
}
