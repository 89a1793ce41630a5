/// The hops one request has taken so far: each hop's trust report and signed-response
/// verification, recorded together by `data(for:)` and `stream(_:)` alike.
///
/// The response's overall ``Response/verification`` is derived here rather than taken from the
/// final hop: in informational mode a redirect hop that failed verification is still followed,
/// so its `Location` — where the client went next — is unproven, and whatever the final hop
/// says, the response reached through it is not `.verified` (audit #15, finding 5(a)).
///
/// One array of hop records, not three parallel arrays: the response's ``Response/hops``,
/// ``Response/hopVerifications`` and ``Response/hopAttempts`` are read from it when asked for,
/// so a request allocates one array for its hops, not three.
struct HopLog: Sendable {
    struct Hop: Sendable {
        let report: TrustReport
        let verification: ResponseVerification
        let attempts: Int
    }

    /// Every hop, first request first.
    private(set) var hops: [Hop] = []

    /// Every hop's trust report, first request first.
    var reports: [TrustReport] { hops.map(\.report) }
    /// Every hop's signed-response verification, parallel to ``reports``.
    var verifications: [ResponseVerification] { hops.map(\.verification) }
    /// Every hop's attempts (``Session/RetryPolicy``), parallel to ``reports``.
    var attempts: [Int] { hops.map(\.attempts) }

    var count: Int { hops.count }

    mutating func record(_ report: TrustReport, verification: ResponseVerification, attempts: Int = 1) {
        hops.append(Hop(report: report, verification: verification, attempts: attempts))
    }

    /// The first failing hop's failure; otherwise the final hop's result (`.verified`, or
    /// `.notRequested` when no policy checks the final host). `.notRequested` before any hop.
    var verification: ResponseVerification {
        // One hop, the usual case: its own result, without the search.
        if hops.count == 1 { return hops[0].verification }
        let failure = hops.first {
            if case .failed = $0.verification { true } else { false }
        }
        return failure?.verification ?? hops.last?.verification ?? .notRequested
    }
}
