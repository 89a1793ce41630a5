/// The hops one request has taken so far: each hop's trust report and signed-response
/// verification, recorded together by `data(for:)` and `stream(_:)` alike.
///
/// The response's overall ``Response/verification`` is derived here rather than taken from the
/// final hop: in informational mode a redirect hop that failed verification is still followed,
/// so its `Location` — where the client went next — is unproven, and whatever the final hop
/// says, the response reached through it is not `.verified` (audit #15, finding 5(a)).
struct HopLog {
    /// Every hop's trust report, first request first.
    private(set) var reports: [TrustReport] = []
    /// Every hop's signed-response verification, parallel to ``reports``.
    private(set) var verifications: [ResponseVerification] = []
    /// Every hop's attempts (``Session/RetryPolicy``), parallel to ``reports``.
    private(set) var attempts: [Int] = []

    var count: Int { reports.count }

    mutating func record(_ report: TrustReport, verification: ResponseVerification, attempts: Int = 1) {
        reports.append(report)
        verifications.append(verification)
        self.attempts.append(attempts)
    }

    /// The first failing hop's failure; otherwise the final hop's result (`.verified`, or
    /// `.notRequested` when no policy checks the final host). `.notRequested` before any hop.
    var verification: ResponseVerification {
        let failure = verifications.first {
            if case .failed = $0 { true } else { false }
        }
        return failure ?? verifications.last ?? .notRequested
    }
}
