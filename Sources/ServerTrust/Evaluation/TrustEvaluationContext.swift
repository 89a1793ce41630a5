public import Foundation
public import Logging

/// What every evaluation a client runs shares: the anchors and options chains are validated
/// with, the revocation fetcher, the clock, and where evaluations are counted and logged.
///
/// A `Session` builds one from its configuration, a `ServerTrustNIOVerifier` from its own, and
/// the `servertrust` commands from their options; ``ResolvedHostPolicy/evaluate(_:handshake:in:)``
/// takes it, so every client path counts and logs the same way.
public struct TrustEvaluationContext: Sendable {
    /// The anchors chains are validated against.
    public var anchors: TrustAnchors
    /// How path validation is configured.
    public var validationOptions: PathValidationOptions
    /// The fetcher live OCSP and CRL checks use when their evaluator has none; nil for none.
    public var revocationFetcher: (any RevocationFetcher)?
    /// The clock evaluations are judged at.
    public var clock: @Sendable () -> Date
    /// Where evaluations and failures are counted; nil for nowhere.
    public var counters: TrustCounters?
    /// Where evaluations are logged (debug) and failures (error).
    public var logger: Logger

    /// - Parameters:
    ///   - anchors: the trust anchors.
    ///   - validationOptions: default `PathValidationOptions()`.
    ///   - revocationFetcher: default none.
    ///   - clock: default the system clock.
    ///   - counters: default none.
    ///   - logger: default ``TrustLogging/defaultLogger``.
    public init(
        anchors: TrustAnchors, validationOptions: PathValidationOptions = PathValidationOptions(),
        revocationFetcher: (any RevocationFetcher)? = nil, clock: @escaping @Sendable () -> Date = { Date() },
        counters: TrustCounters? = nil, logger: Logger = TrustLogging.defaultLogger
    ) {
        self.anchors = anchors
        self.validationOptions = validationOptions
        self.revocationFetcher = revocationFetcher
        self.clock = clock
        self.counters = counters
        self.logger = logger
    }
}
