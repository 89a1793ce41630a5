import Foundation
internal import COpenSSL
internal import CServerTrustShims
internal import ServerTrust

/// The OpenSSL side of a connection: the callbacks libcurl lets us install and the state they
/// leave on `SSL_CTX` and `SSL` objects.
///
/// - `CURLOPT_SSL_CTX_FUNCTION` runs once per new connection: it installs ``verifyCallback``
///   with `SSL_CTX_set_cert_verify_callback` (one call over the whole chain, replacing OpenSSL's
///   own chain verification with our per-policy store), forces `SSL_VERIFY_PEER` (with
///   `VERIFYPEER=0` OpenSSL would ignore our 0), raises the context to ``TLSFloor`` and
///   refuses renegotiation.
/// - The verify callback evaluates the presented chain under the connection's policy and, on
///   success, stamps the `SSL*` with an ``EvaluationRecord`` naming that policy.
/// - `CURLOPT_PREREQFUNCTION` runs before every request, reused connection or not; the transfer
///   compares the stamp with its own policy and re-evaluates the peer chain when they differ
///   (reused connection, resumed session, multiplexed stream). See ``Transfer``.
enum TLSBridge {
    /// The `SSL_CTX` slot holding the connection's ``ConnectionContext``.
    static let connectionContexts = RetainedExData<ConnectionContext>(.sslContext)
    /// The `SSL` slot holding the ``EvaluationRecord`` (the policy stamp).
    static let evaluationRecords = RetainedExData<EvaluationRecord>(.ssl)

    /// Installs our verification on a fresh `SSL_CTX` for `context`'s policy.
    static func configure(sslContext ctx: OpaquePointer, for context: ConnectionContext) -> Bool {
        // libcurl 7.88 makes an SSL_CTX per connection and calls us once for it. A second
        // configuration would replace the context its callbacks were given: refuse it.
        guard connectionContexts.object(in: ctx) == nil, TLSFloor.apply(to: ctx, minimum: context.policy.minimumTLSVersion),
            let retained = connectionContexts.store(context, in: ctx)
        else { return false }
        // The SSL_CTX now owns one reference and outlives every handshake on it, so the
        // unretained pointer handed to OpenSSL stays valid for every callback.
        SSL_CTX_set_cert_verify_callback(ctx, verifyCallback, retained)
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nil)
        if context.policy.evaluatesWithStaple {
            // Ask for a staple; the status callback runs in TLS 1.2 and 1.3, after the chain
            // and the staple have both arrived, so the evaluation moves there.
            _ = CServerTrustShims_SSL_CTX_set_tlsext_status_type(ctx, CServerTrustShims_TLSEXT_STATUSTYPE_ocsp())
            _ = CServerTrustShims_SSL_CTX_set_tlsext_status_cb(ctx, statusCallback)
            _ = CServerTrustShims_SSL_CTX_set_tlsext_status_arg(ctx, retained)
        }
        if context.policy.usesSignedCertificateTimestamps,
            CServerTrustShims_SSL_CTX_request_signed_certificate_timestamps(ctx) != 1
        {
            return false
        }
        _ = CServerTrustShims_SSL_CTX_set_options(ctx, CServerTrustShims_SSL_OP_NO_RENEGOTIATION())
        if !context.policy.writesTLSSecretsToKeyLog { disableKeyLog(ctx) }
        if let identity = context.policy.clientIdentity, !install(identity, on: ctx) {
            ERR_clear_error()
            return false
        }
        return true
    }

    /// Removes the key-log callback libcurl put on `ctx`.
    ///
    /// libcurl 7.88's OpenSSL backend opens the file named by `SSLKEYLOGFILE` once, at
    /// `curl_global_init` (whoever in the process calls it first), and on every new connection
    /// installs `SSL_CTX_set_keylog_callback` before it calls `CURLOPT_SSL_CTX_FUNCTION`, which
    /// writes every TLS secret of the connection to that file. Clearing the callback here, on
    /// each `SSL_CTX` before its handshake, is what holds whatever the environment says and
    /// whenever libcurl read it.
    static func disableKeyLog(_ ctx: OpaquePointer) {
        SSL_CTX_set_keylog_callback(ctx, nil)
    }

    /// `SSL_CTX_set_cert_verify_callback`'s callback: the whole chain, once per full handshake.
    static let verifyCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32 = { storeContext, argument in
        guard let storeContext, let argument else { return 0 }
        let context = Unmanaged<ConnectionContext>.fromOpaque(argument).takeUnretainedValue()
        if context.policy.evaluatesWithStaple {
            // Deferred to the status callback, which sees the staple too. Should it not run,
            // the connection carries no stamp and the prerequisite guard evaluates it before
            // any request is sent.
            X509_STORE_CTX_set_error(storeContext, X509_V_OK)
            return 1
        }
        let presented = presentedChain(storeContext)
        let ssl = X509_STORE_CTX_get_ex_data(storeContext, SSL_get_ex_data_X509_STORE_CTX_idx()).map(OpaquePointer.init)
        let report = admit(
            ssl, under: context.policy, presented: presented, handshake: ssl.map { context.policy.handshakeEvidence(of: $0) } ?? HandshakeEvidence(),
            remembering: context.validatedChains)
        guard report.failure == nil else {
            context.recordFailure(report)
            X509_STORE_CTX_set_error(storeContext, X509_V_ERR_APPLICATION_VERIFICATION)
            return 0
        }
        X509_STORE_CTX_set_error(storeContext, X509_V_OK)
        return 1
    }

    /// `SSL_CTX_set_tlsext_status_cb`'s callback, installed when the policy reads staples
    /// (``TrustPolicy/evaluatesWithStaple``):
    /// evaluates the peer chain with the stapled response (if any). A resumed session has no
    /// chain evaluation to finish here: the prerequisite guard evaluates it.
    static let statusCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32 = { ssl, argument in
        guard let ssl, let argument else { return 0 }
        let context = Unmanaged<ConnectionContext>.fromOpaque(argument).takeUnretainedValue()
        if SSL_session_reused(ssl) == 1 { return 1 }
        let report = admit(
            ssl, under: context.policy, presented: peerChain(ssl), handshake: context.policy.handshakeEvidence(of: ssl),
            remembering: context.validatedChains)
        guard report.failure == nil else {
            context.recordFailure(report)
            return 0
        }
        return 1
    }

    /// The chain as sent: the leaf, then the rest of the peer's certificates.
    private static func presentedChain(_ storeContext: OpaquePointer) -> [Certificate] {
        var chain: [Certificate] = []
        let leaf = X509_STORE_CTX_get0_cert(storeContext)
        if let leaf { chain.append(Certificate(borrowingX509: leaf)) }
        if let untrusted = X509_STORE_CTX_get0_untrusted(storeContext) {
            for index in 0..<CServerTrustShims_sk_X509_num(untrusted) {
                guard let certificate = CServerTrustShims_sk_X509_value(untrusted, index), certificate != leaf else { continue }
                chain.append(Certificate(borrowingX509: certificate))
            }
        }
        return chain
    }

    /// The peer chain of a connection's own full handshake, as sent. On the client side
    /// `SSL_get_peer_cert_chain` includes the leaf. Not for a resumed session: libcurl 8.10 and
    /// later restore sessions from their serialised form, which has no chain (NULL here), and
    /// the guard evaluates the chain our validation built instead (``ValidatedChainStore``).
    static func peerChain(_ ssl: OpaquePointer) -> [Certificate] {
        guard let stack = SSL_get_peer_cert_chain(ssl) else { return [] }
        return (0..<CServerTrustShims_sk_X509_num(stack)).compactMap { index in
            CServerTrustShims_sk_X509_value(stack, index).map { Certificate(borrowingX509: $0) }
        }
    }

    /// The peer's leaf, which a session keeps (serialised or not): the key to the chain
    /// validated at the session's full handshake.
    static func peerLeaf(_ ssl: OpaquePointer) -> Certificate? {
        SSL_get0_peer_certificate(ssl).map { Certificate(borrowingX509: $0) }
    }

    static func stapledOCSPResponse(_ ssl: OpaquePointer) -> [UInt8]? {
        var response: UnsafePointer<UInt8>?
        let length = CServerTrustShims_SSL_get_tlsext_status_ocsp_resp(ssl, &response)
        guard length > 0, let response else { return nil }
        return Array(UnsafeBufferPointer(start: response, count: length))
    }

    /// Evaluates a connection's chain under `policy` and, when the policy accepts it, stamps
    /// `ssl` with the evaluation: the one "evaluate, then stamp" of the verify and status
    /// callbacks and of the guard's re-evaluation before a request (``Transfer``).
    /// An accepted evaluation's validated chain is kept in `store`, for a resumption of the
    /// connection's session.
    /// - Parameters:
    ///   - notAfter: an expiry the connection already had (``EvaluationRecord``).
    ///   - store: the connection's session cache's ``ValidatedChainStore``, if any.
    /// - Returns: the report; a rejection has a `failure` and leaves `ssl` unstamped.
    static func admit(
        _ ssl: OpaquePointer?, under policy: TrustPolicy, presented: [Certificate], handshake: HandshakeEvidence, notAfter: Date? = nil,
        remembering store: ValidatedChainStore?
    ) -> TrustReport {
        let report = policy.evaluate(presented: presented, handshake: handshake)
        guard report.failure == nil else { return report }
        if let ssl { stamp(ssl, with: EvaluationRecord(policy: policy, report: report, notAfter: notAfter)) }
        store?.remember(report.validatedCertificates)
        return report
    }

    /// The record stamped on `ssl`, if any.
    static func record(of ssl: OpaquePointer) -> EvaluationRecord? { evaluationRecords.object(in: ssl) }

    /// Replaces the stamp on `ssl`, releasing the previous one.
    static func stamp(_ ssl: OpaquePointer, with record: EvaluationRecord) { evaluationRecords.store(record, in: ssl) }
}

/// Per-connection state reachable from OpenSSL callbacks: the policy the connection was
/// opened under, where the chain its handshake validated is kept for a resumption of its
/// session, and the rejected evaluation of its handshake, if any.
final class ConnectionContext: Sendable {
    let policy: TrustPolicy
    /// The store of the session cache the connection's session goes to (its transfer's share),
    /// nil without one.
    let validatedChains: ValidatedChainStore?
    private let failure = Locked<TrustReport?>(nil)

    init(policy: TrustPolicy, validatedChains: ValidatedChainStore?) {
        self.policy = policy
        self.validatedChains = validatedChains
    }

    func recordFailure(_ report: TrustReport) { failure.withLock { $0 = report } }
    var recordedFailure: TrustReport? { failure.withLock { $0 } }
}

/// The stamp on an `SSL*`: which policy accepted this connection, its report, and until when
/// the acceptance holds.
///
/// The expiry is the earliest of the policy's ``TrustPolicy/maximumConnectionLifetime`` after
/// the evaluation and everything the evaluation relied on (``TrustReport/reliedOnUntil``: the
/// chain's notAfter dates, a pin set's expiration, OCSP and CRL nextUpdates). Past it the
/// prerequisite guard refuses the connection, and the request is sent on a new one
/// (``Transfer/admitConnection(disableGuard:)``).
final class EvaluationRecord: Sendable {
    let policyID: UInt64
    let report: TrustReport
    let expiry: Date

    /// - Parameter notAfter: an expiry the connection already had (a re-evaluation under
    ///   another policy never makes a connection live longer than its first stamp allowed).
    init(policy: TrustPolicy, report: TrustReport, notAfter: Date? = nil) {
        policyID = policy.id
        self.report = report
        let evaluatedAt = report.evaluatedAt ?? policy.clock()
        // A date already past when the server was accepted was not relied on: a report-only
        // evaluator's expired chain, say. Counting it would retire every connection at once.
        let reliedOn = report.reliedOnUntil.flatMap { $0 > evaluatedAt ? $0 : nil }
        expiry = min(
            evaluatedAt.addingTimeInterval(policy.maximumConnectionLifetime), reliedOn ?? .distantFuture,
            notAfter ?? .distantFuture)
    }
}
