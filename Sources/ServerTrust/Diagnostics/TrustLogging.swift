public import Logging

/// The logger ServerTrust writes to when none is passed: label `servertrust`, routed wherever
/// the application bootstrapped swift-log (`LoggingSystem.bootstrap`).
///
/// Levels: every evaluation at `debug`; pins or sets about to expire and a set without a real
/// backup at `warning`; rejections, report-only failures, canary disagreements and an expired
/// set falling back to default validation at `error`. Metadata keys: `host`, `evaluator`,
/// `reason` (the `TrustError.Code`), `mode`, and `pin`/`label`/`expires` where they apply.
public enum TrustLogging {
    public static let label = "servertrust"

    /// A fresh `Logger(label: "servertrust")`.
    public static var defaultLogger: Logger { Logger(label: label) }

    /// Metadata describing `error`, for an error-level log line.
    package static func metadata(for error: TrustError, host: String, mode: EnforcementMode) -> Logger.Metadata {
        [
            "host": .string(host),
            "evaluator": .string(error.evaluator ?? "unknown"),
            "reason": .string(error.code.description),
            "mode": .string(mode.description),
        ]
    }
}
