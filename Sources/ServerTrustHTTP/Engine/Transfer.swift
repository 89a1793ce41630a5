import Foundation
import HTTPTypes
internal import CCurl
internal import COpenSSL
internal import CServerTrustCurlShims
import ServerTrust
import Synchronization

/// One request on one hop, from `curl_multi_add_handle` to `CURLMSG_DONE`.
///
/// Thread confinement: created on a caller's task, then configured, driven and finished on the
/// session's loop thread only; the C callbacks that receive it unretained run on that thread
/// inside `curl_multi_perform`. The loop's table of active transfers keeps it alive while curl
/// may call back. Hence `@unchecked Sendable`.
///
/// The transfer is also the box its awaiting task's continuation waits in (``OneShot``, its
/// superclass): the task attaches to it, and the transfer resumes the task with its
/// ``Outcome`` when it ends, or, for a streamed response (``stream``), with its head as soon as
/// that has arrived (an outcome with no body). One allocation per request for both.
final class Transfer: OneShot, @unchecked Sendable {
    /// What the caller receives when the transfer ends.
    struct Outcome: Sendable {
        var head: ResponseHead
        var body: [UInt8]
        var report: TrustReport
        /// Who decodes the body, and whether anything was asked for.
        var contentDecoding: ContentDecodingPlan
    }

    let url: String
    /// The method as sent, upper-cased.
    let method: String
    let headers: HTTPFields
    let body: [UInt8]?
    let policy: TrustPolicy
    let isTLS: Bool
    let bodyLimit: Int?
    /// The time limit of this request: its own, else the session's; nil for none.
    let timeout: Duration?
    let stream: BodyStream?
    /// The `Accept-Encoding` sent and whether libcurl decodes the body.
    let contentDecoding: ContentDecodingPlan
    /// The streamed or file request body, read by curl through ``sendBody(into:)``; nil for
    /// none or an in-memory ``body``.
    let upload: UploadStream?

    /// Called once, on the loop thread, when the transfer ends, before the awaiting task is
    /// resumed; nil for nothing to do (a revocation loop's booking to release, tests).
    private let onCompletion: (@Sendable (Result<Outcome, SessionError>) -> Void)?

    /// The handle running this transfer; a handle given up or given back no longer reaches it.
    var easy: EasyHandle? {
        didSet { if oldValue !== easy, oldValue?.transfer === self { oldValue?.transfer = nil } }
    }
    @exclusivity(unchecked) private(set) var connectionContexts: [ConnectionContext] = []
    @exclusivity(unchecked) private var guardFailure: TrustReport?
    @exclusivity(unchecked) private(set) var report: TrustReport?
    // The fields written on every header line and body chunk, and those read when the transfer
    // ends, are exempt from the runtime's dynamic exclusivity checks (`@exclusivity(unchecked)`):
    // the transfer is confined to the loop thread, and each access is a single append, sum,
    // store or read inside one callback.
    /// The head being received: its status line, and its fields' bytes in arrival order, made
    /// into `HTTPFields` only when read (``ReceivedFields``).
    @exclusivity(unchecked) private var status = 0
    @exclusivity(unchecked) private var httpVersion = ""
    @exclusivity(unchecked) private var fields = ReceivedFields.Buffer()
    private var headDelivered = false
    @exclusivity(unchecked) private var received: [UInt8] = []
    private var bodyTooLarge = false
    @exclusivity(unchecked) private var headerBytes = 0
    private var headersTooLarge = false
    /// The most header bytes accepted per response (curl 7.88 limits one line, not the total).
    static let maximumHeaderBytes = 256 << 10
    private var finished = false
    /// Where the loop's table of active transfers holds this transfer, or -1 when it holds
    /// none (``MultiLoop``'s `ActiveTransfers`). Loop thread only.
    @exclusivity(unchecked) var activeSlot = -1
    private let cancellationRequested = Atomic<Bool>(false)

    /// Any thread: the caller gave up; the loop abandons the transfer instead of starting it.
    func requestCancellation() { cancellationRequested.store(true, ordering: .releasing) }
    var isCancellationRequested: Bool { cancellationRequested.load(ordering: .acquiring) }

    init(
        url: String, method: String, headers: HTTPFields, body: [UInt8]?, policy: TrustPolicy,
        isTLS: Bool, bodyLimit: Int?, timeout: Duration? = nil, contentDecoding: ContentDecodingPlan = .off, stream: BodyStream?,
        upload: UploadStream? = nil, onCompletion: (@Sendable (Result<Outcome, SessionError>) -> Void)? = nil
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.policy = policy
        self.isTLS = isTLS
        self.bodyLimit = bodyLimit
        self.timeout = timeout
        self.contentDecoding = contentDecoding
        self.stream = stream
        self.upload = upload
        self.onCompletion = onCompletion
    }

    // MARK: Callbacks (loop thread)

    /// `CURLOPT_SSL_CTX_FUNCTION`: a new connection is being set up for this transfer.
    func configureNewConnection(sslContext: OpaquePointer) -> Bool {
        let context = ConnectionContext(policy: policy, validatedChains: easy?.share?.validatedChains)
        connectionContexts.append(context)
        return TLSBridge.configure(sslContext: sslContext, for: context)
    }

    /// `CURLOPT_PREREQFUNCTION`: the connection is ready, the request not yet sent. Carries out
    /// the ``ConnectionGuard`` verdict for this connection and this transfer's policy.
    func admitConnection(disableGuard: Bool) -> Bool {
        guard isTLS else {
            report = TrustReport(notEvaluated: policy, reason: "Plain HTTP: no TLS, nothing was evaluated.")
            return true
        }
        guard let ssl = easy?.ssl else {
            guardFailure = TrustReport(
                policy: policy, failure: TrustError(.openSSLFailure, "The connection has no OpenSSL session to evaluate.", host: policy.host))
            return false
        }
        let record = TLSBridge.record(of: ssl)
        if disableGuard {
            report = record?.report ?? TrustReport(notEvaluated: policy, reason: "The connection guard is disabled (testing).")
            return true
        }
        let notAfter: Date?
        switch ConnectionGuard.verdict(record: record, policyID: policy.id, now: policy.clock(), isOnFreshConnection: isOnFreshConnection) {
        case .admit(let stamped):
            // The handshake has finished: the server proved it holds the key, so what its
            // evaluation verified (a staple) may now be cached.
            stamped.report.evaluatedTrust?.handshakeCompleted()
            report = stamped.report
            return true
        case .refuseForRetry(let reason):
            return refuseForRetry(reason)
        case .evaluate(let bound):
            notAfter = bound
        }
        let isResumed = SSL_session_reused(ssl) == 1
        let store = easy?.share?.validatedChains
        let chain: [Certificate]
        switch ConnectionGuard.chain(
            isResumed: isResumed, stampedValidatedChain: record?.report.validatedCertificates,
            storedValidatedChain: isResumed ? TLSBridge.peerLeaf(ssl).flatMap { store?.chain(forLeaf: $0) } : nil,
            isOnFreshConnection: isOnFreshConnection)
        {
        case .presented: chain = TLSBridge.peerChain(ssl)
        case .validated(let validated): chain = validated
        case .refuseForRetry(let reason): return refuseForRetry(reason)
        }
        let handshake = policy.handshakeEvidence(of: ssl)
        if let reason = ConnectionGuard.refusalBeforeEvaluating(
            hasStaple: handshake.stapledOCSPResponse != nil, isResumed: isResumed,
            policyReadsStaples: policy.evaluator.usesStapledOCSPResponse, leafRequiresStaple: chain.first?.hasMustStaple == true,
            isOnFreshConnection: isOnFreshConnection)
        {
            policy.stopResumingSessions()
            return refuseForRetry(reason)
        }
        if let reason = ConnectionGuard.refusalBeforeEvaluating(
            handshakeHasSCTs: !handshake.signedCertificateTimestamps.isEmpty || handshake.stapledOCSPResponse != nil,
            isReused: isResumed || record != nil, policyReadsSCTs: policy.usesSignedCertificateTimestamps,
            embeddedSCTsSuffice: !policy.resolved.certificateTransparencyNeedsHandshakeSCTs(chain, at: policy.clock()),
            isOnFreshConnection: isOnFreshConnection)
        {
            if isResumed { policy.stopResumingSessions() }
            return refuseForRetry(reason)
        }
        let fresh = TLSBridge.admit(ssl, under: policy, presented: chain, handshake: handshake, notAfter: notAfter, remembering: store)
        guard fresh.failure == nil else {
            guardFailure = fresh
            return false
        }
        // The handshake has finished: the server proved it holds the key, so what its
        // evaluation verified (a staple) may now be cached.
        fresh.evaluatedTrust?.handshakeCompleted()
        report = fresh
        return true
    }

    /// Set when the guard refused the connection so the request can be retried on a new one.
    private(set) var retryReason: ConnectionGuard.RetryReason?
    /// Whether this attempt runs on a connection opened for it, with a full handshake (the retry).
    private(set) var isOnFreshConnection = false

    /// Refuses the connection and has libcurl close it rather than cache it for another request.
    private func refuseForRetry(_ reason: ConnectionGuard.RetryReason) -> Bool {
        retryReason = reason
        // Read by curl when this transfer ends (multi_done): the connection is closed then,
        // unless other HTTP/2 streams still use it; it then goes back to the cache when they
        // end, and the next request that picks it is refused here and closes it.
        try? easy?.set(CURLOPT_FORBID_REUSE, 1)
        return false
    }

    /// Readies a transfer the guard refused for a retry (loop thread): true when it should be
    /// sent again on a fresh connection, false when it ends as it is (already retried, cancelled).
    func prepareRetry() -> Bool {
        // A body already read cannot be sent again (the guard refuses before the body, so it is not).
        guard retryReason != nil, !isOnFreshConnection, !finished, !isCancellationRequested, upload?.hasStarted != true else { return false }
        isOnFreshConnection = true
        retryReason = nil
        connectionContexts.removeAll()
        guardFailure = nil
        report = nil
        (status, httpVersion) = (0, "")
        fields.startHead()
        received.removeAll()
        headerBytes = 0
        return true
    }

    /// `CURLOPT_HEADERFUNCTION`: one header line, as curl's bytes. False aborts the transfer.
    ///
    /// curl calls this for the head of every response on the way: 1xx, a proxy's CONNECT
    /// answer, each redirect hop; a status line starts a new head, so only the last one is kept.
    func receiveHeaderLine(_ line: UnsafeRawBufferPointer) -> Bool {
        headerBytes += line.count
        guard headerBytes <= Self.maximumHeaderBytes else {
            headersTooLarge = true
            return false
        }
        switch HeaderLine.kind(of: line) {
        case .status(let code, let version):
            status = code
            httpVersion = HeaderLine.version(version)
            fields.startHead()
        case .end:
            if status >= 200 { deliverHead() }
        case .other:
            // A field line (trailers of a chunked body arrive here too, after the head, as
            // before), kept as its bytes: split, made into an `HTTPField`, or dropped (a line
            // without a colon, an invalid name) when the fields are read.
            fields.append(line: line)
        }
        return true
    }

    /// The head received so far (the last one: a status line starts a new head).
    private var head: ResponseHead {
        ResponseHead(status: status, fields: ReceivedFields(fields), httpVersion: httpVersion)
    }

    /// `CURLOPT_WRITEFUNCTION`: body bytes. Returns the count consumed, or `CURL_WRITEFUNC_PAUSE`.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        if let stream {
            deliverHead()
            return stream.offer(Array(bytes)) ? bytes.count : Int(CURL_WRITEFUNC_PAUSE)
        }
        if let bodyLimit, received.count + bytes.count > bodyLimit {
            bodyTooLarge = true
            return 0
        }
        received.append(contentsOf: bytes)
        return bytes.count
    }

    /// `CURLOPT_READFUNCTION`: request body bytes for curl (``UploadStream/read(into:)``).
    func sendBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let upload else { return Int(CURL_READFUNC_ABORT) }  // curl reads only an upload
        return upload.read(into: buffer)
    }

    /// A streamed response's head, to the awaiting task (a buffered one waits for the end).
    private func deliverHead() {
        guard !headDelivered, stream != nil else { return }
        headDelivered = true
        if let report {
            resume(with: .success(Outcome(head: head, body: [], report: report, contentDecoding: .off)))
        } else {
            resume(with: .failure(SessionError(.trustEvaluationFailed, "No trust evaluation was recorded for the connection.", url: url)))
        }
    }

    // MARK: Completion (loop thread)

    /// Ends the transfer with curl's result.
    func finish(_ code: CURLcode) {
        guard !finished else { return }
        finished = true
        upload?.close()
        recordHandshakeDuration()
        let result = outcome(code)
        if case .failure(let error) = result { stream?.finish(throwing: error) } else { stream?.finish(throwing: nil) }
        onCompletion?(result)
        if stream == nil {
            resume(with: result)
        } else if !headDelivered {
            // A stream's task waits for the head: it gets the failure, or, should a transfer
            // ever succeed without the blank line that ends its head, the head it has.
            if case .failure(let error) = result {
                headDelivered = true
                resume(with: .failure(error))
            } else {
                deliverHead()
            }
        }
    }

    /// Ends the transfer without curl (cancellation, shutdown).
    func abandon(_ error: SessionError) {
        guard !finished else { return }
        finished = true
        upload?.close()
        stream?.finish(throwing: error)
        onCompletion?(.failure(error))
        if stream == nil || !headDelivered {
            headDelivered = true
            resume(with: .failure(error))
        }
    }

    private func outcome(_ code: CURLcode) -> Result<Outcome, SessionError> {
        // Read only on a failure: a success has no message to keep.
        var curlMessage: String { easy?.errorMessage ?? "" }
        let rejected = guardFailure ?? connectionContexts.lazy.compactMap(\.recordedFailure).first
        if let rejected, let trustFailure = rejected.failure {
            return .failure(SessionError(
                .trustEvaluationFailed, "Trust evaluation rejected \(policy.host).", trustError: trustFailure,
                curlCode: Int(code.rawValue), curlMessage: curlMessage, transportFailure: .trustRejected, url: url, rejectedTrust: rejected))
        }
        // The producer's failure is why curl aborted (CURL_READFUNC_ABORT), whatever its code.
        if let failure = upload?.failure, code != CURLE_OK {
            return .failure(SessionError(failure.code, failure.reason, curlCode: Int(code.rawValue), curlMessage: curlMessage, url: url))
        }
        guard code == CURLE_OK else {
            if upload != nil, code == CURLE_SEND_FAIL_REWIND {
                return .failure(SessionError(
                    .bodyNotReplayable, "libcurl had to send the request body again (the connection was lost mid-request), and a streamed body cannot be re-read.",
                    curlCode: Int(code.rawValue), curlMessage: curlMessage, url: url))
            }
            if retryReason != nil {
                return .failure(SessionError(
                    .transferFailed, "The connection to \(policy.host) was refused before the request: its trust evaluation expired, or it resumed a TLS session without the required OCSP staple or without a chain validated at a full handshake, and the request was not retried.",
                    curlCode: Int(code.rawValue), curlMessage: curlMessage, url: url))
            }
            if headersTooLarge {
                return .failure(SessionError(.responseTooLarge, "The response headers exceed the \(Self.maximumHeaderBytes)-byte limit.", curlCode: Int(code.rawValue), url: url))
            }
            if bodyTooLarge {
                return .failure(SessionError(.responseTooLarge, "The response body exceeds the \(bodyLimit ?? 0)-byte limit.", curlCode: Int(code.rawValue), url: url))
            }
            if code == CURLE_BAD_CONTENT_ENCODING {
                return .failure(SessionError(
                    .contentDecodingFailed, "libcurl could not decode the response body (Content-Encoding: \(ContentCoding.tokens(of: head.headers).joined(separator: ", "))).",
                    curlCode: Int(code.rawValue), curlMessage: curlMessage, url: url))
            }
            let failure = SessionError.TransportFailure(curlCode: code, curlMessage: curlMessage)
            let text =
                failure == .tlsHandshakeFailed && TLSFloor.isProtocolVersionRefusal(curlMessage)
                ? (policy.minimumTLSVersion > .tls12
                    ? "The server for \(policy.host) offers no protocol version at or above \(policy.minimumTLSVersion), the lowest its host policy accepts."
                    : "The server for \(policy.host) offers no protocol version at or above \(TLSFloor.minimumProtocolName), the lowest ServerTrust accepts.")
                : String(cString: curl_easy_strerror(code))
            var error = SessionError(
                failure == .timedOut ? .timedOut : .transferFailed, text, curlCode: Int(code.rawValue), curlMessage: curlMessage,
                transportFailure: failure, url: url)
            // A header callback means the server answered (a status line, a 1xx, a proxy's
            // CONNECT reply): from then on the request may have had its effect.
            if headerBytes == 0 { error.retryableFailure = Session.RetryPolicy.Failures.kind(of: failure) }
            return .failure(error)
        }
        guard let report else {
            // Fail closed: a TLS response whose connection was never evaluated is not returned.
            return .failure(SessionError(.trustEvaluationFailed, "No trust evaluation was recorded for the connection.", url: url))
        }
        var finalHead = head
        if let easy { finalHead.status = easy.info(CURLINFO_RESPONSE_CODE) }
        return .success(Outcome(head: finalHead, body: received, report: report, contentDecoding: contentDecoding))
    }
}
