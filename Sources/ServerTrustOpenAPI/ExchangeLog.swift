#if OpenAPIAdapter
import Synchronization

/// Collects the ``SessionTransport/Exchange`` of every response a ``SessionTransport``
/// returns to the task running ``recording(isolation:_:)``: how the caller of a generated client reads
/// the trust report and signed-response verification its `Output` cannot carry.
///
/// ```swift
/// let log = ExchangeLog()
/// let output = try await log.recording { try await client.getBalance() }
/// let exchange = try #require(log.exchanges.last)
/// print(exchange.trust.evaluator, exchange.verification)   // PinnedKeyHashesTrustEvaluator verified
/// ```
///
/// Recording follows the task: calls made inside `recording` from the same task or its child
/// tasks (`async let`, task groups) are recorded; a detached task's are not. Recordings nest:
/// a `ClientMiddleware` can record the one call it forwards (`log.recording { try await
/// next(request, body, baseURL) }`) while the caller records the whole operation, and each log
/// receives the exchange. A log is written from any task; reading it while calls are running
/// shows those finished so far.
///
/// A request that fails is not recorded: catch the `ClientError` and read its
/// `underlyingError` as `SessionError`.
public final class ExchangeLog: Sendable {
    private let entries = Mutex<[SessionTransport.Exchange]>([])

    /// The logs the current task records into, innermost last.
    @TaskLocal private static var active: [ExchangeLog] = []

    /// An empty log.
    public init() {}

    /// The exchanges recorded so far, in the order their responses arrived.
    public var exchanges: [SessionTransport.Exchange] { entries.withLock { $0 } }

    /// Runs `operation`, recording into this log (and any log an enclosing `recording` is
    /// recording into) every exchange a ``SessionTransport`` completes for it. Rethrows what
    /// `operation` throws; what was recorded before the error stays in the log.
    ///
    /// - Parameters:
    ///   - isolation: the actor `operation` runs on; by default the caller's.
    ///   - operation: the calls to record, typically one or more operations of a generated
    ///     client, or a middleware's `next`.
    /// - Returns: what `operation` returns.
    public func recording<T>(
        isolation: isolated (any Actor)? = #isolation, _ operation: () async throws -> T
    ) async rethrows -> T {
        try await Self.$active.withValue(Self.active + [self], operation: operation, isolation: isolation)
    }

    /// Records `exchange` into every log the current task records into.
    static func record(_ exchange: SessionTransport.Exchange) {
        for log in active {
            log.entries.withLock { $0.append(exchange) }
        }
    }
}
#endif
