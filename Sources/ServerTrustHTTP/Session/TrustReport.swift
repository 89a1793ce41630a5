import Foundation
public import ServerTrust

/// What was evaluated for a response: the host, the policy that matched, and the chain.
///
/// Every response carries one, whether the connection was new, reused, resumed or a
/// multiplexed stream: in each case the evaluation it reports ran under this request's policy.
public struct TrustReport: Sendable, CustomStringConvertible {
    /// The host the policy was applied to (normalised).
    public var host: String { storage.host }
    /// The manager pattern that matched, or nil when no manager pattern applied.
    public var matchedPattern: String? { storage.matchedPattern }
    /// The evaluator's name, e.g. `PinnedKeyHashesTrustEvaluator`.
    public var evaluator: String { storage.evaluator }
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
    public var pinMatches: [PinMatch] { storage.pinMatches }
    /// The chain as the server sent it, leaf first. Summarised when read, like ``validatedChain``.
    public var presentedChain: [TrustError.CertificateSummary] { presentedCertificates.map(Self.summary) }
    /// The evaluation's outcome: `nil` means accepted.
    public var failure: TrustError? { storage.failure }
    /// Revocation status per checked certificate, when the policy checks revocation (empty
    /// otherwise). An accepted report may hold `unknown` results under soft-fail.
    public var revocation: [CertificateRevocationResult] { storage.revocation }

    /// Failures that did not reject the server: report-only (informational) evaluators, a
    /// canary's disagreements, an expired pin set falling back to default validation. Each is
    /// sent as a failure report when the session has a ``TrustFailureReporter``.
    public var findings: [TrustFinding] { storage.findings }
    /// The outcome as a response reads it: ``TrustResult/failed(_:)`` for a rejection or an
    /// informational finding, ``TrustResult/notRequested`` when nothing was evaluated.
    public var result: TrustResult { storage.result }

    /// The certificates behind ``presentedChain`` and ``validatedChain``, for failure reports.
    var presentedCertificates: [Certificate] { storage.presentedCertificates }
    var validatedCertificates: [Certificate] { storage.validatedCertificates }
    /// The host policy's own report URIs (``HostPolicy/reportURIs``), empty for the reporter's.
    var hostReportURIs: [URL] { storage.hostReportURIs }
    /// The evaluator itself, so a failure report can name its pins and expiration.
    var policyEvaluator: any ServerTrustEvaluating { storage.policyEvaluator }
    /// The trust that was evaluated, told when its handshake has finished
    /// (`PeerTrust.handshakeCompleted()`); nil when nothing was evaluated.
    var evaluatedTrust: PeerTrust? { storage.evaluatedTrust }
    /// When the evaluation ran (its validation time), and until when what it relied on holds
    /// (`PeerTrust.reliedOnUntil`); nil when nothing was evaluated.
    var evaluatedAt: Date? { storage.evaluatedAt }
    var reliedOnUntil: Date? { storage.reliedOnUntil }

    /// What the evaluated handshake gave besides the chain: the negotiated protocol version,
    /// cipher suite and group, ALPN, the staple and SCTs (empty when nothing was evaluated).
    public var handshake: HandshakeEvidence { storage.handshake }

    /// Whether the evaluation accepted the server.
    public var isTrusted: Bool { failure == nil }

    private static func summary(_ certificate: Certificate) -> TrustError.CertificateSummary {
        .init(pin: certificate.spkiPin, subject: certificate.subject)
    }

    init(policy: TrustPolicy, evaluation: TrustEvaluation) {
        let trust = evaluation.trust
        let failure = evaluation.failure
        let findings = evaluation.findings
        let result: TrustResult
        if let failure {
            result = .failed(failure)
        } else if let informational = findings.first(where: { $0.mode == .informational }) {
            result = .failed(informational.error)
        } else {
            result = .verified
        }
        storage = Storage(
            host: policy.host, matchedPattern: policy.pattern, evaluator: policy.evaluator.name, failure: failure,
            revocation: trust.revocationResults ?? [], findings: findings, result: result, presentedCertificates: trust.presentedChain,
            validatedCertificates: trust.validatedChainIfComputed ?? [], pinMatches: trust.pinMatches,
            policyEvaluator: policy.evaluator, evaluatedTrust: trust,
            evaluatedAt: trust.validationTime, reliedOnUntil: trust.reliedOnUntil, handshake: trust.handshake,
            hostReportURIs: policy.resolved.policy.reportURIs)
    }

    /// A rejection decided before any chain was seen (no TLS session to evaluate).
    init(policy: TrustPolicy, failure: TrustError) {
        self.init(policy: policy, failure: failure, result: .failed(failure))
    }

    /// Nothing was evaluated (plain HTTP, or the guard disabled for a test).
    init(notEvaluated policy: TrustPolicy, reason: String) {
        let failure = TrustError(.invalidConfiguration, reason, evaluator: policy.evaluator.name, host: policy.host)
        self.init(policy: policy, failure: failure, result: .notRequested)
    }

    private init(policy: TrustPolicy, failure: TrustError, result: TrustResult) {
        storage = Storage(
            host: policy.host, matchedPattern: policy.pattern, evaluator: policy.evaluator.name, failure: failure, revocation: [],
            findings: [], result: result, presentedCertificates: [], validatedCertificates: [], pinMatches: [],
            policyEvaluator: policy.evaluator,
            evaluatedTrust: nil, evaluatedAt: nil, reliedOnUntil: nil, handshake: HandshakeEvidence(),
            hostReportURIs: policy.resolved.policy.reportURIs)
    }

    /// The report's fields, immutable and shared: a report is copied from the connection's
    /// record to the transfer, the outcome, the hop log and the response, and a copy is one
    /// reference instead of thirteen fields (a dozen retains) each time.
    private let storage: Storage

    private final class Storage: Sendable {
        let host: String
        let matchedPattern: String?
        let evaluator: String
        let failure: TrustError?
        let revocation: [CertificateRevocationResult]
        let findings: [TrustFinding]
        let result: TrustResult
        let presentedCertificates: [Certificate]
        let validatedCertificates: [Certificate]
        let pinMatches: [PinMatch]
        let policyEvaluator: any ServerTrustEvaluating
        let evaluatedTrust: PeerTrust?
        let evaluatedAt: Date?
        let reliedOnUntil: Date?
        let handshake: HandshakeEvidence
        let hostReportURIs: [URL]

        init(
            host: String, matchedPattern: String?, evaluator: String, failure: TrustError?, revocation: [CertificateRevocationResult],
            findings: [TrustFinding], result: TrustResult, presentedCertificates: [Certificate], validatedCertificates: [Certificate],
            pinMatches: [PinMatch], policyEvaluator: any ServerTrustEvaluating, evaluatedTrust: PeerTrust?, evaluatedAt: Date?, reliedOnUntil: Date?,
            handshake: HandshakeEvidence, hostReportURIs: [URL]
        ) {
            self.host = host
            self.matchedPattern = matchedPattern
            self.evaluator = evaluator
            self.failure = failure
            self.revocation = revocation
            self.findings = findings
            self.result = result
            self.presentedCertificates = presentedCertificates
            self.validatedCertificates = validatedCertificates
            self.pinMatches = pinMatches
            self.policyEvaluator = policyEvaluator
            self.evaluatedTrust = evaluatedTrust
            self.evaluatedAt = evaluatedAt
            self.reliedOnUntil = reliedOnUntil
            self.handshake = handshake
            self.hostReportURIs = hostReportURIs
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
