import Foundation

/// One attempt's result, as the hop driver sees it.
protocol HopResult: Sendable {
    var head: ResponseHead { get }
    var report: TrustReport { get }
}

/// A hop of ``Session/data(for:)``: the whole transfer and the signed-response challenge it answers.
struct BufferedHop: HopResult {
    let outcome: Transfer.Outcome
    let pending: SignedResponseChecker.Pending?
    var head: ResponseHead { outcome.head }
    var report: TrustReport { outcome.report }
}

/// A hop of ``Session/stream(_:)``: the head, and the body still arriving.
struct StreamedHop: HopResult {
    let head: ResponseHead
    let report: TrustReport
    let body: ResponseBody
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
    /// For each hop: `lookUp` its host when the call must decide something by the host's policy
    /// before sending (nil otherwise: the transfer reads the host itself), and `prepare` the
    /// request with it (it may also refuse the hop by throwing); `send` it — each attempt
    /// (``Session/Configuration/retryPolicy``) traced as its own hop span, with its trust
    /// rejection reported, the first attempt with the host read before, a retry with a new
    /// look-up; report the accepted hop's report-only findings; record its trust report,
    /// `verify`'s signed-response result and its attempts; then follow a redirect per
    /// ``RedirectRules`` (after `leave` on the hop left behind) or return the final hop. Every
    /// hop, redirects included, is admitted by its own host's policy inside `send`.
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
    nonisolated(nonsending) func follow<Result: HopResult>(
        _ request: Request,
        lookUp: (Request) -> HopHost?,
        prepare: nonisolated(nonsending) (Request, HopHost) async throws -> Request,
        send: nonisolated(nonsending) (Request, HopHost?) async throws -> Result,
        verify: (Result, Request) throws -> ResponseVerification,
        leave: (Result) -> Void
    ) async throws -> FinalHop<Result> {
        var current = request
        var hops = HopLog()
        let session = self.session
        while true {
            let host = lookUp(current)
            if let host { current = try await prepare(current, host) }
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
                        try await session.reportingTrustFailures(url: hopRequest.url) { try await send(traced, attemptHost) }
                    }
                    span.succeeded(status: result.head.status, httpVersion: result.head.httpVersion, trust: result.report)
                    return result
                }
            } else {
                // No span to record and no retry to make: the one attempt runs here, where the
                // path above enters four more async functions (`withRetries`, its attempt, the
                // span's `observing`, `reportingTrustFailures`) that would each do nothing but
                // pass it through. What they do for a failure is done here: a trust rejection
                // is reported, and the error says one attempt was made.
                do {
                    result = try await send(hopRequest, host)
                } catch var error as SessionError {
                    if session.reportsTrustFailures, let rejected = error.rejectedTrust {
                        session.reportTrustFailures(of: rejected, url: hopRequest.url)
                    }
                    error.attempts = 1
                    throw error
                }
                attempts = 1
            }
            if session.reportsTrustFailures { session.reportTrustFailures(of: result.report, url: current.url) }
            let verification = try verify(result, current)
            hops.record(result.report, verification: verification, attempts: attempts)
            if let next = try redirects.nextRequest(
                after: current, status: result.head.status, headers: result.head.headers, hopsSoFar: hops.count)
            {
                leave(result)
                current = next
                continue
            }
            return FinalHop(result: consume result, request: current, hops: hops, attempts: attempts)
        }
    }
}

// MARK: One hop

extension Session {
    // Fast path: docs/PERFORMANCE.md#fast-paths, "Fewer frames and copies per request".
    /// Sends one hop and waits for its whole outcome. Inlined, as is ``run(_:)``, into the
    /// hop's `send`: each was an async frame of its own that only passed the call on.
    @inline(__always) nonisolated(nonsending) func perform(
        _ request: Request, host: HopHost?, signing pending: inout SignedResponseChecker.Pending?
    ) async throws -> Transfer.Outcome {
        try await run(try makeTransfer(request, host: host, stream: nil, signing: &pending))
    }

    nonisolated(nonsending) func performStreaming(_ request: Request, host: HopHost?) async throws -> (ResponseHead, TrustReport, ResponseBody) {
        let stream = BodyStream()
        var unsigned: SignedResponseChecker.Pending?
        let transfer = try makeTransfer(request, host: host, stream: stream, signing: &unsigned)
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
    @inline(__always) nonisolated(nonsending) func run(_ transfer: Transfer) async throws -> Transfer.Outcome {
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
}
