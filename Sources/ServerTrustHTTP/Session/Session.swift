public import Foundation
public import HTTPTypes
public import ServerTrust
import Tracing

/// An async/await HTTPS client over libcurl that applies a trust policy to every connection.
///
/// Every TLS connection is evaluated inside the handshake by the evaluator the
/// `ServerTrustManager` assigns to its host, and every request — on a new, reused or resumed
/// connection, or as an HTTP/2 stream — is admitted only if its connection was accepted by
/// *that request's* policy. Redirects are followed by the session, each hop under its own host's
/// policy.
///
/// One curl multi handle on one dedicated thread serves all requests, except those of hosts
/// whose evaluator may fetch revocation data during the handshake
/// (`ServerTrustEvaluating.mayFetchRevocationData`): up to eight such hosts get a thread of
/// their own and the rest share one more, so a slow OCSP responder or CRL server holds up only
/// the hosts on its thread, never the others. Call ``shutdown()`` when
/// done, or use ``withSession(configuration:trustManager:_:)``; a session that is released is
/// shut down in `deinit`.
public final class Session: Sendable {
    public let configuration: Configuration
    /// The per-host policies; nil means default validation for every host.
    public let trustManager: ServerTrustManager?

    let loop: MultiLoop
    /// The loops of policies that may fetch revocation data in the handshake.
    let revocationLoops: RevocationLoops
    /// Policies by host, resolved once (``PolicyRegistry``).
    private let policies: PolicyRegistry
    /// The curl handles of every policy, retired with their policies (``PolicyHandles``).
    private let handlePool: PolicyHandles.Pool
    private let signedResponses: SignedResponseChecker
    var redirects: RedirectRules {
        RedirectRules(maximumHops: configuration.redirectPolicy.maximumHops, allowsPlainHTTP: configuration.allowsPlainHTTP)
    }
    /// Upload figures (tests: the back-pressure bound, whether a producer ran).
    let uploadStatistics = UploadStatistics()
    /// ``Configuration/metricsFactory`` resolved once; nil when it is the no-op handler.
    private let metrics: SessionMetrics?
    /// Whether ``Configuration/tracer`` is set, decided once: reading the optional existential
    /// to find it nil copied and destroyed it through its value witnesses on every request.
    private let hasConfiguredTracer: Bool
    /// Whether a ``Configuration/failureReporter`` or ``Configuration/onTrustFailure`` is set,
    /// decided once: without either, a hop's report is not handed to ``reportTrustFailures(of:url:)``,
    /// a call that copied the report and the URL in and out of the hop driver's frame on every
    /// request (docs/PERFORMANCE.md, ninth round).
    let reportsTrustFailures: Bool
    /// The ``ContentDecodingPlan`` of ``Configuration/contentDecoding``, for a host whose
    /// responses are not signature-checked and for one whose are, made once; a request with
    /// its own ``Request/contentDecoding`` makes its own.
    private let decodingPlans: (unchecked: ContentDecodingPlan, checked: ContentDecodingPlan)

    /// - Parameters:
    ///   - configuration: settings; the defaults are safe.
    ///   - trustManager: per-host evaluators. Default nil: `DefaultTrustEvaluator` for every host.
    /// - Throws: ``SessionError/Code/unsupportedBackend`` when libcurl's TLS backend is not
    ///   OpenSSL; ``SessionError/Code/invalidRequest`` for a ``Configuration/maximumConnectionLifetime``
    ///   that is not positive, a negative ``Configuration/maximumIdleHandles``, a ``Configuration/contentDecoding`` coding the runtime libcurl
    ///   cannot decode, a ``Configuration/retryPolicy`` field out of range, or a
    ///   ``Configuration/proxy`` that is not `http://`; a `TrustError`
    ///   when the system anchors cannot be loaded or a
    ///   ``Configuration/signedResponses`` or ``Configuration/clientIdentities`` pattern is
    ///   invalid; a `ResponseSignatureError`
    ///   (`.invalidConfiguration`) for a signed-response policy without roots.
    public init(configuration: Configuration = Configuration(), trustManager: ServerTrustManager? = nil) throws {
        do {
            try CurlRuntime.requireOpenSSLBackend()
        } catch let error as TrustError {
            throw SessionError(.unsupportedBackend, error.reason, trustError: error)
        }
        guard configuration.maximumConnectionLifetime > .zero else {
            throw SessionError(
                .invalidRequest, "maximumConnectionLifetime is \(configuration.maximumConnectionLifetime); it must be positive.")
        }
        if let idle = configuration.maximumIdleHandles, idle < 0 {
            throw SessionError(.invalidRequest, "maximumIdleHandles is \(idle); it must be 0 or more.")
        }
        // Sent as one header line: a CR or LF would start another field (header injection).
        if configuration.userAgent.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) {
            throw SessionError(.invalidRequest, "userAgent contains a line break or NUL; it is sent as one header line.")
        }
        try ContentDecodingPlan.validate(configuration.contentDecoding)
        try configuration.retryPolicy.validate()
        try configuration.proxy?.validate()
        self.configuration = configuration
        self.trustManager = trustManager
        let (seconds, attoseconds) = configuration.maximumConnectionLifetime.components
        let connectionLifetime = TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
        signedResponses = try SignedResponseChecker(configuration: configuration)
        let clientIdentities = try ClientIdentityTable(configuration.clientIdentities)
        let anchors = try configuration.anchors.resolve()
        let metrics = SessionMetrics(factory: configuration.metricsFactory)
        self.metrics = metrics
        hasConfiguredTracer = configuration.tracer != nil
        reportsTrustFailures = configuration.failureReporter != nil || configuration.onTrustFailure != nil
        decodingPlans = (
            ContentDecodingPlan(configuration.contentDecoding, verifiesSignatures: false),
            ContentDecodingPlan(configuration.contentDecoding, verifiesSignatures: true)
        )
        let fetcher = configuration.revocationFetcher ?? CurlRevocationFetcher(userAgent: configuration.userAgent, resolve: configuration.resolve)
        let revocationFetcher = metrics.map { MeteredRevocationFetcher(upstream: fetcher, metrics: $0) } ?? fetcher
        let handlePool = PolicyHandles.Pool(idleCapacity: MultiLoop.idleHandleCapacity(configuration))
        self.handlePool = handlePool
        let loop = try MultiLoop(configuration: configuration, handlePool: handlePool)
        let revocationLoops = RevocationLoops(configuration: configuration, handlePool: handlePool)
        self.loop = loop
        self.revocationLoops = revocationLoops
        let parts = PolicyParts(
            configuration: configuration, anchors: anchors, revocationFetcher: revocationFetcher,
            connectionLifetime: connectionLifetime, clientIdentities: clientIdentities, metrics: metrics, handlePool: handlePool)
        policies = PolicyRegistry(
            makePolicy: { host, override throws(SessionError) in
                try Self.makePolicy(forHost: host, override: override, trustManager: trustManager, parts: parts)
            },
            // The dropped policies' curl handles go with them once nothing else uses them
            // (PolicyHandles), and their revocation loops once their transfers have ended.
            onEviction: { evictedThrough in
                revocationLoops.evict(through: evictedThrough)
            })
    }

    deinit { shutdown() }

    /// Evaluations and failures of this session's policies (``Configuration/trustCounters``).
    public var counters: TrustCounters { configuration.trustCounters }

    // Test hooks: each sums over the main loop and the revocation loops still running (a
    // stopped loop's counts go with it).
    /// Requests whose transfer is in a multi handle right now.
    var activeTransfers: Int { loops.reduce(0) { $0 + $1.activeTransfers } }
    /// How many times a submission woke a loop thread (tests check the batching).
    var loopWakeUps: Int { loops.reduce(0) { $0 + $1.wakeUpCount } }
    /// Easy handles the session has made (tests: finished handles are reused per policy).
    var easyHandlesMade: Int { loops.reduce(0) { $0 + $1.easyHandlesMade } }
    /// curl share handles alive, one per policy still in use (tests: bounded, not one per request).
    var liveShareHandles: Int { handlePool.liveShares }
    /// Finished easy handles kept for reuse (tests).
    var idleEasyHandles: Int { handlePool.idleHandles }
    /// The most request-body bytes any upload buffered at once (tests: the back-pressure bound).
    var peakBufferedUploadBytes: Int { uploadStatistics.peakBufferedBytes }
    /// Upload producers started: a stream's iteration or a file's reading (tests).
    var uploadProducersStarted: Int { uploadStatistics.producersStarted }
    /// Whether the session records metrics: false when its factory is the no-op handler (tests).
    var metricsEnabled: Bool { metrics != nil }
    /// Policies in the session's cache (tests).
    var cachedPolicies: Int { policies.count }

    /// Fails every transfer still running and releases every curl handle. Idempotent.
    ///
    /// Called from a task running on ``taskExecutor`` (or from `deinit` there), it cannot wait
    /// for the loop thread it runs on: it stops the loop and returns at once, and the handles
    /// are released on another thread as soon as the loop has exited. Requests made after it
    /// fail with ``SessionError/Code/sessionShutDown`` either way.
    public func shutdown() {
        if loop.isCurrentThread {
            loop.stop()
            let (loop, revocationLoops, policies, handlePool) = (loop, revocationLoops, policies, handlePool)
            DispatchQueue.global().async {
                loop.waitForExit()
                Self.release(revocationLoops, policies, handlePool)
            }
            return
        }
        loop.shutdown()
        Self.release(revocationLoops, policies, handlePool)
    }

    /// The rest of ``shutdown()`` once the main loop has exited.
    private static func release(_ revocationLoops: RevocationLoops, _ policies: PolicyRegistry, _ handlePool: PolicyHandles.Pool) {
        revocationLoops.shutdown()
        // Every loop has stopped: the policies' handles are freed now, and with any policy
        // deinitialised later (PolicyHandles).
        policies.removeAll()
        handlePool.close()
    }

    /// An executor that runs tasks on the session's loop thread, the thread that drives every
    /// transfer: `withTaskExecutorPreference(session.taskExecutor) { … }`, or
    /// `Task(executorPreference: session.taskExecutor) { … }`.
    ///
    /// A request made from such a task crosses no thread: it is submitted on the loop thread
    /// and the task resumes there when the response has arrived, where a request from any
    /// other executor waits for two cross-thread hand-offs (a wake-up of the loop, then a job
    /// on the caller's executor). For sequential requests on kept-alive connections that is
    /// most of the cost of a request (docs/PERFORMANCE.md). Child tasks inherit the preference,
    /// so a task group of requests runs on the loop thread too.
    ///
    /// What runs there holds up every transfer of the session while it runs: keep CPU-heavy
    /// work and anything that blocks (file I/O, locks held for long, synchronous waits) off
    /// this executor, or hop to another one for it. Trust evaluation is unchanged: every
    /// connection is still evaluated by its own policy inside the handshake and checked by the
    /// guard before each request, whichever executor the caller runs on. Actor-isolated code
    /// still runs on its actor. After ``shutdown()`` the executor hands jobs to the global
    /// concurrent executor, so a task preferring it still runs (and sees the session shut down).
    public var taskExecutor: any TaskExecutor { loop }

    // MARK: Requests

    /// Sends `request` and returns the whole response, following redirects per the configuration.
    /// Each hop that fails before any response byte is retried per ``Configuration/retryPolicy``.
    ///
    /// A streamed or file body (``Request/Body``) is uploaded with back-pressure; for a host
    /// with a signed-response policy it is first read into memory, up to
    /// ``Configuration/maximumSignedRequestBodySize``, as the request's signature covers its digest.
    ///
    /// Runs on its caller's executor (`nonisolated(nonsending)`, as are ``get(_:headers:)``,
    /// ``post(_:body:headers:)`` and ``stream(_:)``): what it does before the transfer is
    /// handed to the loop thread — a few microseconds — runs where the caller runs, and so
    /// does the rest once the response is complete. From a task that prefers
    /// ``taskExecutor`` that is the loop thread, with no executor switch at the call; from an
    /// actor it is the actor, which the caller would return to anyway.
    ///
    /// - Throws: ``SessionError``; ``SessionError/Code/trustEvaluationFailed`` carries the
    ///   `TrustError` that rejected the server; ``SessionError/Code/responseSignatureInvalid``
    ///   the `ResponseSignatureError` of a hop an enforced signed-response policy rejected;
    ///   ``SessionError/Code/uploadFailed``, ``SessionError/Code/bodyNotReplayable`` and
    ///   ``SessionError/Code/requestBodyTooLarge`` for a body that could not be sent.
    @inline(__always) nonisolated(nonsending) public func data(for request: Request) async throws -> Response {
        let observation = observe(request)
        do {
            let response = try await send(request, observation)
            observation.succeeded(status: response.status.code)
            return response
        } catch {
            throw observation.failed(error)
        }
    }

    /// Inlined into ``data(for:)``, as ``data(for:)`` is into ``get(_:headers:)`` and
    /// ``post(_:body:headers:)``: each was an async frame of its own around the one below it.
    /// With both inlined, a request has as many async frames as the async floor's, 8 from the
    /// caller's loop to the continuation (docs/PERFORMANCE.md, ninth round).
    @inline(__always) nonisolated(nonsending) private func send(_ request: Request, _ observation: RequestObservation) async throws -> Response {
        let final = try await followHops(
            request, observation: observation,
            // Kept buffered: a redirect that resends the body sends these bytes again.
            mustPrepare: { mustBufferForSigning($0) },
            prepare: { try await bufferedForSigning($0) },
            send: { request in
                let (signed, pending) = try signedResponses.prepare(request)
                return BufferedHop(outcome: try await perform(signed), pending: pending)
            },
            verify: { hop, request in
                try signedResponses.verify(
                    hop.pending, status: hop.head.status, headers: hop.head.headers, body: hop.outcome.body, url: request.url)
            },
            leave: { _ in })
        // Read in place, not copied out first: a copy of the outcome is a retain and a release
        // of each of its five references.
        let head = final.result.outcome.head
        // Decoded only now, after the signature check on the bytes as received.
        let (body, decoded) = try final.result.outcome.contentDecoding.finish(
            final.result.outcome.body, headers: head.headers, limit: configuration.maximumResponseBodySize,
            url: final.request.url)
        return Response(
            status: head.publicStatus, body: body, url: final.request.url,
            trust: final.result.outcome.report, httpVersion: head.httpVersion,
            verification: final.hops.verification, decodedContentEncodings: decoded,
            attempts: final.attempts, hopLog: final.hops, receivedFields: head.fields)
    }

    /// `GET url`.
    nonisolated(nonsending) public func get(_ url: String, headers: HTTPFields = HTTPFields()) async throws -> Response {
        try await data(for: Request(method: .get, url: try parse(url), headers: headers))
    }

    /// `POST url` with a body.
    nonisolated(nonsending) public func post(_ url: String, body: [UInt8], headers: HTTPFields = HTTPFields()) async throws -> Response {
        try await data(for: Request(method: .post, url: try parse(url), headers: headers, body: body))
    }

    /// Sends `request` and returns as soon as the head has arrived; the body follows as a
    /// stream of chunks, paced by the consumer (the transfer pauses when 1 MiB waits unread).
    /// ``Configuration/maximumResponseBodySize`` does not apply; iterate, or `collect(upTo:)`.
    /// With ``Configuration/contentDecoding`` the chunks are decoded by libcurl as they arrive
    /// (the `Content-Encoding` header is kept as received).
    ///
    /// Refused (``SessionError/Code/invalidRequest``) for a hop whose host has an informational
    /// or enforced signed-response policy: a signature covers the whole body, and a stream would
    /// hand out bytes before they could be verified. Use ``data(for:)`` for such hosts.
    nonisolated(nonsending) public func stream(_ request: Request) async throws -> StreamingResponse {
        let observation = observe(request)
        do {
            let response = try await sendStreaming(request, observation)
            observation.succeeded(status: response.status.code)
            return response
        } catch {
            throw observation.failed(error)
        }
    }

    nonisolated(nonsending) private func sendStreaming(_ request: Request, _ observation: RequestObservation) async throws -> StreamingResponse {
        let final = try await followHops(
            request, observation: observation,
            mustPrepare: { request in
                try signedResponses.refuseStreaming(request)
                return false
            },
            prepare: { $0 },
            send: { request in
                let (head, report, body) = try await performStreaming(request)
                return StreamedHop(head: head, report: report, body: body)
            },
            // Every hop of a stream is unchecked: a checked host was refused in `prepare`.
            verify: { _, _ in .notRequested },
            leave: { $0.body.onTermination() })
        let (hop, hops) = (final.result, final.hops)
        return StreamingResponse(
            status: hop.head.publicStatus, url: final.request.url, trust: hop.report,
            httpVersion: hop.head.httpVersion, body: hop.body, attempts: final.attempts, hopLog: hops, receivedFields: hop.head.fields)
    }

    /// Whether responses from `url`'s host are signature-checked: an informational or enforced
    /// ``Configuration/signedResponses`` policy matches it, by the rule the session itself
    /// applies (the most specific pattern wins).
    ///
    /// Such a response needs its whole body before any of it can be used, so ``stream(_:)``
    /// refuses the request and ``data(for:)`` buffers and verifies it. An adapter that streams
    /// by default asks this to choose: ServerTrustOpenAPI's transport, for one.
    /// A redirect can still lead a stream to a checked host, where ``stream(_:)`` refuses
    /// that hop.
    public func checksSignedResponses(from url: URL) -> Bool {
        signedResponses.requiresVerification(url)
    }

    /// Starts observing one call: metrics per ``Configuration/metricsFactory``, a span per
    /// ``Configuration/tracer``.
    private func observe(_ request: Request) -> RequestObservation {
        RequestObservation(request, metrics: metrics, tracer: hasConfiguredTracer ? configuration.tracer : Self.activeTracer)
    }

    /// `InstrumentationSystem.tracer`, or nil — no tracer — without its search when nothing is
    /// bootstrapped or bound: the active instrument (a `withTracer` scope's, else the
    /// bootstrapped one) is then `NoOpInstrument`, a concrete-type check, where the search casts
    /// it to `any Tracer` twice (≈ 2 k instructions per request, docs/PERFORMANCE.md), and nil
    /// spares `RequestObservation` its own `NoOpTracer` check. Anything else — a tracer, a
    /// multiplexing instrument — takes the library's own lookup.
    static var activeTracer: (any Tracer)? {
        // A metatype comparison, not `is NoOpInstrument` (a dynamic cast, ≈ 250 instructions):
        // `NoOpInstrument` is a struct, so the two agree.
        type(of: InstrumentationSystem.instrument) == NoOpInstrument.self ? nil : InstrumentationSystem.tracer
    }

    // MARK: One hop

    /// Sends one hop and waits for its whole outcome. Inlined, as is ``run(_:)``, into the
    /// hop's `send`: each was an async frame of its own that only passed the call on (one
    /// frame fewer per request, docs/PERFORMANCE.md, eighth round).
    @inline(__always) nonisolated(nonsending) private func perform(_ request: Request) async throws -> Transfer.Outcome {
        try await run(try makeTransfer(request, stream: nil))
    }

    nonisolated(nonsending) private func performStreaming(_ request: Request) async throws -> (ResponseHead, TrustReport, ResponseBody) {
        let stream = BodyStream()
        let transfer = try makeTransfer(request, stream: stream)
        let loop = self.loop(running: transfer)
        stream.setResumeHandler { [loop] in loop.resume(transfer) }
        let arrived = try await run(transfer)
        let (responseHead, report) = (arrived.head, arrived.report)
        let body = ResponseBody(stream: stream) { [loop] in
            loop.cancel(transfer, SessionError(.cancelled, "The body stream was abandoned.", url: transfer.url))
        }
        return (responseHead, report, body)
    }

    /// Submits `transfer` and waits for what it resumes its task with (``Transfer``: the outcome,
    /// or a streamed response's head), cancelling the transfer if the task is cancelled.
    @inline(__always) nonisolated(nonsending) private func run(_ transfer: Transfer) async throws -> Transfer.Outcome {
        let loop = self.loop(running: transfer)
        defer { transfer.settle() }  // what the loop published, visible to ThreadSanitizer too
        return try await withTaskCancellationHandler {
            // Checked, not unsafe: see `OneShot` (ThreadSanitizer).
            try await withCheckedThrowingContinuation { continuation in
                transfer.attach(continuation)
                loop.submit(transfer)
            }
        } onCancel: { [loop] in
            transfer.requestCancellation()
            loop.cancel(transfer, SessionError(.cancelled, "The task was cancelled.", url: transfer.url))
        }
    }

    private func makeTransfer(_ request: Request, stream: BodyStream?) throws(SessionError) -> Transfer {
        let url = request.url.absoluteURL
        let absolute = url.absoluteString
        let startsWithHTTPS = Self.startsWithHTTPS(absolute)
        let scheme = Self.lowercasedScheme(of: url, startsWithHTTPS: startsWithHTTPS)
        guard scheme == "https" || (scheme == "http" && configuration.allowsPlainHTTP) else {
            throw SessionError(
                .invalidRequest,
                scheme == "http"
                    ? "Plain http: URLs carry no TLS and cannot be evaluated; use https:, or set allowsPlainHTTP."
                    : "Unsupported URL scheme \"\(scheme)\"; only https: is allowed.",
                url: absolute)
        }
        guard let rawHost = (startsWithHTTPS ? Self.plainHTTPSHost(afterPrefixOf: absolute) : nil) ?? url.host, !rawHost.isEmpty else {
            throw SessionError(.invalidRequest, "The URL has no host.", url: absolute)
        }
        // An `HTTPField` cannot hold a line break (its name is a token, and CR, LF and NUL in its
        // value became spaces when it was made); checked again here, where the field becomes a
        // curl header line, so that no version of that guarantee can smuggle in another field.
        for field in request.headers where field.withUnsafeBytesOfValue({ $0.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 } }) {
            throw SessionError(.invalidRequest, "Header \"\(field.name.rawName)\" contains a line break.", url: absolute)
        }
        if let timeout = request.timeout, timeout <= .zero {
            throw SessionError(.invalidRequest, "The request timeout must be positive (it is \(timeout)).", url: absolute)
        }
        // Read once: each read copies the optional existential out of the request's storage.
        let override = request.trustEvaluator
        let policy = try self.policy(forRawHost: rawHost, override: override)
        // The session's own list was checked in init; a request's override is checked here.
        let verifiesSignatures = signedResponses.requiresVerification(url)
        let contentDecoding: ContentDecodingPlan
        if let override = request.contentDecoding {
            try ContentDecodingPlan.validate(override, url: absolute)
            contentDecoding = ContentDecodingPlan(override, verifiesSignatures: verifiesSignatures)
        } else {
            contentDecoding = verifiesSignatures ? decodingPlans.checked : decodingPlans.unchecked
        }
        let upload = try self.upload(of: request, url: absolute)
        let release = try bookLoop(for: policy, cacheable: override == nil || PolicyRegistry.cacheIdentity(of: override).cacheable)
        let transfer = Transfer(
            url: absolute, method: request.method.sentName, headers: request.headers, body: request.body,
            policy: policy, isTLS: scheme == "https", bodyLimit: stream == nil ? configuration.maximumResponseBodySize : nil,
            timeout: request.timeout ?? configuration.requestTimeout, contentDecoding: contentDecoding, stream: stream,
            upload: upload, onCompletion: release)
        // Broken by UploadStream.close() when the transfer ends: the handler captures the transfer.
        let runner = loop(running: transfer)
        upload?.setResumeHandler { [runner] in runner.resume(transfer) }
        return transfer
    }

    // MARK: Request bodies

    /// The producer side of a streamed or file body, nil for bytes or none. A file is opened
    /// here, before anything is sent.
    private func upload(of request: Request, url: String) throws(SessionError) -> UploadStream? {
        guard let (source, length, name) = try uploadSource(of: request, url: url) else { return nil }
        return UploadStream(source: source, length: length, name: name, url: url, statistics: uploadStatistics)
    }

    private func uploadSource(of request: Request, url: String) throws(SessionError) -> (UploadSource, Int?, String)? {
        switch request.uploadBody?.storage {
        case nil, .bytes?:
            return nil
        case .stream(let source, let length)?:
            if let length, length < 0 {
                throw SessionError(.invalidRequest, "The body stream's declared length is negative (\(length)).", url: url)
            }
            if source.isSpent {
                throw SessionError(
                    .bodyNotReplayable, "The request body stream was already read by an earlier request; a stream body can be sent once.", url: url)
            }
            return (source, length, "the request body stream")
        case .file(let fileURL)?:
            let file = try UploadFile(fileURL, requestURL: url)
            return (file.source, file.size, "the body file \(file.path)")
        }
    }

    /// Whether `request` has a streamed or file body and its host a signed-response policy
    /// (``bufferedForSigning(_:)``): checked before that async function is entered, which most
    /// requests do not need.
    private func mustBufferForSigning(_ request: Request) -> Bool {
        guard let body = request.uploadBody, body.bytes == nil else { return false }
        return signedResponses.requiresVerification(request.url)
    }

    /// `request` with its streamed or file body read into memory when its host has a
    /// signed-response policy: the request signature covers the body's digest, which must be
    /// known before the request is sent. Over ``Configuration/maximumSignedRequestBodySize``
    /// the request is refused (``SessionError/Code/requestBodyTooLarge``) and nothing is sent.
    nonisolated(nonsending) private func bufferedForSigning(_ request: Request) async throws -> Request {
        guard mustBufferForSigning(request) else { return request }
        let url = request.url.absoluteString
        guard let (source, length, name) = try uploadSource(of: request, url: url) else { return request }
        let limit = configuration.maximumSignedRequestBodySize
        let host = request.url.host ?? "this host"
        if let length, length > limit {
            throw SessionError(
                .requestBodyTooLarge,
                "Responses from \(host) are signed over the request body's digest, so \(name) is read into memory first; its \(length) bytes exceed maximumSignedRequestBodySize (\(limit)).",
                url: url)
        }
        let collected = Locked([UInt8]())
        do {
            try await source.produce(UploadSink { chunk in
                try collected.withLock { bytes throws(SessionError) in
                    guard bytes.count + chunk.count <= limit else {
                        throw SessionError(
                            .requestBodyTooLarge,
                            "Responses from \(host) are signed over the request body's digest, so \(name) is read into memory first; it exceeds maximumSignedRequestBodySize (\(limit) bytes).",
                            url: url)
                    }
                    bytes += chunk
                }
            })
        } catch let error as SessionError where error.code == .requestBodyTooLarge || error.code == .bodyNotReplayable {
            throw SessionError(error.code, error.reason, url: url)
        } catch is CancellationError {
            throw SessionError(.cancelled, "The task was cancelled while \(name) was being read.", url: url)
        } catch {
            throw SessionError(.uploadFailed, "Reading \(name) failed: \((error as? SessionError)?.reason ?? "\(error)")", url: url)
        }
        var buffered = request
        buffered.body = collected.withLock { $0 }
        if let length, buffered.body?.count != length {
            throw SessionError(
                .uploadFailed, "Reading \(name) failed: it produced \(buffered.body?.count ?? 0) bytes, not its declared \(length).", url: url)
        }
        return buffered
    }

    // MARK: Failure reports

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
                failure: error, mode: mode, policy: report.policyEvaluator, hostname: report.host, port: port,
                pattern: report.matchedPattern, servedChain: report.presentedCertificates,
                validatedChain: report.validatedCertificates, date: now)
            let submission = reporter?.submit(failureReport, pattern: report.matchedPattern) ?? .noReportURI
            hook?(TrustFailureEvent(url: url, report: failureReport, submission: submission))
        }
    }

    // MARK: Policies

    /// The policy for a host as the URL spells it (``PolicyRegistry/policy(forRawHost:override:)``).
    func policy(forRawHost rawHost: String, override: (any ServerTrustEvaluating)?) throws(SessionError) -> TrustPolicy {
        try policies.policy(forRawHost: rawHost, override: override)
    }

    /// A new policy for a normalised host: `override`, else the trust manager's match, else
    /// default validation. Called by the registry when it holds none for the host.
    private static func makePolicy(
        forHost host: NormalizedHost, override: (any ServerTrustEvaluating)?, trustManager: ServerTrustManager?, parts: PolicyParts
    ) throws(SessionError) -> TrustPolicy {
        let evaluator: any ServerTrustEvaluating
        var pattern: String?
        if let override {
            evaluator = override
        } else if let trustManager {
            do {
                if let match = try trustManager.match(forHost: host.name) {
                    evaluator = match.evaluator
                    pattern = match.pattern.description
                } else {
                    evaluator = DefaultTrustEvaluator()
                }
            } catch let error as TrustError {
                throw SessionError(.trustEvaluationFailed, "No trust policy for \(host).", trustError: error, url: host.name)
            } catch {
                throw SessionError(.trustEvaluationFailed, "No trust policy for \(host): \(error)", url: host.name)
            }
        } else {
            evaluator = DefaultTrustEvaluator()
        }
        let configuration = parts.configuration
        return TrustPolicy(
            host: host, pattern: pattern, evaluator: evaluator, anchors: parts.anchors,
            validationOptions: configuration.validationOptions, revocationFetcher: parts.revocationFetcher,
            counters: configuration.trustCounters, logger: configuration.logger, clock: configuration.clock,
            maximumConnectionLifetime: parts.connectionLifetime,
            writesTLSSecretsToKeyLog: configuration.unsafeWriteTLSSecretsToSSLKEYLOGFILE,
            clientIdentity: parts.clientIdentities.identity(for: host), metrics: parts.metrics, handlePool: parts.handlePool)
    }

    /// What every policy of a session is made with.
    private struct PolicyParts: Sendable {
        let configuration: Configuration
        let anchors: TrustAnchors
        let revocationFetcher: any RevocationFetcher
        let connectionLifetime: TimeInterval
        let clientIdentities: ClientIdentityTable
        let metrics: SessionMetrics?
        let handlePool: PolicyHandles.Pool
    }

    /// `url`'s scheme, lower-cased. RFC 3986's scheme is everything before the first colon, so a
    /// serialised URL that starts `https:` (either case) has the scheme `https`, read from its
    /// first six bytes; any other is asked of Foundation (`URL.scheme` re-reads the string,
    /// ≈ 450 instructions). `startsWithHTTPS` is ``startsWithHTTPS(_:)`` of `url`'s absolute
    /// string, which the caller tests once for both the scheme and the host.
    static func lowercasedScheme(of url: URL, startsWithHTTPS: Bool) -> String {
        startsWithHTTPS ? "https" : url.scheme?.lowercased() ?? ""
    }

    /// Whether `text` starts `https:`, in any case.
    static func startsWithHTTPS(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable(startsWithHTTPS) == true
    }

    private static func startsWithHTTPS(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // `byte | 0x20` lower-cases a letter and maps no other byte onto one.
        bytes.count >= 6 && bytes[0] | 0x20 == 0x68 && bytes[1] | 0x20 == 0x74 && bytes[2] | 0x20 == 0x74 && bytes[3] | 0x20 == 0x70
            && bytes[4] | 0x20 == 0x73 && bytes[5] == 0x3A
    }

    /// The host of an `https://` URL whose authority is only a host name of letters, digits,
    /// dots and hyphens, with or without a port of digits; nil for any other URL, whose host is
    /// asked of Foundation (`URL.host` parses the string again and percent-decodes the host,
    /// ≈ 1.1 k instructions per request).
    ///
    /// For such an authority, the bytes between `//` and the port or path are the host as
    /// Foundation reads it: nothing in it can be percent-decoded, bracketed, preceded by user
    /// information or mapped by IDNA, and `URL` keeps a host's case. Anything else — `%`, `@`,
    /// `[`, `_`, a non-ASCII byte, an empty or non-numeric port — takes Foundation's parse
    /// (`RequestValueTests` checks the two agree).
    static func plainHTTPSHost(of absoluteString: String) -> String? {
        startsWithHTTPS(absoluteString) ? plainHTTPSHost(afterPrefixOf: absoluteString) : nil
    }

    /// ``plainHTTPSHost(of:)`` for a string known to start `https:` (``startsWithHTTPS(_:)``),
    /// which ``makeTransfer(_:stream:)`` has already tested for the scheme. Its first six
    /// bytes are not looked at again.
    private static func plainHTTPSHost(afterPrefixOf absoluteString: String) -> String? {
        absoluteString.utf8.withContiguousStorageIfAvailable { bytes -> String? in
            let count = bytes.count
            guard count > 8, bytes[6] == 0x2F, bytes[7] == 0x2F else { return nil }
            // The host: letters, digits, dots and hyphens (`&-` range tests: one compare each).
            var index = 8
            while index < count {
                let byte = bytes[index]
                guard (byte | 0x20) &- 0x61 < 26 || byte &- 0x30 < 10 || byte == 0x2E || byte == 0x2D else { break }
                index += 1
            }
            let end = index
            guard end > 8 else { return nil }
            // A port: `:` and one or more digits.
            if index < count, bytes[index] == 0x3A {
                index += 1
                let digits = index
                while index < count, bytes[index] &- 0x30 < 10 { index += 1 }
                guard index > digits else { return nil }
            }
            // Then the end of the authority: the string's, or `/`, `?`, `#`. Anything else —
            // `@`, `%`, `[`, `_`, a second `:`, a non-ASCII byte — is left to Foundation.
            if index < count {
                let byte = bytes[index]
                guard byte == 0x2F || byte == 0x3F || byte == 0x23 else { return nil }
            }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[8..<end]), as: UTF8.self)
        } ?? nil
    }

    /// `text` as an absolute URL. A string Foundation parsed that starts `https:` has that
    /// scheme (RFC 3986: everything before the first colon), so only other strings ask
    /// `URL.scheme`, which parses the string again (≈ 450 instructions).
    private func parse(_ text: String) throws(SessionError) -> URL {
        guard let url = URL(string: text), Self.startsWithHTTPS(text) || url.scheme != nil else {
            throw SessionError(.invalidRequest, "\"\(URLRedaction.redacted(text))\" is not an absolute URL.")
        }
        return url
    }
}

/// Runs `body` with a session that is shut down when it returns or throws.
public func withSession<T>(
    configuration: Session.Configuration = Session.Configuration(), trustManager: ServerTrustManager? = nil,
    _ body: (Session) async throws -> T
) async throws -> T {
    let session = try Session(configuration: configuration, trustManager: trustManager)
    defer { session.shutdown() }
    return try await body(session)
}
