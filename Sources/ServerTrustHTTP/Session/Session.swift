public import Foundation
public import ServerTrust

/// An async/await HTTPS client over libcurl that applies a trust policy to every connection.
///
/// Every TLS connection is evaluated inside the handshake by the evaluator the
/// ``ServerTrustManager`` assigns to its host, and every request — on a new, reused or resumed
/// connection, or as an HTTP/2 stream — is admitted only if its connection was accepted by
/// *that request's* policy. Redirects are followed by the session, each hop under its own host's
/// policy.
///
/// One curl multi handle on one dedicated thread serves all requests, except those of hosts
/// whose evaluator may fetch revocation data during the handshake
/// (``ServerTrustEvaluating/mayFetchRevocationData``): up to eight such hosts get a thread of
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
    private let anchors: TrustAnchors
    private let revocationFetcher: any RevocationFetcher
    private let policies = Locked(PolicyCache())
    private let signedResponses: SignedResponseChecker
    /// ``Configuration/maximumConnectionLifetime`` in seconds.
    private let connectionLifetime: TimeInterval
    private let clientIdentities: ClientIdentityTable

    private struct PolicyKey: Hashable {
        let host: String
        let evaluator: ObjectIdentifier?
    }

    /// Resolved policies, by normalised host and by the URL's own spelling of the host.
    ///
    /// Two namespaces, never mixed: a raw spelling maps to the policy of *its* normalisation,
    /// which is the one `byHost` holds for that normalised host, so every spelling of a host
    /// (`API.Example.com`, `api.example.com.`, `[0:0::1]`) shares one `TrustPolicy`. A raw key
    /// is never read as a normalised one: `HostName.normalize` is not idempotent
    /// (`a.test..` → `a.test.` → `a.test`), so one shared table could hand `a.test.`'s policy
    /// to a host that normalises to `a.test.`.
    private struct PolicyCache {
        var byHost: [PolicyKey: TrustPolicy] = [:]
        var byRawHost: [PolicyKey: TrustPolicy] = [:]
        static let limit = 10_000
    }

    /// - Parameters:
    ///   - configuration: settings; the defaults are safe.
    ///   - trustManager: per-host evaluators. Default nil: ``DefaultTrustEvaluator`` for every host.
    /// - Throws: ``SessionError/Code/unsupportedBackend`` when libcurl's TLS backend is not
    ///   OpenSSL; ``SessionError/Code/invalidRequest`` for a ``Configuration/maximumConnectionLifetime``
    ///   that is not positive, or a ``Configuration/contentDecoding`` coding the runtime libcurl
    ///   cannot decode; a ``TrustError`` when the system anchors cannot be loaded or a
    ///   ``Configuration/signedResponses`` or ``Configuration/clientIdentities`` pattern is
    ///   invalid; a ``ResponseSignatureError``
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
        try ContentDecodingPlan.validate(configuration.contentDecoding)
        self.configuration = configuration
        self.trustManager = trustManager
        let (seconds, attoseconds) = configuration.maximumConnectionLifetime.components
        connectionLifetime = TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
        signedResponses = try SignedResponseChecker(configuration: configuration)
        clientIdentities = try ClientIdentityTable(configuration.clientIdentities)
        anchors = try configuration.anchors.resolve()
        revocationFetcher = configuration.revocationFetcher ?? CurlRevocationFetcher(userAgent: configuration.userAgent, resolve: configuration.resolve)
        loop = try MultiLoop(configuration: configuration)
        revocationLoops = RevocationLoops(configuration: configuration)
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
    var liveShareHandles: Int { loops.reduce(0) { $0 + $1.liveShareHandles } }
    /// Finished easy handles kept for reuse (tests).
    var idleEasyHandles: Int { loops.reduce(0) { $0 + $1.idleEasyHandles } }
    /// Policies in the session's cache (tests).
    var cachedPolicies: Int { policies.withLock { $0.byHost.count } }

    /// Fails every transfer still running and releases every curl handle. Idempotent.
    public func shutdown() {
        loop.shutdown()
        revocationLoops.shutdown()
    }

    // MARK: Requests

    /// Sends `request` and returns the whole response, following redirects per the configuration.
    ///
    /// - Throws: ``SessionError``; ``SessionError/Code/trustEvaluationFailed`` carries the
    ///   ``TrustError`` that rejected the server; ``SessionError/Code/responseSignatureInvalid``
    ///   the ``ResponseSignatureError`` of a hop an enforced signed-response policy rejected.
    public func data(for request: Request) async throws -> Response {
        var current = request
        var hops = HopLog()
        while true {
            let (signed, pending) = try signedResponses.prepare(current)
            let outcome = try await reportingTrustFailures(url: current.url) { try await perform(signed) }
            reportTrustFailures(of: outcome.report, url: current.url)
            let verification = try signedResponses.verify(
                pending, status: outcome.head.status, headers: outcome.head.headers, body: outcome.body, url: current.url)
            hops.record(outcome.report, verification: verification)
            if let next = try nextHop(after: current, head: outcome.head, hopsSoFar: hops.count) {
                current = next
                continue
            }
            // Decoded only now, after the signature check on the bytes as received.
            let (body, decoded) = try outcome.contentDecoding.finish(
                outcome.body, headers: outcome.head.headers, limit: configuration.maximumResponseBodySize, url: current.url.absoluteString)
            return Response(
                status: outcome.head.status, headers: outcome.head.headers, body: body, url: current.url,
                trust: outcome.report, hops: hops.reports, httpVersion: outcome.head.httpVersion,
                verification: hops.verification, hopVerifications: hops.verifications, decodedContentEncodings: decoded)
        }
    }

    /// `GET url`.
    public func get(_ url: String, headers: [(name: String, value: String)] = []) async throws -> Response {
        try await data(for: Request(method: "GET", url: try parse(url), headers: headers))
    }

    /// `POST url` with a body.
    public func post(_ url: String, body: [UInt8], headers: [(name: String, value: String)] = []) async throws -> Response {
        try await data(for: Request(method: "POST", url: try parse(url), headers: headers, body: body))
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
    public func stream(_ request: Request) async throws -> StreamingResponse {
        var current = request
        var hops = HopLog()
        while true {
            try signedResponses.refuseStreaming(current)
            let (head, report, body) = try await reportingTrustFailures(url: current.url) { try await performStreaming(current) }
            reportTrustFailures(of: report, url: current.url)
            // Every hop of a stream is unchecked: a checked host was refused above.
            hops.record(report, verification: .notRequested)
            if let next = try nextHop(after: current, head: head, hopsSoFar: hops.count) {
                body.onTermination()
                current = next
                continue
            }
            return StreamingResponse(
                status: head.status, headers: head.headers, url: current.url, trust: report, hops: hops.reports, httpVersion: head.httpVersion,
                body: body)
        }
    }

    // MARK: One hop

    private func perform(_ request: Request) async throws -> Transfer.Outcome {
        let result = OneShot<Transfer.Outcome>()
        let transfer = try makeTransfer(request, stream: nil, onHead: nil) { result.resume(with: $0) }
        return try await run(transfer, awaiting: result)
    }

    private func performStreaming(_ request: Request) async throws -> (ResponseHead, TrustReport, ResponseBody) {
        let stream = BodyStream()
        let head = OneShot<(ResponseHead, TrustReport)>()
        let transfer = try makeTransfer(request, stream: stream, onHead: { head.resume(with: $0) }) { _ in }
        let loop = self.loop(running: transfer)
        stream.setResumeHandler { [loop] in loop.resume(transfer) }
        let (responseHead, report) = try await run(transfer, awaiting: head)
        let body = ResponseBody(stream: stream) { [loop] in
            loop.cancel(transfer, SessionError(.cancelled, "The body stream was abandoned.", url: transfer.url))
        }
        return (responseHead, report, body)
    }

    /// Submits `transfer` and waits for `result`, cancelling the transfer if the task is cancelled.
    private func run<T: Sendable>(_ transfer: Transfer, awaiting result: OneShot<T>) async throws -> T {
        let loop = self.loop(running: transfer)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                result.attach(continuation)
                loop.submit(transfer)
            }
        } onCancel: { [loop] in
            transfer.requestCancellation()
            loop.cancel(transfer, SessionError(.cancelled, "The task was cancelled.", url: transfer.url))
        }
    }

    private func makeTransfer(
        _ request: Request, stream: BodyStream?,
        onHead: (@Sendable (Result<(ResponseHead, TrustReport), SessionError>) -> Void)?,
        completion: @escaping @Sendable (Result<Transfer.Outcome, SessionError>) -> Void
    ) throws(SessionError) -> Transfer {
        let url = request.url.absoluteURL
        let scheme = url.scheme?.lowercased() ?? ""
        guard scheme == "https" || (scheme == "http" && configuration.allowsPlainHTTP) else {
            throw SessionError(
                .invalidRequest,
                scheme == "http"
                    ? "Plain http: URLs carry no TLS and cannot be evaluated; use https:, or set allowsPlainHTTP."
                    : "Unsupported URL scheme \"\(scheme)\"; only https: is allowed.",
                url: url.absoluteString)
        }
        guard let rawHost = url.host, !rawHost.isEmpty else {
            throw SessionError(.invalidRequest, "The URL has no host.", url: url.absoluteString)
        }
        for field in request.headers where field.name.contains(where: { $0 == ":" || $0.isNewline }) || field.value.contains(where: \.isNewline) {
            throw SessionError(.invalidRequest, "Header \"\(field.name)\" contains a colon or a line break.", url: url.absoluteString)
        }
        if let timeout = request.timeout, timeout <= .zero {
            throw SessionError(.invalidRequest, "The request timeout must be positive (it is \(timeout)).", url: url.absoluteString)
        }
        let policy = try self.policy(forRawHost: rawHost, override: request.trustEvaluator)
        // The session's own list was checked in init; a request's override is checked here.
        if let override = request.contentDecoding { try ContentDecodingPlan.validate(override, url: url.absoluteString) }
        let codings = request.contentDecoding ?? configuration.contentDecoding
        let contentDecoding = ContentDecodingPlan(codings, verifiesSignatures: signedResponses.requiresVerification(url))
        let completion = try bookLoop(for: policy, cacheable: Self.cacheIdentity(of: request.trustEvaluator).cacheable, completion)
        return Transfer(
            url: url.absoluteString, method: request.method.uppercased(), headers: request.headers, body: request.body,
            policy: policy, isTLS: scheme == "https", bodyLimit: stream == nil ? configuration.maximumResponseBodySize : nil,
            timeout: request.timeout ?? configuration.requestTimeout, contentDecoding: contentDecoding, stream: stream, onHead: onHead, onCompletion: completion)
    }

    // MARK: Failure reports

    /// Runs one hop; when trust evaluation rejected it, reports the rejection before rethrowing.
    private func reportingTrustFailures<T>(url: URL, _ hop: () async throws -> T) async throws -> T {
        do {
            return try await hop()
        } catch let error as SessionError {
            if let rejected = error.rejectedTrust { reportTrustFailures(of: rejected, url: url) }
            throw error
        }
    }

    /// Reports the rejection and the findings of one hop's evaluation to the reporter and the
    /// hook. Never throws, never waits: delivery runs on the reporter's own task.
    private func reportTrustFailures(of report: TrustReport, url: URL) {
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

    /// The policy for a host as the URL spells it, looked up by that spelling first: normalising
    /// costs more than the rest of the lookup (≈ 8.5 k instructions for an IP literal).
    func policy(forRawHost rawHost: String, override: (any ServerTrustEvaluating)?) throws(SessionError) -> TrustPolicy {
        let (cacheable, identity) = Self.cacheIdentity(of: override)
        let rawKey = PolicyKey(host: rawHost, evaluator: identity)
        if cacheable, let cached = policies.withLock({ $0.byRawHost[rawKey] }) { return cached }
        let policy = try self.policy(forHost: HostName.normalize(rawHost), override: override)
        if cacheable {
            policies.withLock { cache in
                // Only a policy byHost still holds, so a spelling never outlives its host's entry.
                guard cache.byHost[PolicyKey(host: policy.host, evaluator: identity)] === policy else { return }
                if cache.byRawHost.count >= PolicyCache.limit { cache.byRawHost.removeAll() }
                cache.byRawHost[rawKey] = policy
            }
        }
        return policy
    }

    /// Whether a policy with this override may be cached, and the override's part of the key:
    /// an evaluator that is not a class instance has no identity to key it by.
    private static func cacheIdentity(of override: (any ServerTrustEvaluating)?) -> (cacheable: Bool, identity: ObjectIdentifier?) {
        let identity = override.flatMap { type(of: $0) is AnyObject.Type ? ObjectIdentifier($0 as AnyObject) : nil }
        return (override == nil || identity != nil, identity)
    }

    /// The policy for a normalised host, resolved once and cached: a manager lookup per request
    /// would cost kept-alive throughput for nothing.
    private func policy(forHost host: String, override: (any ServerTrustEvaluating)?) throws(SessionError) -> TrustPolicy {
        let (cacheable, identity) = Self.cacheIdentity(of: override)
        let key = PolicyKey(host: host, evaluator: identity)
        if cacheable, let cached = policies.withLock({ $0.byHost[key] }) { return cached }

        let evaluator: any ServerTrustEvaluating
        var pattern: String?
        if let override {
            evaluator = override
        } else if let trustManager {
            do {
                if let match = try trustManager.match(forHost: host) {
                    evaluator = match.evaluator
                    pattern = match.pattern.description
                } else {
                    evaluator = DefaultTrustEvaluator()
                }
            } catch let error as TrustError {
                throw SessionError(.trustEvaluationFailed, "No trust policy for \(host).", trustError: error, url: host)
            } catch {
                throw SessionError(.trustEvaluationFailed, "No trust policy for \(host): \(error)", url: host)
            }
        } else {
            evaluator = DefaultTrustEvaluator()
        }
        let policy = TrustPolicy(
            host: host, pattern: pattern, evaluator: evaluator, anchors: anchors,
            validationOptions: configuration.validationOptions, revocationFetcher: revocationFetcher,
            counters: configuration.trustCounters, logger: configuration.logger, clock: configuration.clock,
            maximumConnectionLifetime: connectionLifetime,
            writesTLSSecretsToKeyLog: configuration.unsafeWriteTLSSecretsToSSLKEYLOGFILE,
            clientIdentity: clientIdentities.identity(forNormalizedHost: host))
        if cacheable {
            let (filed, evictedThrough) = policies.withLock { cache -> (TrustPolicy, UInt64?) in
                // Two requests may resolve the same host at once: the first one filed wins, so
                // a host keeps one policy (and one stamp) however many spellings reach it.
                if let filed = cache.byHost[key] { return (filed, nil) }
                var evictedThrough: UInt64?
                if cache.byHost.count >= PolicyCache.limit {
                    evictedThrough = cache.byHost.values.lazy.map(\.id).max()
                    cache.byHost.removeAll()
                    cache.byRawHost.removeAll()
                }
                cache.byHost[key] = policy
                return (policy, evictedThrough)
            }
            // The dropped policies' curl shares go once nothing else uses them (PolicyShares),
            // and their revocation loops once their transfers have ended.
            if let evictedThrough {
                loop.sweepShares()
                revocationLoops.evict(through: evictedThrough)
            }
            return filed
        }
        return policy
    }

    // MARK: Redirects

    private static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    /// The request for the next hop, or nil when `head` is not a redirect to follow.
    private func nextHop(after request: Request, head: ResponseHead, hopsSoFar: Int) throws(SessionError) -> Request? {
        let maximum = configuration.redirectPolicy.maximumHops
        guard maximum > 0, Self.redirectStatuses.contains(head.status),
            let location = head.headers.first(where: { $0.name.lowercased() == "location" })?.value
        else { return nil }
        guard hopsSoFar <= maximum else {
            throw SessionError(.tooManyRedirects, "More than \(maximum) redirects.", url: request.url.absoluteString)
        }
        guard let target = URL(string: location, relativeTo: request.url)?.absoluteURL, target.host != nil else {
            throw SessionError(.invalidRequest, "The redirect Location \"\(location)\" is not a valid URL.", url: request.url.absoluteString)
        }
        let fromScheme = request.url.scheme?.lowercased()
        let toScheme = target.scheme?.lowercased()
        guard toScheme == "https" || (toScheme == "http" && fromScheme == "http" && configuration.allowsPlainHTTP) else {
            throw SessionError(
                .insecureRedirect, "Refusing a redirect from \(fromScheme ?? "?"): to \(toScheme ?? "?"): (\(target.absoluteString)).",
                url: request.url.absoluteString)
        }
        var next = request
        next.url = target
        if head.status == 303 && request.method != "HEAD" || (head.status == 301 || head.status == 302) && request.method == "POST" {
            next.method = "GET"
            next.body = nil
            next.headers.removeAll { ["content-type", "content-length"].contains($0.name.lowercased()) }
        }
        if !Self.sameOrigin(request.url, target) {
            next.headers.removeAll { ["authorization", "cookie", "proxy-authorization"].contains($0.name.lowercased()) }
        }
        if HostName.normalize(request.url.host ?? "") != HostName.normalize(target.host ?? "") {
            next.trustEvaluator = nil  // a per-request evaluator speaks for its own host only
        }
        return next
    }

    private static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        func port(_ url: URL) -> Int? { url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil) }
        return a.scheme?.lowercased() == b.scheme?.lowercased()
            && HostName.normalize(a.host ?? "") == HostName.normalize(b.host ?? "") && port(a) == port(b)
    }

    private func parse(_ text: String) throws(SessionError) -> URL {
        guard let url = URL(string: text), url.scheme != nil else {
            throw SessionError(.invalidRequest, "\"\(text)\" is not an absolute URL.")
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

/// A response whose body is still arriving.
public struct StreamingResponse: Sendable {
    public let status: Int
    public let headers: [(name: String, value: String)]
    public let url: URL
    public let trust: TrustReport
    public let hops: [TrustReport]
    public let httpVersion: String
    public let body: ResponseBody

    /// The final hop's trust result, as ``Response/trustResult``.
    public var trustResult: TrustResult { trust.result }

    /// The first value of a header, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}
