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
