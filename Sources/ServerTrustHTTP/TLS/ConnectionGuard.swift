import Foundation

/// What the connection guard decides before a request is sent on a connection: a pure
/// function of the connection's stamp and this transfer's policy, so the rule can be read and
/// tested apart from libcurl and OpenSSL. ``Transfer/admitConnection(disableGuard:)`` gathers
/// the inputs (the `SSL*`'s stamp, the peer chain and staple) and carries the verdict out.
///
/// Whatever the connection's history — new, reused, resumed, or a stream multiplexed onto a
/// connection another transfer opened — a request goes out only if the connection carries this
/// policy's unexpired stamp, or its peer chain passes this policy now. Two connections are
/// refused for a retry on a new connection instead, as re-evaluating them would judge stale
/// material: one whose stamp has expired (what its evaluation relied on may have changed: the
/// server's certificate, its staple, our pins), and a resumed session that brought no staple
/// for a must-staple leaf under a policy that reads staples.
enum ConnectionGuard {
    /// Why a connection is refused for a retry on a new one.
    enum RetryReason: Sendable {
        /// The connection's stamp expired (``EvaluationRecord/expiry``).
        case expired
        /// A resumed session without a staple, for a must-staple leaf under a policy that reads staples.
        case resumedWithoutStaple
    }

    /// The verdict from the stamp alone.
    enum Verdict {
        /// The connection carries this policy's unexpired stamp: send, reporting its evaluation.
        case admit(EvaluationRecord)
        /// Refuse, and send the request again on a new connection.
        case refuseForRetry(RetryReason)
        /// Evaluate the peer chain under this policy now; a stamp it had bounds the new one's expiry.
        case evaluate(notAfter: Date?)
    }

    /// The verdict for a connection stamped with `record` (nil: never accepted under any policy).
    ///
    /// - Parameters:
    ///   - record: the connection's stamp.
    ///   - policyID: this transfer's policy.
    ///   - now: the policy's clock.
    ///   - isOnFreshConnection: whether this attempt already runs on a connection opened for it
    ///     (a retry): an expired stamp there is evaluated, not refused again.
    static func verdict(record: EvaluationRecord?, policyID: UInt64, now: Date, isOnFreshConnection: Bool) -> Verdict {
        let expired = record.map { now >= $0.expiry } ?? false
        if let record, record.policyID == policyID, !expired { return .admit(record) }
        if expired && !isOnFreshConnection { return .refuseForRetry(.expired) }
        // A re-evaluation under another policy never makes a connection live longer than its
        // first stamp allowed.
        return .evaluate(notAfter: expired ? nil : record?.expiry)
    }

    /// Before evaluating: a resumed session that brought no staple for a must-staple leaf,
    /// under a policy that reads staples, is refused for a full handshake (which carries one)
    /// rather than judged without its staple.
    static func refusalBeforeEvaluating(
        hasStaple: Bool, isResumed: Bool, policyReadsStaples: Bool, leafRequiresStaple: Bool, isOnFreshConnection: Bool
    ) -> RetryReason? {
        guard !hasStaple, !isOnFreshConnection, isResumed, policyReadsStaples, leafRequiresStaple else { return nil }
        return .resumedWithoutStaple
    }
}
