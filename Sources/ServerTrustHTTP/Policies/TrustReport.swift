import Foundation
public import ServerTrust

/// What was evaluated for a response: the core's evaluation of the server (`TrustEvaluation`)
/// plus what only the HTTP client knows — whether anything was evaluated for the hop, and where
/// its failure reports go.
///
/// Every response carries one, whether the connection was new, reused, resumed or a
/// multiplexed stream: in each case the evaluation it reports ran under this request's policy.
/// The properties below read the evaluation; they are not a copy of it.
public struct TrustReport: Sendable, CustomStringConvertible {
    /// The evaluation of the server, as every client path makes it
    /// (`ResolvedHostPolicy.evaluate(_:handshake:in:)`); nil when no chain was evaluated (a
    /// rejection decided before any chain was seen, a plain-HTTP hop).
    public var evaluation: TrustEvaluation? { storage.evaluation }
    /// The host the policy was applied to (normalised).
    public var host: String { storage.host }
    /// The manager pattern that matched, or nil when no manager pattern applied.
    public var pattern: HostPattern? { storage.pattern }
    /// ``pattern`` as text.
    public var matchedPattern: HostPattern? { storage.pattern }
    /// The evaluator's name, e.g. `PinnedKeyHashesTrustEvaluator`.
    public var evaluator: String { storage.evaluatorName }
    /// The validated chain, leaf first (empty when the evaluator did not validate a chain),
    /// ending with the anchors above the validated path that issued its top, if any
    /// (`PeerTrust.validatedChain()`).
    ///
    /// The chain an enforcing evaluator validated; when only a report-only one (informational,
    /// a canary's trial) validated a chain, that chain, which nothing enforced
    /// (`PeerTrust.validatedChainIfComputed`).
    ///
    /// Summarised when read: a pin (SHA-256 of the key) and a formatted subject per
    /// certificate cost more than the rest of the report, and most reports are never read.
    public var validatedChain: [TrustError.CertificateSummary] { validatedCertificates.map(Self.summary) }
    /// The certificates of ``validatedChain`` the host's pins matched: subject, pin, depth, and
    /// whether each is an anchor above the validated path (a root pinned while the anchors
    /// also hold its intermediate); empty when no pins matched or none were configured.
    public var pinMatches: [PinMatch] { evaluation?.pinMatches ?? [] }
    /// The chain as the server sent it, leaf first. Summarised when read, like ``validatedChain``.
    public var presentedChain: [TrustError.CertificateSummary] { presentedCertificates.map(Self.summary) }
    /// The evaluation's outcome: `nil` means accepted.
    public var failure: TrustError? { storage.failure }
    /// Revocation status per checked certificate, when the policy checks revocation (empty
    /// otherwise). An accepted report may hold `unknown` results under soft-fail.
    public var revocation: [CertificateRevocationResult] { evaluation?.revocation ?? [] }

    /// Failures that did not reject the server: report-only (informational) evaluators, a
    /// canary's disagreements, an expired pin set falling back to default validation. Each is
    /// sent as a failure report when the session has a ``TrustFailureReporter``.
    public var findings: [TrustFinding] { evaluation?.findings ?? [] }
    /// The outcome as a response reads it: ``TrustResult/failed(_:)`` for a rejection or an
    /// informational finding, ``TrustResult/notRequested`` when nothing was evaluated.
    public var result: TrustResult { storage.result }

    /// The certificates behind ``presentedChain`` and ``validatedChain``, for failure reports.
    var presentedCertificates: [Certificate] { evaluation?.trust.presentedChain ?? [] }
    var validatedCertificates: [Certificate] { evaluation?.validatedChain ?? [] }
    /// The resolved host's report URIs (``HostPolicy/reportURIs``), empty for the reporter's.
    var hostReportURIs: [URL] { storage.hostPolicy.reportURIs }
    /// The host's policy, so a failure report can name its pins and expiration.
    var hostPolicy: HostPolicy { storage.hostPolicy }
    /// The trust that was evaluated, told when its handshake has finished
    /// (`PeerTrust.handshakeCompleted()`); nil when nothing was evaluated.
    var evaluatedTrust: PeerTrust? { storage.evaluation?.trust }
    /// When the evaluation ran (its validation time), and until when what it relied on holds
    /// (`PeerTrust.reliedOnUntil`); nil when nothing was evaluated.
    var evaluatedAt: Date? { evaluatedTrust?.validationTime }
    var reliedOnUntil: Date? { evaluatedTrust?.reliedOnUntil }

    /// What the evaluated handshake gave besides the chain: the negotiated protocol version,
    /// cipher suite and group, ALPN, the staple and SCTs (empty when nothing was evaluated).
    public var handshake: HandshakeEvidence { evaluation?.handshake ?? HandshakeEvidence() }

    /// Whether the evaluation accepted the server.
    public var isTrusted: Bool { failure == nil }

    private static func summary(_ certificate: Certificate) -> TrustError.CertificateSummary {
        .init(pin: certificate.spkiPin, subject: certificate.subject)
    }

    init(policy: TrustPolicy, evaluation: TrustEvaluation) {
        let failure = evaluation.failure
        let result: TrustResult
        if let failure {
            result = .failed(failure)
        } else if let informational = evaluation.findings.first(where: { $0.mode == .informational }) {
            result = .failed(informational.error)
        } else {
            result = .verified
        }
        storage = Storage(policy: policy, evaluation: evaluation, failure: failure, result: result)
    }

    /// A rejection decided before any chain was seen (no TLS session to evaluate).
    init(policy: TrustPolicy, failure: TrustError) {
        storage = Storage(policy: policy, evaluation: nil, failure: failure, result: .failed(failure))
    }

    /// Nothing was evaluated (plain HTTP, or the guard disabled for a test).
    init(notEvaluated policy: TrustPolicy, reason: String) {
        let failure = TrustError(.invalidConfiguration, reason, evaluator: policy.evaluator.name, host: policy.host)
        storage = Storage(policy: policy, evaluation: nil, failure: failure, result: .notRequested)
    }

    /// The report, immutable and shared: a report is copied from the connection's record to
    /// the transfer, the outcome, the hop log and the response, and a copy is one reference.
    private let storage: Storage

    private final class Storage: Sendable {
        let evaluation: TrustEvaluation?
        let host: String
        let pattern: HostPattern?
        let evaluator: any ServerTrustEvaluating
        let evaluatorName: String
        let failure: TrustError?
        let result: TrustResult
        let hostPolicy: HostPolicy

        /// Only what the evaluation does not hold: the policy's host, pattern and evaluator
        /// (for a hop with no evaluation), the outcome and the host's declaration. Never the policy
        /// itself, whose curl handles go with it.
        init(policy: TrustPolicy, evaluation: TrustEvaluation?, failure: TrustError?, result: TrustResult) {
            self.evaluation = evaluation
            host = policy.host
            pattern = policy.pattern
            evaluator = policy.evaluator
            evaluatorName = policy.evaluator.name
            self.failure = failure
            self.result = result
            hostPolicy = policy.resolved.policy
        }
    }

    public var description: String {
        var text = "\(host) — \(evaluator)" + (matchedPattern.map { " (pattern \($0))" } ?? "")
        text += failure == nil ? ": trusted" : ": rejected: \(failure!.reason)"
        let negotiated = [handshake.protocolVersion?.description, handshake.cipherSuite, handshake.keyExchangeGroup].compactMap { $0 }
        if !negotiated.isEmpty { text += "\n  negotiated: " + negotiated.joined(separator: ", ") }
        for entry in validatedChain { text += "\n  \(entry)" }
        for match in pinMatches { text += "\n  matched pin: \(match)" }
        for result in revocation { text += "\n  revocation: \(result)" }
        for finding in findings { text += "\n  \(finding.mode) failure: \(finding.error.code): \(finding.error.reason)" }
        return text
    }
}
