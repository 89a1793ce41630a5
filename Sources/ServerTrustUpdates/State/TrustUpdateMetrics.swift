import CoreMetrics

/// The trust update client's metrics: `servertrust_trust_updates_total{outcome}`,
/// `servertrust_trust_update_generation`, `servertrust_trust_update_consecutive_failures` and
/// `servertrust_trust_update_in_force{state}`, recorded from a status.
struct TrustUpdateMetrics: Sendable {
    /// Where they are recorded; nil for the global factory (`MetricsSystem.factory`), read at
    /// each record so that a factory bootstrapped later counts.
    let factory: (any MetricsFactory)?

    func record(_ status: TrustUpdateStatus) {
        let factory = factory ?? MetricsSystem.factory
        if let outcome = status.lastOutcome {
            Counter(label: "servertrust_trust_updates_total", dimensions: [("outcome", outcome.rawValue)], factory: factory).increment()
        }
        Gauge(label: "servertrust_trust_update_generation", factory: factory).record(Int64(clamping: status.generation))
        Gauge(label: "servertrust_trust_update_consecutive_failures", factory: factory).record(status.consecutiveFailures)
        Gauge(label: "servertrust_trust_update_in_force", dimensions: [("state", status.inForce.rawValue)], factory: factory).record(1)
    }
}
