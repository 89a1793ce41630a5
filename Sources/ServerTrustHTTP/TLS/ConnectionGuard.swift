import Foundation
internal import ServerTrust

/// What the connection guard decides before a request is sent on a connection: a pure
/// function of the connection's stamp and this transfer's policy, so the rule can be read and
/// tested apart from libcurl and OpenSSL. ``Transfer/admitConnection(disableGuard:)`` gathers
/// the inputs (the `SSL*`'s stamp, the chain to evaluate and the staple) and carries the verdict
/// out.
///
/// Whatever the connection's history — new, reused, resumed, or a stream multiplexed onto a
/// connection another transfer opened — a request goes out only if the connection carries this
/// policy's unexpired stamp, or its chain passes this policy now: the chain its own handshake
/// presented, or for a resumed session the chain our validation built at the full handshake
/// that made the session (``chain(isResumed:stampedValidatedChain:storedValidatedChain:isOnFreshConnection:)``).
/// Three connections are refused for a retry on a new connection instead, as re-evaluating them
/// would judge stale or missing material: one whose stamp has expired (what its evaluation
/// relied on may have changed: the server's certificate, its staple, our pins), a resumed
/// session that brought no staple for a must-staple leaf under a policy that reads staples (or
/// a resumed or reused connection without the handshake's SCTs, for a leaf whose embedded SCTs
/// alone fall short of the policy's Certificate Transparency), and a resumed session whose
/// validated chain is not known.
enum ConnectionGuard {
    /// Why a connection is refused for a retry on a new one.
    enum RetryReason: Sendable {
        /// The connection's stamp expired (``EvaluationRecord/expiry``).
        case expired
        /// A resumed session without a staple, for a must-staple leaf under a policy that reads staples.
        case resumedWithoutStaple
        /// A resumed session, or a connection opened under another policy, of a host requiring
        /// Certificate Transparency, without the handshake's SCTs, for a leaf whose embedded SCTs
        /// alone fall short: the rest came in a full handshake under this policy (TLS extension
        /// or staple), which a resumed one does not repeat and another policy may not ask for.
        case withoutHandshakeSCTs
        /// A resumed session whose leaf has no chain validated at a full handshake, neither in
        /// the connection's stamp nor in its session cache's ``ValidatedChainStore``.
        case resumedWithoutValidatedChain
    }

    /// Which chain the guard evaluates.
    enum Chain: Equatable {
        /// The chain the connection's own full handshake presented (`SSL_get_peer_cert_chain`),
        /// to be validated as any presented chain is.
        case presented
        /// A chain our validation built for this session's leaf, to be validated again.
        case validated([Certificate])
        /// None: refuse for a retry on a new connection, with a full handshake.
        case refuseForRetry(RetryReason)
    }

    /// The chain to evaluate on a connection that needs evaluating.
    ///
    /// A resumed session never offers the chain it was made with as the peer sent it: libcurl
    /// 8.10 and later restore sessions serialised, without it, and libcurl 7.88's in-memory copy
    /// is still only what the peer sent. It is evaluated on a chain our own validation built:
    /// the one its stamp recorded (the connection was admitted before, under another policy or
    /// with a stamp now expired), else the one its session cache's store holds for its leaf.
    ///
    /// - Parameters:
    ///   - isResumed: `SSL_session_reused`.
    ///   - stampedValidatedChain: the validated chain of the connection's stamp, if any.
    ///   - storedValidatedChain: the ``ValidatedChainStore``'s chain for the session's leaf, if any.
    ///   - isOnFreshConnection: whether this attempt is already the retry; with none to offer, it
    ///     is evaluated on no chain and refused (a retry disables resumption, so it never is).
    static func chain(
        isResumed: Bool, stampedValidatedChain: [Certificate]?, storedValidatedChain: [Certificate]?, isOnFreshConnection: Bool
    ) -> Chain {
        guard isResumed else { return .presented }
        if let chain = stampedValidatedChain, !chain.isEmpty { return .validated(chain) }
        if let chain = storedValidatedChain, !chain.isEmpty { return .validated(chain) }
        return isOnFreshConnection ? .validated([]) : .refuseForRetry(.resumedWithoutValidatedChain)
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

    /// Before evaluating, for a host requiring Certificate Transparency: a resumed session
    /// carries neither the TLS extension's SCTs nor a staple, and a connection opened under
    /// another policy may not have asked for them; so one whose leaf's embedded SCTs do not meet
    /// the policy on their own is refused for a full handshake (which brings the rest) rather
    /// than judged without them. On that full handshake the server is judged on everything it
    /// sends, and refused if that falls short too.
    ///
    /// - Parameters:
    ///   - isReused: resumed, or accepted before under another policy (it carries a stamp).
    ///   - embeddedSCTsSuffice: read only when the rest would refuse.
    static func refusalBeforeEvaluating(
        handshakeHasSCTs: Bool, isReused: Bool, policyReadsSCTs: Bool, embeddedSCTsSuffice: @autoclosure () -> Bool, isOnFreshConnection: Bool
    ) -> RetryReason? {
        guard !handshakeHasSCTs, !isOnFreshConnection, isReused, policyReadsSCTs, !embeddedSCTsSuffice() else { return nil }
        return .withoutHandshakeSCTs
    }
}
