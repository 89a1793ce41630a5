/// The hops one request has taken so far: each hop's trust report and signed-response
/// verification, recorded together by `data(for:)` and `stream(_:)` alike.
///
/// The response's overall ``Response/verification`` is derived here rather than taken from the
/// final hop: in informational mode a redirect hop that failed verification is still followed,
/// so its `Location` — where the client went next — is unproven, and whatever the final hop
/// says, the response reached through it is not `.verified` (audit #15, finding 5(a)).
///
/// Hop records, not three parallel arrays: the response's ``Response/hops``,
/// ``Response/hopVerifications`` and ``Response/hopAttempts`` are made from them when asked
/// for. The first hop is kept inline and only redirects go to an array, so a request that is
/// not redirected — most of them — allocates nothing here (docs/PERFORMANCE.md).
struct HopLog: Sendable {
    struct Hop: Sendable {
        let report: TrustReport
        let verification: ResponseVerification
        let attempts: Int
    }

    /// The first hop, nil before any.
    private var first: Hop?
    /// Every hop after the first (redirects), in order.
    private var redirects: [Hop] = []

    /// Every hop, first request first.
    var hops: [Hop] { first.map { [$0] + redirects } ?? [] }

    /// Every hop's trust report, first request first.
    var reports: [TrustReport] { hops.map(\.report) }
    /// Every hop's signed-response verification, parallel to ``reports``.
    var verifications: [ResponseVerification] { hops.map(\.verification) }
    /// Every hop's attempts (``Session/RetryPolicy``), parallel to ``reports``.
    var attempts: [Int] { hops.map(\.attempts) }

    var count: Int { first == nil ? 0 : 1 + redirects.count }

    mutating func record(_ report: TrustReport, verification: ResponseVerification, attempts: Int = 1) {
        let hop = Hop(report: report, verification: verification, attempts: attempts)
        if first == nil { first = hop } else { redirects.append(hop) }
    }

    /// The first failing hop's failure; otherwise the final hop's result (`.verified`, or
    /// `.notRequested` when no policy checks the final host). `.notRequested` before any hop.
    var verification: ResponseVerification {
        guard let first else { return .notRequested }
        if case .failed = first.verification { return first.verification }
        let failure = redirects.first {
            if case .failed = $0.verification { true } else { false }
        }
        return failure?.verification ?? redirects.last?.verification ?? first.verification
    }
}
