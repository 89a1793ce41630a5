public import Foundation
public import ServerTrust

/// One trust failure seen by a session, as passed to ``Session/Configuration/onTrustFailure``:
/// an enforced rejection (the request throws), or a report-only failure or canary disagreement
/// (the response is returned).
public struct TrustFailureEvent: Sendable, CustomStringConvertible {
    /// The URL of the hop whose connection failed, whole; ``description`` shows it without
    /// user-info, query or fragment.
    public let url: URL
    /// The report, as sent (or as it would be sent) to the report URIs.
    public let report: TrustFailureReport
    /// What the session's ``TrustFailureReporter`` did with it; ``TrustFailureReporter/Submission/noReportURI``
    /// when the session has no reporter.
    public let submission: TrustFailureReporter.Submission

    /// The mode, the URL without user-info, query or fragment, the reason and what became of
    /// the report.
    public var description: String {
        "\(report.mode) trust failure for \(URLRedaction.redacted(url)): \(report.reason): \(report.message) (\(submission))"
    }
}
