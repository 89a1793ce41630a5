import Foundation
import Logging
import ServerTrust
import Synchronization

/// One resolved trust policy: the evaluator that governs one host, with everything its
/// connections share. Resolved once per host per session, never per request.
///
/// Immutable after creation; shared between the loop thread and the OpenSSL callbacks that
/// run on it, hence `Sendable`.
final class TrustPolicy: Sendable {
    /// The policy's curl share and idle easy handles, freed with the policy.
    let handles: PolicyHandles
    private static let nextID = Atomic<UInt64>(1)

    /// The stamp written on every `SSL*` this policy accepted.
    let id: UInt64
    /// The host the policy is for.
    let normalizedHost: NormalizedHost
    /// ``normalizedHost``'s text, as evaluators, logs and errors name it.
    var host: String { normalizedHost.name }
    /// The manager pattern that matched, or nil when the session's default evaluator applies.
    let pattern: String?
    let evaluator: any ServerTrustEvaluating
    let anchors: TrustAnchors
    let validationOptions: PathValidationOptions
    let revocationFetcher: (any RevocationFetcher)?
    /// Counts every evaluation and every failure, enforced or report-only.
    let counters: TrustCounters
    let logger: Logger
    /// The session's clock: evaluations are judged at its time, and stamps expire by it.
    let clock: @Sendable () -> Date
    /// The longest a connection serves new requests after the evaluation that admitted it.
    let maximumConnectionLifetime: TimeInterval
    /// ``Session/Configuration/unsafeWriteTLSSecretsToSSLKEYLOGFILE``: keep libcurl's key log.
    let writesTLSSecretsToKeyLog: Bool
    /// Cleared once a resumed session of this policy came without the staple its must-staple
    /// leaf demands: the policy's connections then always make full handshakes, which carry one.
    private let resumption = Atomic<Bool>(true)
    /// The certificate and key this host's connections present when the server asks for one
    /// (``Session/Configuration/clientIdentities``), or nil. Chosen by host, like the rest of
    /// the policy, so a redirect to another host is made under that host's policy, without it.
    let clientIdentity: ClientIdentity?
    /// The session's metrics (``Session/Configuration/metricsFactory``), nil when it has none.
    let metrics: SessionMetrics?
    /// `ServerTrustEvaluating.mayFetchRevocationData`, read once: such a policy's transfers
    /// run on a loop of their own (``RevocationLoops``).
    let mayFetchRevocationData: Bool

    init(host: NormalizedHost, pattern: String?, evaluator: any ServerTrustEvaluating, anchors: TrustAnchors,
         validationOptions: PathValidationOptions, revocationFetcher: (any RevocationFetcher)?, counters: TrustCounters,
         logger: Logger, clock: @escaping @Sendable () -> Date = { Date() }, maximumConnectionLifetime: TimeInterval = 3600,
         writesTLSSecretsToKeyLog: Bool = false, clientIdentity: ClientIdentity? = nil, metrics: SessionMetrics? = nil,
         handlePool: PolicyHandles.Pool = PolicyHandles.Pool(idleCapacity: 0)) {
        id = Self.nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        normalizedHost = host
        self.pattern = pattern
        self.evaluator = evaluator
        self.anchors = anchors
        self.validationOptions = validationOptions
        self.revocationFetcher = revocationFetcher
        self.counters = counters
        self.logger = logger
        self.clock = clock
        self.maximumConnectionLifetime = maximumConnectionLifetime
        self.writesTLSSecretsToKeyLog = writesTLSSecretsToKeyLog
        self.clientIdentity = clientIdentity
        self.metrics = metrics
        mayFetchRevocationData = evaluator.mayFetchRevocationData
        handles = PolicyHandles(pool: handlePool)
    }

    /// Whether new connections of this policy may resume a TLS session.
    var resumesSessions: Bool { resumption.load(ordering: .relaxed) }
    func stopResumingSessions() { resumption.store(false, ordering: .relaxed) }

    /// Whether this is the debug-only disabled evaluator, the one case where curl's own host
    /// check is turned off.
    var isDisabledForDebugging: Bool {
        (evaluator as? DisabledTrustEvaluator)?.isActive ?? false
    }

    /// Evaluates a presented chain under this policy: its evaluator, then the host against the
    /// leaf (``ServerTrustEvaluating/evaluateAsPolicy(_:forHost:)``). The report's ``TrustReport/failure`` is
    /// nil when the server is accepted; a rejected report keeps the chains for failure reports.
    func evaluate(presented: [Certificate], stapledOCSPResponse: [UInt8]?) -> TrustReport {
        let trust = PeerTrust(
            presentedChain: presented, anchors: anchors, validationTime: clock(),
            stapledOCSPResponse: stapledOCSPResponse, validationOptions: validationOptions,
            revocationFetcher: revocationFetcher)
        var failure: TrustError?
        do {
            // The policy's host check, beside libcurl's VERIFYHOST (which stays on as a second
            // layer): the same check as every other client path's, whatever the evaluator.
            try evaluator.evaluateAsPolicy(trust, forHost: host)
        } catch let error as TrustError {
            failure = error
        } catch {
            failure = TrustError(.openSSLFailure, "Evaluator \(evaluator.name) threw \(error)", evaluator: evaluator.name, host: host)
        }
        let report = TrustReport(policy: self, trust: trust, failure: failure)
        counters.recordEvaluation()
        metrics?.evaluated(report)
        logger.debug(
            "Trust evaluation for \(host): \(failure == nil ? "accepted" : "rejected")",
            metadata: ["host": .string(host), "evaluator": .string(evaluator.name), "result": .string(report.result.description)])
        if let failure {
            counters.recordFailure(failure.code)
            logger.error("Rejected \(host): \(failure.reason)", metadata: TrustLogging.metadata(for: failure, host: host, mode: .enforced))
        }
        for finding in report.findings {
            counters.recordFailure(finding.error.code)
            guard !finding.isLogged else { continue }
            logger.error(
                "\(finding.mode) trust failure for \(host), not enforced: \(finding.error.reason)",
                metadata: TrustLogging.metadata(for: finding.error, host: host, mode: finding.mode))
        }
        return report
    }
}
