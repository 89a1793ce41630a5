import Foundation
internal import ServerTrust

/// Where a session hands the rejections and findings of a hop's evaluation: its
/// ``Session/Configuration/failureReporter`` (RFC 7469-style reports) and its
/// ``Session/Configuration/onTrustFailure`` hook.
struct TrustFailureDelivery: Sendable {
    let reporter: TrustFailureReporter?
    let hook: (@Sendable (TrustFailureEvent) -> Void)?
    // Fast path: docs/PERFORMANCE.md#fast-paths, "Fewer frames and copies per request".
    /// Whether there is a reporter or a hook, decided once: without either, the hop driver does
    /// not hand a hop's report to ``deliver(_:url:)``.
    let isActive: Bool

    init(_ configuration: Session.Configuration) {
        (reporter, hook) = (configuration.failureReporter, configuration.onTrustFailure)
        isActive = reporter != nil || hook != nil
    }

    /// Runs one hop; when trust evaluation rejected it, reports the rejection before rethrowing.
    nonisolated(nonsending) func reporting<T>(url: URL, _ hop: nonisolated(nonsending) () async throws -> T) async throws -> T {
        do {
            return try await hop()
        } catch let error as SessionError {
            if let rejected = error.rejectedTrust { deliver(rejected, url: url) }
            throw error
        }
    }

    /// Reports the rejection and the findings of one hop's evaluation to the reporter and the
    /// hook. Never throws, never waits: delivery runs on the reporter's own task.
    ///
    /// Nothing to do without a reporter or a hook (``isActive``): the hop driver asks that first.
    func deliver(_ report: TrustReport, url: URL) {
        guard isActive else { return }
        var failures = report.findings.map { ($0.error, $0.mode) }
        if let failure = report.failure, report.result != .notRequested { failures.append((failure, .enforced)) }
        guard !failures.isEmpty else { return }
        let port = url.port ?? (url.scheme?.lowercased() == "http" ? 80 : 443)
        let now = reporter?.configuration.clock() ?? Date()
        for (error, mode) in failures {
            let failureReport = TrustFailureReport(
                failure: error, mode: mode, policy: report.hostPolicy, hostname: report.host, port: port,
                pattern: report.matchedPattern, servedChain: report.presentedCertificates,
                validatedChain: report.validatedCertificates, date: now)
            let submission = reporter?.submit(failureReport, hostURIs: report.hostReportURIs) ?? .noReportURI
            hook?(TrustFailureEvent(url: url, report: failureReport, submission: submission))
        }
    }
}
