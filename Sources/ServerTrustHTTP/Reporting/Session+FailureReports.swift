import Foundation
internal import ServerTrust

/// The rejections and findings of a hop's evaluation, handed to the session's
/// ``Session/Configuration/failureReporter`` (RFC 7469-style reports) and its
/// ``Session/Configuration/onTrustFailure`` hook.
extension Session {
    /// Runs one hop; when trust evaluation rejected it, reports the rejection before rethrowing.
    nonisolated(nonsending) func reportingTrustFailures<T>(url: URL, _ hop: nonisolated(nonsending) () async throws -> T) async throws -> T {
        do {
            return try await hop()
        } catch let error as SessionError {
            if let rejected = error.rejectedTrust { reportTrustFailures(of: rejected, url: url) }
            throw error
        }
    }

    /// Reports the rejection and the findings of one hop's evaluation to the reporter and the
    /// hook. Never throws, never waits: delivery runs on the reporter's own task.
    ///
    /// Nothing to do without a reporter or a hook (``reportsTrustFailures``): the hop driver
    /// asks that first.
    func reportTrustFailures(of report: TrustReport, url: URL) {
        let reporter = configuration.failureReporter
        let hook = configuration.onTrustFailure
        guard reporter != nil || hook != nil else { return }
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
