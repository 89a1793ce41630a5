import Foundation
import Logging

extension HopDriver {
    /// Runs `attempt` for one hop of `request` until it succeeds or fails in a way
    /// ``Session/Configuration/retryPolicy`` does not retry; returns its value and the attempts made.
    ///
    /// Each call of `attempt` is a whole new transfer (policy lookup, admission, evaluation of a
    /// new connection), so a retry is judged exactly as a first attempt. Distinct from the
    /// connection guard's own resend of a request whose connection outlived its evaluation,
    /// which happens inside one attempt (`Transfer.prepareRetry`) and is not counted here.
    ///
    /// - Throws: the last attempt's error with ``SessionError/attempts`` set, or
    ///   ``SessionError/Code/cancelled`` when the task is cancelled during a backoff.
    nonisolated(nonsending) func withRetries<T>(_ request: Request, _ attempt: nonisolated(nonsending) () async throws -> T) async throws -> (value: T, attempts: Int) {
        let policy = retryPolicy
        let mayRetry = policy.maximumRetries > 0 && request.mayBeRetried
        var attempts = 1
        while true {
            do {
                return (try await attempt(), attempts)
            } catch var error as SessionError {
                error.attempts = attempts
                guard mayRetry, policy.retries(error, afterAttempt: attempts) else { throw error }
                let delay = policy.delay(beforeRetry: attempts, random: session.configuration.retryRandom())
                session.configuration.logger.notice(
                    "Retrying \(request.method.rawValue) after a connection failure",
                    // The host, not the URL: a query or user-info may carry secrets logs must not keep.
                    metadata: [
                        "host": "\(request.url.host ?? "")", "attempt": "\(attempts + 1)", "delay": "\(delay)",
                        "reason": "\(error.reason) (curl \(error.curlCode)\(error.curlMessage.isEmpty ? "" : ": \(error.curlMessage)"))",
                    ])
                // Task.sleep throws only when the task is cancelled, and then at once.
                guard (try? await Task.sleep(for: delay)) != nil else {
                    var cancelled = SessionError(
                        .cancelled, "The task was cancelled while waiting to retry after: \(error.reason)", url: request.url.absoluteString)
                    cancelled.attempts = attempts
                    throw cancelled
                }
                attempts += 1
            }
        }
    }
}
