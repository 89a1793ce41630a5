import Foundation
import ServerTrust

/// The text lines of a Certificate Transparency outcome, the same in `verify`, `fetch` and
/// `inspect`: the result and mode, then one line per SCT with its source, log, operator,
/// timestamp and status. What was missing (the report's `detail`) is the caller's to print: a
/// warning or the rejection names it.
enum CTText {
    static func lines(_ report: CertificateTransparencyReport) -> [String] {
        var lines = ["certificate transparency: \(report.reason ?? "compliant") (\(report.mode))"]
        lines += report.scts.map { "  sct: " + line($0) }
        return lines
    }

    /// `SOURCE from LOG (OPERATOR) at TIME: STATUS`, or `unknown log ID` for a log the list lacks.
    static func line(_ sct: CertificateTransparencyReport.SCT) -> String {
        "\(sct.source) from \(sct.log.map { "\($0) (\(sct.operator ?? "?"))" } ?? "unknown log \(sct.logID)") "
            + "at \(JSONText.date(sct.timestamp)): \(sct.status)"
    }

    /// An SCT read without a log list: `SOURCE from log ID at TIME`.
    static func line(_ sct: SignedCertificateTimestamp) -> String {
        "\(sct.source) from log \(sct.logIDBase64) at \(JSONText.date(sct.timestamp))"
    }
}
