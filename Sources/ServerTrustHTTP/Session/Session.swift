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
    /// The per-host policies in force; nil means default validation for every host.
    public var trustManager: ServerTrustManager? { liveTrustManager?.current }
    /// Where the per-host policies come from: the manager given to the initialiser, or the
    /// `LiveTrustManager` trust updates replace (``init(configuration:liveTrustManager:)``).
    public let liveTrustManager: LiveTrustManager?
    /// The tables of the manager in force (``SessionTrust``), made again when it is replaced.
    let trustTables: Locked<SessionTrust>

    let loop: MultiLoop
    /// The loops of policies that may fetch revocation data in the handshake.
    let revocationLoops: RevocationLoops
    /// Policies by host, resolved once (``PolicyRegistry``).
    let policies: PolicyRegistry
    /// The curl handles of every policy, retired with their policies (``PolicyHandles``).
    let handlePool: PolicyHandles.Pool
    /// Signs requests and checks responses for hosts whose policy asks (each host's compiled
    /// policy is on its ``TrustPolicy``).
    let signedResponses: SignedResponseChecker
    /// Upload figures (``SessionProbe``: the back-pressure bound, whether a producer ran).
    let uploadStatistics = UploadStatistics()
    /// ``Configuration/metricsFactory`` resolved once; nil when it is the no-op handler.
    let metrics: SessionMetrics?
    // Fast path: docs/PERFORMANCE.md#fast-paths, "Fewer frames and copies per request".
    /// Whether ``Configuration/tracer`` is set, decided once.
    let hasConfiguredTracer: Bool
    /// Where rejections and findings go: ``Configuration/failureReporter`` and
    /// ``Configuration/onTrustFailure``.
    let failureDelivery: TrustFailureDelivery
    /// The ``ContentDecodingPlan`` of ``Configuration/contentDecoding``, for a host whose
    /// responses are not signature-checked and for one whose are, made once; a request with
    /// its own ``Request/contentDecoding`` makes its own.
    let decodingPlans: (unchecked: ContentDecodingPlan, checked: ContentDecodingPlan, checkedCoveringEncoding: ContentDecodingPlan)

    /// - Parameters:
    ///   - configuration: settings; the defaults are safe.
    ///   - trustManager: per-host evaluators. Default nil: `DefaultTrustEvaluator` for every host.
    /// - Throws: ``SessionError/Code/unsupportedBackend`` when libcurl's TLS backend is not
    ///   OpenSSL; ``SessionError/Code/invalidRequest`` for a configuration value out of range
    ///   (``Configuration/maximumConnectionLifetime``, ``Configuration/maximumIdleHandles``,
    ///   ``Configuration/contentDecoding``, ``Configuration/retryPolicy``, a
    ///   ``Configuration/proxy`` that is not `http://`); a `TrustError` when the system anchors
    ///   cannot be loaded or OpenSSL refuses a host policy's client identity; a `ResponseSignatureError` (`.invalidConfiguration`) for a
    ///   signed-response policy without roots.
    public convenience init(configuration: Configuration = Configuration(), trustManager: ServerTrustManager? = nil) throws {
        try self.init(configuration: configuration, source: trustManager.map(LiveTrustManager.init))
    }

    /// A session whose per-host policies are those `liveTrustManager` holds at each request:
    /// when a trust update replaces its manager (`LiveTrustManager.replace(with:)`), new
    /// connections are evaluated under the new policies, and a kept-alive connection accepted
    /// under a replaced one is evaluated again under the new policy before its next request.
    ///
    /// - Parameters:
    ///   - configuration: settings; the defaults are safe.
    ///   - liveTrustManager: the source of the per-host policies.
    /// A manager that does not fit `configuration` (signed-response policies, client identities
    /// or report URIs set both in its host policies and in the configuration) is refused closed
    /// either way: the one in force when the session is made makes this initialiser throw, so
    /// no session exists; one that a later trust update puts in force makes every request fail
    /// with ``SessionError/Code/trustEvaluationFailed`` naming the conflict (the `TrustError` in
    /// ``SessionError/trustError``), until a manager that fits replaces it. Configure signed
    /// responses and client identities in the host policies alone when a trust update may
    /// deliver them.
    ///
    /// - Throws: what ``init(configuration:trustManager:)`` throws, for the manager in force
    ///   when the session is made: a conflict with `configuration` is a `TrustError`
    ///   `.invalidConfiguration` (signed responses or client identities set both ways) or a
    ///   ``SessionError/Code/invalidRequest`` (report URIs set both ways).
    public convenience init(configuration: Configuration = Configuration(), liveTrustManager: LiveTrustManager) throws {
        try self.init(configuration: configuration, source: liveTrustManager)
    }

    private init(configuration: Configuration, source: LiveTrustManager?) throws {
        do throws(TrustError) {
            try CurlRuntime.requireOpenSSLBackend()
        } catch {
            throw SessionError(.unsupportedBackend, error.reason, trustError: error)
        }
        try configuration.validate()
        self.configuration = configuration
        self.liveTrustManager = source
        let (seconds, attoseconds) = configuration.maximumConnectionLifetime.components
        let connectionLifetime = TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
        let snapshot = source?.snapshot
        trustTables = Locked(try SessionTrust.make(snapshot?.manager, generation: snapshot?.generation ?? 0, configuration: configuration))
        signedResponses = SignedResponseChecker(configuration: configuration)
        let anchors = try configuration.anchors.resolve()
        let metrics = SessionMetrics(factory: configuration.metricsFactory)
        self.metrics = metrics
        hasConfiguredTracer = configuration.tracer != nil
        failureDelivery = TrustFailureDelivery(configuration)
        decodingPlans = (
            ContentDecodingPlan(configuration.contentDecoding, verifiesSignatures: false),
            ContentDecodingPlan(configuration.contentDecoding, verifiesSignatures: true),
            ContentDecodingPlan(configuration.contentDecoding, verifiesSignatures: true, signatureCoversContentEncoding: true)
        )
        let fetcher = configuration.revocationFetcher ?? CurlRevocationFetcher(userAgent: configuration.userAgent, resolve: configuration.resolve)
        let revocationFetcher = metrics.map { MeteredRevocationFetcher(upstream: fetcher, metrics: $0) } ?? fetcher
        let handlePool = PolicyHandles.Pool(idleCapacity: MultiLoop.idleHandleCapacity(configuration))
        self.handlePool = handlePool
        let loop = try MultiLoop(configuration: configuration, handlePool: handlePool)
        let revocationLoops = RevocationLoops(configuration: configuration, handlePool: handlePool)
        self.loop = loop
        self.revocationLoops = revocationLoops
        let parts = PolicyRegistry.PolicyParts(
            configuration: configuration, anchors: anchors, revocationFetcher: revocationFetcher,
            connectionLifetime: connectionLifetime, metrics: metrics, handlePool: handlePool)
        policies = PolicyRegistry(
            makePolicy: { host, override, trust throws(SessionError) in
                try PolicyRegistry.makePolicy(forHost: host, override: override, trust: trust, parts: parts)
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
    /// and the task resumes there; child tasks inherit the preference. What runs there holds
    /// up every transfer of the session: keep CPU-heavy and blocking work off it. Trust
    /// evaluation is unchanged whichever executor the caller runs on. After ``shutdown()`` the
    /// executor hands jobs to the global concurrent executor. See <doc:TaskExecutor>.
    public var taskExecutor: any TaskExecutor { loop }

    // MARK: Hosts and loops

    /// Whether responses from `url`'s host are signature-checked: the host's resolved policy
    /// (`HostPolicy.signedResponses`) is informational or enforced.
    ///
    /// Such a response needs its whole body before any of it can be used, so ``stream(_:)``
    /// refuses the request and ``data(for:)`` buffers and verifies it. An adapter that streams
    /// by default asks this to choose: ServerTrustOpenAPI's transport, for one.
    /// A redirect can still lead a stream to a checked host, where ``stream(_:)`` refuses
    /// that hop.
    public func checksSignedResponses(from url: URL) -> Bool {
        guard let host = url.host, let policy = try? policy(forRawHost: host, override: nil) else { return false }
        return policy.checksSignedResponses
    }

    /// The policy for a host as the URL spells it (``PolicyRegistry/policy(forRawHost:override:)``).
    func policy(forRawHost rawHost: String, override: (any ServerTrustEvaluating)?) throws(SessionError) -> TrustPolicy {
        let trust = currentTrust()
        if let failure = trust.failure { throw failure }
        return try policies.policy(forRawHost: rawHost, override: override, trust: trust)
    }

    // Fast path: docs/PERFORMANCE.md#fast-paths, "Trust generation read without a lock".
    /// The tables of the manager in force: the held ones while the live manager's generation
    /// is theirs, else new ones for the new manager (made once, under the lock).
    ///
    /// The live manager's generation is read first, without its lock
    /// (`LiveTrustManager.publishedGeneration`): while it is the held tables' — every request
    /// but the first after a replacement — one lock, the session's, is all a request takes.
    func currentTrust() -> SessionTrust {
        guard let source = liveTrustManager else { return trustTables.withLock { $0 } }
        let published = source.publishedGeneration
        if let held = trustTables.withLock({ $0.generation >= published ? $0 : nil }) { return held }
        let (manager, generation) = source.snapshot
        return trustTables.withLock { held in
            // A reader holding an older snapshot than the tables never moves them back.
            guard generation > held.generation else { return held }
            held = SessionTrust.replacing(held, with: manager, generation: generation, configuration: configuration)
            return held
        }
    }

    /// The loop that runs `transfer`: the one ``RevocationLoops/book(for:cacheable:)`` booked
    /// for it, else the main one. Once the transfer has ended that may be no loop (the main one
    /// is returned, where a cancel or resume of a finished transfer does nothing) or a new one
    /// of the same policy (likewise).
    func loop(running transfer: Transfer) -> MultiLoop {
        guard transfer.policy.mayFetchRevocationData else { return loop }
        return revocationLoops.loop(for: transfer.policy) ?? loop
    }

    /// Starts observing one call: metrics per ``Configuration/metricsFactory``, a span per
    /// ``Configuration/tracer``.
    func observe(_ request: Request) -> RequestObservation {
        RequestObservation(request, metrics: metrics, tracer: hasConfiguredTracer ? configuration.tracer : RequestObservation.activeTracer)
    }

    /// The session's internals as tests read them.
    var probe: SessionProbe { SessionProbe(session: self) }

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

    /// `GET url`.
    nonisolated(nonsending) public func get(_ url: String, headers: HTTPFields = HTTPFields()) async throws -> Response {
        try await data(for: Request(method: .get, url: try RequestURL.parse(url), headers: headers))
    }

    /// `POST url` with a body.
    nonisolated(nonsending) public func post(_ url: String, body: [UInt8], headers: HTTPFields = HTTPFields()) async throws -> Response {
        try await data(for: Request(method: .post, url: try RequestURL.parse(url), headers: headers, body: body))
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
