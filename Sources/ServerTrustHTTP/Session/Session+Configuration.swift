public import CoreMetrics
public import Foundation
public import Logging
public import ServerTrust
public import Tracing

extension Session {
    /// Everything a session is configured with. The defaults are safe for production.
    public struct Configuration: Sendable {
        /// How long to wait for a connection (TCP + proxy + TLS). Default 10 s.
        public var connectTimeout: Duration = .seconds(10)
        /// How long a whole request may take, redirects excluded. Default 60 s; nil for no limit
        /// (for streaming downloads).
        public var requestTimeout: Duration? = .seconds(60)
        /// Redirect handling. Default: follow up to 5 hops, each evaluated under its own host's policy.
        public var redirectPolicy: RedirectPolicy = .follow(maximumHops: 5)
        /// Retries of idempotent requests whose connection failed before any response byte
        /// (refused, reset, HTTP/2 `GOAWAY`), with capped, jittered exponential backoff. Default
        /// ``RetryPolicy/none``. A trust rejection is never retried; see ``RetryPolicy``.
        /// Validated when the session is created.
        public var retryPolicy: RetryPolicy = .none
        /// Connections kept per host. Default 8.
        public var maximumConnectionsPerHost: Int = 8
        /// Idle connections the session keeps open for reuse, across hosts. Default nil: the
        /// larger of 32 and ``maximumConnectionsPerHost``. (libcurl's own default, four per
        /// transfer in progress, shrinks whenever few transfers are running, and closes
        /// connections a busy host is about to need again.)
        public var maximumCachedConnections: Int? = nil
        // Fast path: docs/PERFORMANCE.md#fast-paths, "Idle easy handles".
        /// Finished curl handles the session keeps, across hosts, for the next requests of the
        /// same host's policy. Default nil: the larger of 128 and the connection cache's size
        /// (``maximumCachedConnections``); 0 keeps none. Must not be negative.
        ///
        /// A burst of concurrent requests leaves one handle per request, not per connection:
        /// HTTP/2 carries up to 100 requests at once on one connection (libcurl's stream limit),
        /// and HTTP/1.1 queues the requests beyond ``maximumConnectionsPerHost`` on handles of
        /// their own. A handle the session did not keep is made, configured and freed again for
        /// a later request. An idle handle holds about 15 KiB (libcurl 7.88, measured after a transfer), so 128 hold about 2 MiB.
        public var maximumIdleHandles: Int? = nil
        /// How long a connection may serve new requests after the evaluation that admitted it.
        /// Default 1 hour; must be positive.
        ///
        /// A connection is retired earlier, at the first instant something its evaluation relied
        /// on stops holding (`PeerTrust.reliedOnUntil`): the validated chain's
        /// first notAfter, a pin set's expiration, the nextUpdate of an OCSP response or CRL. A
        /// request after that never runs on it: it is sent on a new connection with a full
        /// handshake, evaluated afresh. Requests already running finish. Kept-alive and HTTP/2
        /// connections alike; see the ConnectionGuard article.
        public var maximumConnectionLifetime: Duration = .seconds(3600)
        /// HTTP version preference. Default: HTTP/2 when the server offers it over ALPN.
        public var httpVersion: HTTPVersion = .http2Preferred
        /// An HTTP CONNECT proxy, or none (the default).
        public var proxy: Proxy? = nil
        /// The User-Agent header of every request that does not name its own; "" sends none.
        /// A line break or NUL in it is refused when the session is made
        /// (``SessionError/Code/invalidRequest``): it would start another header field.
        public var userAgent: String = "ServerTrust/1 libcurl/\(CurlRuntime.libcurlVersion)"
        /// The anchors default validation uses. Default: the system CA bundle, loaded once.
        public var anchors: Anchors = .system
        /// The largest response body accepted. Default 64 MiB. With ``contentDecoding`` it
        /// bounds the *decoded* body too: a small compressed body that inflates past it (a
        /// decompression bomb) fails with ``SessionError/Code/responseTooLarge``, stopped
        /// within 64 KiB of the limit, not after inflating everything.
        public var maximumResponseBodySize: Int = 64 << 20
        /// The content codings to ask for (`Accept-Encoding`, in this order) and to decode.
        /// Default empty: nothing is asked for and every body is returned as received, with
        /// whatever `Content-Encoding` the server chose.
        ///
        /// ``ContentCoding/gzip`` and ``ContentCoding/deflate`` always work;
        /// ``ContentCoding/brotli`` and ``ContentCoding/zstd`` only when the runtime libcurl has
        /// them (``ContentCoding/supportedByLibcurl`` lists what it has): configuring one it
        /// lacks fails at `Session.init` with ``SessionError/Code/invalidRequest``, rather than
        /// silently asking for less. ``Request/contentDecoding`` overrides this per request.
        ///
        /// libcurl decodes, as the body arrives (so ``Session/stream(_:)`` yields decoded
        /// chunks). The decoded size is bounded by ``maximumResponseBodySize``, a body that is
        /// not valid data of its coding, or whose `Content-Encoding` names a coding that cannot
        /// be decoded, fails with ``SessionError/Code/contentDecodingFailed``, and
        /// ``Response/decodedContentEncodings`` says what was undone; the `Content-Encoding` and
        /// `Content-Length` header fields are kept as received.
        ///
        /// Not for a host with an informational or enforced signed-response policy
        /// (`HostPolicy.signedResponses`): a v1 signature covers the body bytes
        /// but not `Content-Encoding`, so nothing is asked for and the body is handed over
        /// exactly as signed and received
        /// (``Response/undecodedContentEncodings`` names any coding on it).
        public var contentDecoding: [ContentCoding] = []
        /// The largest streamed or file request body (``Request/Body``) sent to a host with a
        /// signed-response policy. Such a body is read into memory before the request is sent,
        /// as the request signature covers its SHA-256 digest; a larger one is refused with
        /// ``SessionError/Code/requestBodyTooLarge`` before any connection is made. Other hosts
        /// stream bodies of any size. Default 4 MiB.
        public var maximumSignedRequestBodySize: Int = 4 << 20
        /// Fixed name-to-address mappings, curl's `HOST:PORT:ADDRESS` form (`--resolve`).
        public var resolve: [String] = []
        /// Path validation settings of every policy.
        public var validationOptions: PathValidationOptions = PathValidationOptions()
        /// Fetches OCSP responses and CRLs for evaluators that check revocation live. Default
        /// nil: a ``CurlRevocationFetcher`` with this configuration's user agent and `resolve`.
        public var revocationFetcher: (any RevocationFetcher)? = nil
        /// Allow `http:` URLs, which carry no TLS and so no trust evaluation. Default `false`.
        /// - Warning: a plain-HTTP request has no protection against interception.
        public var allowsPlainHTTP: Bool = false
        /// Called, on the requesting task, for every response (final or redirect hop) that fails
        /// signature verification, in informational and enforced mode alike, before the session
        /// returns or throws. Keep it quick; it must not call back into the session. Default: none.
        public var onVerificationFailure: (@Sendable (ResponseVerificationFailure) -> Void)? = nil
        /// Sends a `TrustFailureReport` for every trust failure: an enforced rejection, an
        /// informational evaluator's failure, a canary disagreement, an expired pin set falling
        /// back to default validation. The reporter delivers through a session of its own with
        /// default validation, never through the failing policy. Default: none.
        public var failureReporter: TrustFailureReporter? = nil
        /// Called, on the requesting task, for every trust failure of every hop (as for
        /// ``failureReporter``), reporter or not, before the session returns or throws. Keep it
        /// quick; it must not call back into the session. Default: none.
        public var onTrustFailure: (@Sendable (TrustFailureEvent) -> Void)? = nil
        /// Where evaluations and failures (by reason) are counted. Default: a fresh set, read it
        /// as ``Session/counters``.
        public var trustCounters: TrustCounters = TrustCounters()
        /// Where trust evaluations are logged: each at `debug`, each rejection and report-only
        /// failure at `error`, with `host`, `evaluator`, `reason` and `mode` metadata (see
        /// `TrustLogging`). Default `Logger(label: "servertrust")`.
        ///
        /// A failure its evaluator has logged already (`TrustFinding.isLogged`: an expired pin
        /// set falling back to default validation, logged by its `PinSetTrustEvaluator`'s
        /// logger) is counted and reported but not logged again.
        public var logger: Logger = TrustLogging.defaultLogger

        /// Where the session's metrics go (requests, failures by code, trust evaluations and
        /// failures by evaluator, handshake and request durations, revocation fetches and cache
        /// lookups; the names and labels are listed in <doc:Observability>). Default nil: the
        /// factory `MetricsSystem.factory` returns when the session is created — the one
        /// bootstrapped, else swift-metrics' no-op handler, in which case the session records
        /// nothing. No label ever holds a host, URL or path.
        public var metricsFactory: (any MetricsFactory)? = nil
        /// Traces each `data(for:)`/`stream(_:)` call as a span, each hop as a child span with an
        /// event for its trust evaluation, and injects the hop's context into its headers (W3C
        /// `traceparent` with an OpenTelemetry tracer); see <doc:Observability>. Default nil:
        /// `InstrumentationSystem.tracer`, read at each call (so `withTracer` scopes apply); with
        /// its default `NoOpTracer` no span is started and no header added.
        public var tracer: (any Tracer)? = nil

        /// Let libcurl write this process's TLS secrets to the file the `SSLKEYLOGFILE`
        /// environment variable names (NSS key log format), for decrypting captured traffic while
        /// debugging. Default `false`: the session removes the key-log callback libcurl installs on
        /// every `SSL_CTX` when the variable is set, so nothing is written (libcurl 7.88 still
        /// creates the file, empty, when it initialises). The `servertrust` tool never sets this.
        ///
        /// - Warning: anyone who can read that file, and a capture of the traffic, can read and
        ///   alter every request and response of the session, pins or not. Never in production.
        public var unsafeWriteTLSSecretsToSSLKEYLOGFILE: Bool = false

        /// Testing hook: the clock trust evaluations and connection lifetimes are judged by.
        var clock: @Sendable () -> Date = { Date() }
        /// Testing hook: lets SSL sessions be resumed across policies, so the per-request guard
        /// can be tested on its own. Never set outside tests.
        var unsafeShareTLSSessionsAcrossPolicies = false
        /// Testing hook: turns off the per-request guard, to prove that tests fail without it.
        var unsafeDisableConnectionGuard = false
        /// Testing hook: sets curl's `VERIFYPEER` to 0, as a naive pinning client would; the TLS
        /// bridge must still enforce the policy.
        var unsafeCurlVerifyPeerOff = false
        /// Testing hook: the random numbers in `[0, 1)` that jitter retry delays; called once
        /// per retry, just before its backoff starts.
        var retryRandom: @Sendable () -> Double = { Double.random(in: 0..<1) }
        /// Testing hook: the clock signed-response challenges are stamped and checked with.
        var signatureClock: @Sendable () -> Date = { Date() }

        public init() {}
    }

    /// Redirect handling.
    public struct RedirectPolicy: Sendable, Hashable {
        let maximumHops: Int
        /// Follow at most `maximumHops` redirects. `Authorization` and `Cookie` headers are
        /// dropped when a hop changes origin; a redirect from `https:` to anything else fails.
        public static func follow(maximumHops: Int) -> RedirectPolicy { RedirectPolicy(maximumHops: max(0, maximumHops)) }
        /// Return 3xx responses to the caller.
        public static let disallow = RedirectPolicy(maximumHops: 0)
    }

    /// HTTP version preference.
    public struct HTTPVersion: Sendable, Hashable {
        fileprivate enum Base: Hashable, Sendable { case http1, http2 }
        fileprivate let base: Base
        /// HTTP/1.1 only.
        public static let http1_1 = HTTPVersion(base: .http1)
        /// HTTP/2 when the server offers it (ALPN), else HTTP/1.1; streams are multiplexed.
        public static let http2Preferred = HTTPVersion(base: .http2)
        var prefersHTTP2: Bool { base == .http2 }
    }

    /// A proxy for every request of the session.
    public struct Proxy: Sendable, Hashable {
        /// The proxy URL, or nil for a direct connection.
        let url: String?
        /// Hosts that bypass the proxy, in curl's `CURLOPT_NOPROXY` syntax.
        let noProxy: String

        /// An `http://host:port` proxy; HTTPS requests go through a CONNECT tunnel, and trust is
        /// evaluated on the origin server's chain inside it.
        public static func http(_ url: URL) -> Proxy { Proxy(url: url.absoluteString, noProxy: "") }

        /// The proxy named by `https_proxy` / `HTTPS_PROXY` / `all_proxy` / `ALL_PROXY`, with
        /// the hosts of `no_proxy` / `NO_PROXY` going direct; a direct connection if none is set.
        /// Read when this is called.
        public static var environment: Proxy { fromEnvironment(ProcessInfo.processInfo.environment) }

        static func fromEnvironment(_ environment: [String: String]) -> Proxy {
            let url = ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"].lazy
                .compactMap { environment[$0] }.first { !$0.isEmpty }
            return Proxy(url: url, noProxy: environment["no_proxy"] ?? environment["NO_PROXY"] ?? "")
        }

        /// Refuses a proxy that is not `http://` (checked when the session is made): HTTPS
        /// requests reach the origin through its CONNECT tunnel, and another scheme would have
        /// curl speak TLS or SOCKS to the proxy instead.
        func validate() throws(SessionError) {
            guard let url, !(url.lowercased().hasPrefix("http://") || !url.contains("://")) else { return }
            throw SessionError(.invalidRequest, "Proxy \(URLRedaction.redacted(url)) is not an http:// proxy; HTTPS requests reach the origin through its CONNECT tunnel.")
        }
    }

    /// Trust anchors for default validation.
    public struct Anchors: Sendable {
        fileprivate let anchors: TrustAnchors?
        /// The system CA bundle.
        public static let system = Anchors(anchors: nil)
        /// Only these anchors.
        public static func bundle(_ anchors: TrustAnchors) -> Anchors { Anchors(anchors: anchors) }

        func resolve() throws -> TrustAnchors { try anchors ?? TrustAnchors.system() }
    }
}

extension Session.Configuration {
    /// Refuses settings no session can honour, when the session is made: a
    /// ``maximumConnectionLifetime`` that is not positive, a negative ``maximumIdleHandles``, a
    /// ``userAgent`` with a line break or NUL (it is sent as one header line: a CR or LF would
    /// start another field), a ``contentDecoding`` coding the runtime libcurl cannot decode, a
    /// ``retryPolicy`` field out of range, a ``proxy`` that is not `http://`.
    func validate() throws(SessionError) {
        guard maximumConnectionLifetime > .zero else {
            throw SessionError(.invalidRequest, "maximumConnectionLifetime is \(maximumConnectionLifetime); it must be positive.")
        }
        if let idle = maximumIdleHandles, idle < 0 {
            throw SessionError(.invalidRequest, "maximumIdleHandles is \(idle); it must be 0 or more.")
        }
        if userAgent.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) {
            throw SessionError(.invalidRequest, "userAgent contains a line break or NUL; it is sent as one header line.")
        }
        try ContentDecodingPlan.validate(contentDecoding)
        try retryPolicy.validate()
        try proxy?.validate()
    }
}

extension Session {
    /// Whether and how a ``Session`` sends an idempotent request again after its connection
    /// failed before any byte of a response arrived. Default ``none``: opt in.
    ///
    /// A retry is a whole new attempt: a new transfer through the same policy path as the first,
    /// so a new connection gets a full trust evaluation and a reused one is admitted by the
    /// connection guard, exactly as for a first attempt. Each redirect hop is a request of its
    /// own with its own retries. ``Response/attempts`` and ``SessionError/attempts`` say how many
    /// attempts were made.
    ///
    /// Only connection-level failures before any response byte are retried (``Failures``), and
    /// only for requests that are safe to send twice (``Request/isIdempotent``). Never retried:
    /// - a trust rejection (``SessionError/Code/trustEvaluationFailed``: an evaluator, a pin,
    ///   revocation, a client-identity problem) or any other TLS or certificate failure, including
    ///   a TLS alert from the server: the same server would be rejected again, and trying it
    ///   repeatedly only hands an attacker more handshakes;
    /// - a timeout (``SessionError/Code/timedOut``): the request's time limit bounds the whole
    ///   request, and the server may already be processing what timed out;
    /// - a cancelled task or a shut-down session; a signed-response failure; a response too large;
    /// - any failure after the first byte of the response head arrived: the server has acted.
    ///
    /// The delay before retry *n* (1, 2, …) is drawn from `min(maximumDelay, baseDelay · 2ⁿ⁻¹)`
    /// by the ``Jitter`` mode, slept with `Task.sleep`: cancelling the task ends the wait at once
    /// with ``SessionError/Code/cancelled``. Each retry is logged at `notice` with its reason.
    public struct RetryPolicy: Sendable, Hashable {
        /// How many times a request may be sent again after its first attempt; at most
        /// `maximumRetries + 1` attempts. 0 turns retries off. Must not be negative.
        public var maximumRetries: Int
        /// The backoff before the first retry, doubled for each retry after it. Must be positive.
        public var baseDelay: Duration
        /// The cap of the backoff. Must be positive and at least ``baseDelay``.
        public var maximumDelay: Duration
        /// How the delay is randomised below the capped exponential backoff.
        public var jitter: Jitter
        /// Which connection failures are retried. Default ``Failures/all``.
        public var failures: Failures

        /// - Parameters:
        ///   - maximumRetries: retries after the first attempt. Default 2.
        ///   - baseDelay: the backoff before the first retry. Default 100 ms.
        ///   - maximumDelay: the cap of the backoff. Default 2 s.
        ///   - jitter: default ``Jitter/full``.
        ///   - failures: default ``Failures/all``.
        public init(
            maximumRetries: Int = 2, baseDelay: Duration = .milliseconds(100), maximumDelay: Duration = .seconds(2),
            jitter: Jitter = .full, failures: Failures = .all
        ) {
            self.maximumRetries = maximumRetries
            self.baseDelay = baseDelay
            self.maximumDelay = maximumDelay
            self.jitter = jitter
            self.failures = failures
        }

        /// No retries (the default): every request is attempted once.
        public static let none = RetryPolicy(maximumRetries: 0)

        /// How the backoff is randomised, so clients that failed together do not retry together.
        public struct Jitter: Sendable, Hashable, CustomStringConvertible {
            private enum Base: String, Hashable, Sendable { case full, equal }
            private let base: Base
            private init(_ base: Base) { self.base = base }

            /// A delay drawn uniformly from `[0, backoff)`: spreads retries the most (AWS's
            /// "full jitter"); a retry may follow the failure at once.
            public static let full = Jitter(.full)
            /// Half the backoff plus a delay drawn uniformly from `[0, backoff / 2)`: never less
            /// than half the backoff, so a retry always waits ("equal jitter").
            public static let equal = Jitter(.equal)

            public var description: String { base.rawValue }

            /// The delay for `backoff` and a random number in `[0, 1)`.
            func delay(backoff: Duration, random: Double) -> Duration {
                let unit = min(max(random, 0), 1)
                switch base {
                case .full: return backoff * unit
                case .equal: return backoff / 2 + (backoff / 2) * unit
                }
            }
        }

        /// Connection-level failures, before any response byte, that a policy may retry.
        public struct Failures: OptionSet, Sendable, Hashable {
            public let rawValue: Int
            public init(rawValue: Int) { self.rawValue = rawValue }

            /// The connection was refused or could not be made
            /// (``SessionError/TransportFailure/connectionFailed``).
            public static let connectionRefused = Failures(rawValue: 1 << 0)
            /// The connection was reset or closed before a response: a send or receive error
            /// that is not a TLS alert (``SessionError/TransportFailure/connectionReset``), or an
            /// empty reply (``SessionError/TransportFailure/emptyReply``) — what a server closing
            /// an idle keep-alive connection, or nginx's `return 444`, looks like.
            public static let connectionReset = Failures(rawValue: 1 << 1)
            /// The HTTP/2 connection or stream was refused or shut down (`GOAWAY`,
            /// `REFUSED_STREAM`: ``SessionError/TransportFailure/http2ConnectionFailed``,
            /// ``SessionError/TransportFailure/http2StreamFailed``) before a response head.
            public static let http2StreamRefused = Failures(rawValue: 1 << 2)
            /// Every kind above.
            public static let all: Failures = [.connectionRefused, .connectionReset, .http2StreamRefused]

            /// The kind of a transfer that failed with `failure` before any response byte, or nil
            /// when such a failure is never retried. A TLS alert on a send or receive
            /// (``SessionError/TransportFailure/tlsAlertReceived``) is the server refusing the
            /// handshake's outcome (a client certificate, under TLS 1.3 reported on the first
            /// read), not a dropped connection.
            static func kind(of failure: SessionError.TransportFailure) -> Failures? {
                switch failure {
                case .connectionFailed: .connectionRefused
                case .connectionReset, .emptyReply: .connectionReset
                case .http2ConnectionFailed, .http2StreamFailed: .http2StreamRefused
                default: nil
                }
            }
        }

        /// The delay before retry `retry` (1 for the first): the exponential backoff
        /// `baseDelay · 2^(retry-1)`, capped at ``maximumDelay``, then jittered with `random`
        /// (a number in `[0, 1)`).
        func delay(beforeRetry retry: Int, random: Double) -> Duration {
            var backoff = baseDelay
            for _ in 1..<max(retry, 1) where backoff < maximumDelay { backoff = backoff * 2 }
            return jitter.delay(backoff: min(backoff, maximumDelay), random: random)
        }

        /// Whether `error`, from attempt `attempt` of a request that may be retried, is retried.
        func retries(_ error: SessionError, afterAttempt attempt: Int) -> Bool {
            guard attempt <= maximumRetries, let kind = error.retryableFailure else { return false }
            return failures.contains(kind)
        }

        /// Checks the fields, naming the first that is out of range.
        func validate() throws(SessionError) {
            guard maximumRetries >= 0 else {
                throw SessionError(.invalidRequest, "retryPolicy.maximumRetries is \(maximumRetries); it must not be negative.")
            }
            guard baseDelay > .zero else {
                throw SessionError(.invalidRequest, "retryPolicy.baseDelay is \(baseDelay); it must be positive.")
            }
            guard maximumDelay > .zero, maximumDelay >= baseDelay else {
                throw SessionError(
                    .invalidRequest, "retryPolicy.maximumDelay is \(maximumDelay); it must be positive and at least baseDelay (\(baseDelay)).")
            }
        }
    }
}
