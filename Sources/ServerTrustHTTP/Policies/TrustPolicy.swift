import Foundation
import Logging
import ServerTrust
import Synchronization

/// A resolved host: the session's one per-host object. It carries everything a request reads
/// of its host — the evaluator built from the host's policy, the TLS floor, the client
/// identity, the compiled signed-response policy and the report URIs — resolved once per host
/// per session (``PolicyRegistry``), never per request; a hop reads its host once.
///
/// A new per-host setting is a ``HostPolicy`` property, read here from ``resolved``.
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
    /// The host resolved to its policy (the trust manager's, or a request's own evaluator).
    let resolved: ResolvedHostPolicy
    /// What the session's evaluations share: anchors, options, fetcher, clock, counters, logger.
    let context: TrustEvaluationContext
    /// The manager pattern that matched, or nil when the session's default evaluator applies.
    var pattern: HostPattern? { resolved.pattern }
    let evaluator: any ServerTrustEvaluating
    /// The host policy's TLS floor, applied to every `SSL_CTX` of the policy's connections.
    var minimumTLSVersion: TLSProtocolVersion { resolved.policy.minimumTLSVersion }
    var anchors: TrustAnchors { context.anchors }
    /// Counts every evaluation and every failure, enforced or report-only.
    let counters: TrustCounters
    var logger: Logger { context.logger }
    /// The session's clock: evaluations are judged at its time, and stamps expire by it.
    var clock: @Sendable () -> Date { context.clock }
    /// The longest a connection serves new requests after the evaluation that admitted it.
    let maximumConnectionLifetime: TimeInterval
    /// ``Session/Configuration/unsafeWriteTLSSecretsToSSLKEYLOGFILE``: keep libcurl's key log.
    let writesTLSSecretsToKeyLog: Bool
    /// Cleared once a resumed session of this policy came without the staple its must-staple
    /// leaf demands: the policy's connections then always make full handshakes, which carry one.
    private let resumption = Atomic<Bool>(true)
    /// The certificate and key this host's connections present when the server asks for one
    /// (``HostPolicy/clientIdentity``), or nil. Chosen by host, like the rest of the policy, so
    /// a redirect to another host is made under that host's policy, without it.
    let clientIdentity: ClientIdentity?
    /// The host's signed-response policy, compiled (its pattern's verifiers), or nil when its
    /// responses are not checked.
    let signedResponses: SignedResponseChecker.Entry?
    /// Whether the host's responses are signature-checked (mode informational or enforced).
    var checksSignedResponses: Bool { signedResponses?.checks ?? false }
    /// Where failure reports about the host go (``HostPolicy/reportURIs``); empty for the
    /// reporter's own.
    var reportURIs: [URL] { resolved.policy.reportURIs }
    /// The session's metrics (``Session/Configuration/metricsFactory``), nil when it has none.
    let metrics: SessionMetrics?
    /// `HostPolicy.usesSignedCertificateTimestamps` (the evaluator reads SCTs, or the host
    /// requires Certificate Transparency), read once: its connections ask for SCTs and its
    /// evidence carries them.
    let usesSignedCertificateTimestamps: Bool
    /// `ServerTrustEvaluating.mayFetchRevocationData`, read once: such a policy's transfers
    /// run on a loop of their own (``RevocationLoops``).
    let mayFetchRevocationData: Bool

    /// A policy for a host resolved by the session (``PolicyRegistry/makePolicy(forHost:override:trust:parts:)``).
    init(resolved: ResolvedHostPolicy, signedResponses: SignedResponseChecker.Entry? = nil, anchors: TrustAnchors,
         validationOptions: PathValidationOptions, revocationFetcher: (any RevocationFetcher)?, counters: TrustCounters,
         logger: Logger, clock: @escaping @Sendable () -> Date = { Date() }, maximumConnectionLifetime: TimeInterval = 3600,
         writesTLSSecretsToKeyLog: Bool = false, clientIdentity: ClientIdentity? = nil, metrics: SessionMetrics? = nil,
         handlePool: PolicyHandles.Pool = PolicyHandles.Pool(idleCapacity: 0)) {
        id = Self.nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        self.resolved = resolved
        normalizedHost = resolved.host
        self.signedResponses = signedResponses
        evaluator = resolved.evaluator
        context = TrustEvaluationContext(
            anchors: anchors, validationOptions: validationOptions, revocationFetcher: revocationFetcher, clock: clock,
            counters: counters, logger: logger)
        self.counters = counters
        self.maximumConnectionLifetime = maximumConnectionLifetime
        self.writesTLSSecretsToKeyLog = writesTLSSecretsToKeyLog
        self.clientIdentity = clientIdentity ?? resolved.policy.clientIdentity
        self.metrics = metrics
        mayFetchRevocationData = resolved.evaluator.mayFetchRevocationData
        usesSignedCertificateTimestamps = resolved.usesSignedCertificateTimestamps
        handles = PolicyHandles(pool: handlePool)
    }

    /// A policy for `host` with `evaluator` and every other host setting at its default (tests).
    convenience init(host: NormalizedHost, pattern: String?, evaluator: any ServerTrustEvaluating, anchors: TrustAnchors,
         validationOptions: PathValidationOptions, revocationFetcher: (any RevocationFetcher)?, counters: TrustCounters,
         logger: Logger, clock: @escaping @Sendable () -> Date = { Date() }, maximumConnectionLifetime: TimeInterval = 3600,
         writesTLSSecretsToKeyLog: Bool = false, clientIdentity: ClientIdentity? = nil, metrics: SessionMetrics? = nil,
         handlePool: PolicyHandles.Pool = PolicyHandles.Pool(idleCapacity: 0)) {
        self.init(
            resolved: ResolvedHostPolicy(
                host: host, pattern: pattern.flatMap { try? HostPattern($0) }, policy: .custom(evaluator), evaluator: evaluator,
                denyList: KeyDenyList(), certificateTransparencyLogs: nil),
            anchors: anchors, validationOptions: validationOptions, revocationFetcher: revocationFetcher, counters: counters, logger: logger,
            clock: clock, maximumConnectionLifetime: maximumConnectionLifetime, writesTLSSecretsToKeyLog: writesTLSSecretsToKeyLog,
            clientIdentity: clientIdentity, metrics: metrics, handlePool: handlePool)
    }

    /// Whether the handshake's evaluation waits for the staple (the status callback, which a
    /// TLS 1.2 server's `CertificateStatus` reaches only after the chain): the evaluator reads
    /// staples, or the policy reads SCTs, which a staple may carry (Certificate Transparency).
    var evaluatesWithStaple: Bool { evaluator.usesStapledOCSPResponse || usesSignedCertificateTimestamps }

    /// Whether new connections of this policy may resume a TLS session.
    var resumesSessions: Bool { resumption.load(ordering: .relaxed) }
    func stopResumingSessions() { resumption.store(false, ordering: .relaxed) }

    /// Whether this is the debug-only disabled evaluator, the one case where curl's own host
    /// check is turned off.
    var isDisabledForDebugging: Bool {
        (evaluator as? DisabledTrustEvaluator)?.isActive ?? false
    }

    /// What `ssl`'s handshake gave, as this policy's evaluator reads it (SCTs only when it asks).
    func handshakeEvidence(of ssl: OpaquePointer) -> HandshakeEvidence {
        HandshakeEvidence(ssl: ssl, signedCertificateTimestamps: usesSignedCertificateTimestamps)
    }

    /// Evaluates a presented chain under this policy through the one entry point every client
    /// path uses (``ResolvedHostPolicy/evaluate(_:handshake:in:)``: the evaluator, the host
    /// against the leaf, the TLS floor; counted and logged there), then records the session's
    /// metrics. The report's ``TrustReport/failure`` is nil when the server is accepted; a
    /// rejected report keeps the chains for failure reports.
    func evaluate(presented: [Certificate], handshake: HandshakeEvidence) -> TrustReport {
        let report = TrustReport(policy: self, evaluation: resolved.evaluate(presented, handshake: handshake, in: context))
        metrics?.evaluated(report)
        return report
    }
}
