/// Counters for what trust evaluation and failure reporting did, safe to update from any
/// thread (handshakes run on a session's loop thread, reports on the reporter's task).
///
/// Share one instance between a ``PeerTrust`` consumer (a session) and its reporter, and read
/// a ``Snapshot`` to export them to a metrics system. Counts only grow.
public final class TrustCounters: Sendable {
    /// The counts at one instant.
    public struct Snapshot: Hashable, Sendable {
        /// Trust evaluations run (full handshakes and connection-guard re-evaluations).
        public var evaluations = 0
        /// Rejections and report-only failures, by `TrustError.Code` description
        /// (`pinMismatch`, `revoked`, `pinSetExpired`, `canaryDisagreement`…).
        public var failuresByReason: [String: Int] = [:]
        /// Failure reports delivered to a report URI (2xx answer).
        public var reportsSent = 0
        /// Failure reports given up: queue full, identical report already sent within 24 h
        /// (``reportsSuppressed``) is *not* counted here; delivery errors are.
        public var reportsDropped = 0
        /// Failure reports not queued because an identical one was sent within the last 24 h.
        public var reportsSuppressed = 0

        public init() {}

        /// All failures, whatever their reason.
        public var failures: Int { failuresByReason.values.reduce(0, +) }
    }

    private let state = Locked(Snapshot())

    public init() {}

    public var snapshot: Snapshot { state.withLock { $0 } }

    package func recordEvaluation() { state.withLock { $0.evaluations += 1 } }
    package func recordFailure(_ code: TrustError.Code) { state.withLock { $0.failuresByReason[code.description, default: 0] += 1 } }
    package func recordReportSent() { state.withLock { $0.reportsSent += 1 } }
    package func recordReportDropped() { state.withLock { $0.reportsDropped += 1 } }
    package func recordReportSuppressed() { state.withLock { $0.reportsSuppressed += 1 } }
}
