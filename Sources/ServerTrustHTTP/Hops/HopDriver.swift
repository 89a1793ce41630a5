import Foundation

/// One kind of hop — a buffered one of ``Session/data(for:)``, a streamed one of
/// ``Session/stream(_:)`` — and one attempt's result of it. The kind says, for ``HopDriver``,
/// what is done to a hop before it is sent, how it is sent, how its response is checked and
/// what is done to a hop a redirect leaves behind; the driver owns the rest.
protocol HopResult: Sendable {
    var head: ResponseHead { get }
    var report: TrustReport { get }

    /// The hop's host, looked up before it is sent when this kind must decide something by the
    /// host's policy first; nil otherwise (the transfer reads the host itself).
    static func lookUp(_ request: Request, in session: Session) -> HopHost?
    /// The request to send to `host`, or a throw that refuses the hop.
    nonisolated(nonsending) static func prepare(_ request: Request, host: HopHost, in session: Session) async throws -> Request
    /// One attempt: the hop sent, with the host read before (nil: the transfer reads it).
    nonisolated(nonsending) static func send(_ request: Request, host: HopHost?, in session: Session) async throws -> Self
    /// The signed-response verdict on this attempt's response to `request`.
    func verify(_ request: Request, in session: Session) throws -> ResponseVerification
    /// Lets go of a hop a redirect leaves behind.
    func leave()
}

/// A hop of ``Session/data(for:)``: the whole transfer and the signed-response challenge it answers.
struct BufferedHop: HopResult {
    let outcome: Transfer.Outcome
    let pending: SignedResponseChecker.Pending?
    var head: ResponseHead { outcome.head }
    var report: TrustReport { outcome.report }

    /// Looked up only for a streamed or file body, which a host with a signed-response policy
    /// needs read into memory first.
    @inline(__always) static func lookUp(_ request: Request, in session: Session) -> HopHost? {
        session.hasUnbufferedBody(request) ? session.hostOfHop(request) : nil
    }

    /// Kept buffered: a redirect that resends the body sends these bytes again.
    nonisolated(nonsending) static func prepare(_ request: Request, host: HopHost, in session: Session) async throws -> Request {
        try await session.bufferedForSigning(request, host: host)
    }

    @inline(__always) nonisolated(nonsending) static func send(_ request: Request, host: HopHost?, in session: Session) async throws -> Self {
        var pending: SignedResponseChecker.Pending?
        let outcome = try await session.perform(request, host: host, signing: &pending)
        return BufferedHop(outcome: outcome, pending: pending)
    }

    func verify(_ request: Request, in session: Session) throws -> ResponseVerification {
        try session.signedResponses.verify(
            pending, status: head.status, headers: head.headers, body: outcome.body, url: request.url, metrics: session.metrics)
    }

    func leave() {}
}

/// A hop of ``Session/stream(_:)``: the head, and the body still arriving.
struct StreamedHop: HopResult {
    let head: ResponseHead
    let report: TrustReport
    let body: ResponseBody

    /// Every hop's host is looked up before it is sent, once: a checked host is refused.
    static func lookUp(_ request: Request, in session: Session) -> HopHost? { session.hostOfHop(request) }

    nonisolated(nonsending) static func prepare(_ request: Request, host: HopHost, in session: Session) async throws -> Request {
        if host.checksSignedResponses { try SignedResponseChecker.refuseStreaming(request) }
        return request
    }

    nonisolated(nonsending) static func send(_ request: Request, host: HopHost?, in session: Session) async throws -> Self {
        let (head, report, body) = try await session.performStreaming(request, host: host)
        return StreamedHop(head: head, report: report, body: body)
    }

    /// Every hop of a stream is unchecked: a checked host was refused in ``prepare(_:host:in:)``.
    func verify(_ request: Request, in session: Session) throws -> ResponseVerification { .notRequested }

    func leave() { body.onTermination() }
}

/// The last hop of a call, with what the driver recorded on the way.
struct FinalHop<Result: HopResult> {
    let result: Result
    /// The final hop's request (its URL is the response's).
    let request: Request
    let hops: HopLog
    /// The final hop's attempts.
    let attempts: Int
}

/// The host of a hop and its policy, read once before the hop is sent when something must be
/// decided by the policy first (a streamed request's refusal for a checked host, a body read
/// into memory for signing), then handed to the hop's transfer, which does not read them again.
struct HopHost: Sendable {
    /// The host as the URL spells it (``Session/hostOfHop(_:)``); nil when the URL has none,
    /// which the transfer refuses after the URL's scheme, as for any hop.
    let rawHost: String?
    /// The host's policy, or why it has none: thrown where the transfer would have looked it up.
    let policy: Result<TrustPolicy, SessionError>?

    /// Whether the host's policy checks signed responses; false for a host with no policy (it
    /// is refused when the hop is sent, with the reason).
    var checksSignedResponses: Bool {
        if case .success(let policy)? = policy { policy.checksSignedResponses } else { false }
    }
}

/// The hop driver of both ``Session/data(for:)`` and ``Session/stream(_:)``: the retry rules
/// (``Session/RetryPolicy``) and the redirect rules (``RedirectRules``) applied to each hop.
///
/// A value made on the caller's stack for one call (no allocation): the session it sends
/// through, the call's observation, and the configuration's two sets of rules, read once.
struct HopDriver {
    let session: Session
    let observation: RequestObservation
    let retryPolicy: Session.RetryPolicy
    let redirects: RedirectRules

    @inline(__always) init(_ session: Session, observation: RequestObservation) {
        self.session = session
        self.observation = observation
        retryPolicy = session.configuration.retryPolicy
        redirects = RedirectRules(
            maximumHops: session.configuration.redirectPolicy.maximumHops, allowsPlainHTTP: session.configuration.allowsPlainHTTP)
    }

    // Fast path: docs/PERFORMANCE.md#fast-paths, "Direct single attempt".
    // Fast path: docs/PERFORMANCE.md#fast-paths, "Fewer frames and copies per request".
    /// Follows `request` to its final hop.
    ///
    /// For each hop, as its kind (`Result`, a ``HopResult``) says: look its host up when the
    /// kind must decide something by the host's policy before sending, and prepare the request
    /// with it (which may refuse the hop); send it — each attempt
    /// (``Session/Configuration/retryPolicy``) traced as its own hop span, with its trust
    /// rejection reported, the first attempt with the host read before, a retry with a new
    /// look-up; report the accepted hop's report-only findings; record its trust report, its
    /// signed-response verdict and its attempts; then follow a redirect per ``RedirectRules``
    /// (after letting go of the hop left behind) or return the final hop. Every hop, redirects
    /// included, is admitted by its own host's policy inside the send.
    ///
    /// A hop that no retry can follow and no span records (no tracer; no retry policy, or a
    /// request that may not be retried) is sent directly, in this function's own frame: the
    /// retry loop, the span and the rejection report would each be an async function of its own
    /// that only passed the attempt through. Its trust rejection is reported here.
    ///
    /// `nonisolated(nonsending)`, like every async helper under ``Session/data(for:)`` and
    /// ``Session/stream(_:)`` (`send`, `withRetries`, `observing`, `perform`, `run`), and like
    /// those public entry points themselves: each runs on the executor its caller is on instead
    /// of switching to the generic executor at entry. The caller decides where a request runs
    /// (its actor, `taskExecutor`'s loop thread, or the global executor); a switch per
    /// function only asked the runtime, under a task-status lock, for the task's preferred
    /// executor again.
    nonisolated(nonsending) func follow<Result: HopResult>(_ request: Request, as _: Result.Type) async throws -> FinalHop<Result> {
        var current = request
        var hops = HopLog()
        let session = self.session
        while true {
            let host = Result.lookUp(current, in: session)
            if let host { current = try await Result.prepare(current, host: host, in: session) }
            let hopRequest = current
            let hopIndex = hops.count
            let result: Result
            let attempts: Int
            if observation.tracesHops || (retryPolicy.maximumRetries > 0 && hopRequest.mayBeRetried) {
                var firstAttemptHost = host
                (result, attempts) = try await withRetries(hopRequest) {
                    let attemptHost = firstAttemptHost
                    firstAttemptHost = nil  // a retry looks its host up again, as a new transfer
                    var traced = hopRequest
                    let span = observation.startHop(&traced, index: hopIndex)
                    let result = try await span.observing {
                        try await session.failureDelivery.reporting(url: hopRequest.url) { try await Result.send(traced, host: attemptHost, in: session) }
                    }
                    span.succeeded(status: result.head.status, httpVersion: result.head.httpVersion, trust: result.report)
                    return result
                }
            } else {
                // No span to record and no retry to make: the one attempt runs here, where the
                // path above enters four more async functions (`withRetries`, its attempt, the
                // span's `observing`, `TrustFailureDelivery.reporting`) that would each do nothing but
                // pass it through. What they do for a failure is done here: a trust rejection
                // is reported, and the error says one attempt was made.
                do {
                    result = try await Result.send(hopRequest, host: host, in: session)
                } catch var error as SessionError {
                    if session.failureDelivery.isActive, let rejected = error.rejectedTrust {
                        session.failureDelivery.deliver(rejected, url: hopRequest.url)
                    }
                    error.attempts = 1
                    throw error
                }
                attempts = 1
            }
            if session.failureDelivery.isActive { session.failureDelivery.deliver(result.report, url: current.url) }
            let verification = try result.verify(current, in: session)
            hops.record(result.report, verification: verification, attempts: attempts)
            if let next = try redirects.nextRequest(
                after: current, status: result.head.status, headers: result.head.headers, hopsSoFar: hops.count)
            {
                result.leave()
                current = next
                continue
            }
            return FinalHop(result: consume result, request: current, hops: hops, attempts: attempts)
        }
    }
}
