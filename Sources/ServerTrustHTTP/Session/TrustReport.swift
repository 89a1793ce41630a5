import Foundation
public import ServerTrust

/// What was evaluated for a response: the host, the policy that matched, and the chain.
///
/// Every response carries one, whether the connection was new, reused, resumed or a
/// multiplexed stream: in each case the evaluation it reports ran under this request's policy.
public struct TrustReport: Sendable, CustomStringConvertible {
    /// The host the policy was applied to (normalised).
    public let host: String
    /// The manager pattern that matched, or nil when no manager pattern applied.
    public let matchedPattern: String?
    /// The evaluator's name, e.g. `PinnedKeyHashesTrustEvaluator`.
    public let evaluator: String
    /// The validated chain, leaf first (empty when the evaluator did not validate a chain).
    ///
    /// The chain an enforcing evaluator validated; when only a report-only one (informational,
    /// a canary's trial) validated a chain, that chain, which nothing enforced
    /// (`PeerTrust.validatedChainIfComputed`).
    ///
    /// Summarised when read: a pin (SHA-256 of the key) and a formatted subject per
    /// certificate cost more than the rest of the report, and most reports are never read.
    public var validatedChain: [TrustError.CertificateSummary] { validatedCertificates.map(Self.summary) }
    /// The chain as the server sent it, leaf first. Summarised when read, like ``validatedChain``.
    public var presentedChain: [TrustError.CertificateSummary] { presentedCertificates.map(Self.summary) }
    /// The evaluation's outcome: `nil` means accepted.
    public let failure: TrustError?
    /// Revocation status per checked certificate, when the policy checks revocation (empty
    /// otherwise). An accepted report may hold `unknown` results under soft-fail.
    public let revocation: [CertificateRevocationResult]

    /// Failures that did not reject the server: report-only (informational) evaluators, a
    /// canary's disagreements, an expired pin set falling back to default validation. Each is
    /// sent as a failure report when the session has a ``TrustFailureReporter``.
    public let findings: [TrustFinding]
    /// The outcome as a response reads it: ``TrustResult/failed(_:)`` for a rejection or an
    /// informational finding, ``TrustResult/notRequested`` when nothing was evaluated.
    public let result: TrustResult

    /// The certificates behind ``presentedChain`` and ``validatedChain``, for failure reports.
    let presentedCertificates: [Certificate]
    let validatedCertificates: [Certificate]
    /// The evaluator itself, so a failure report can name its pins and expiration.
    let policyEvaluator: any ServerTrustEvaluating
    /// The trust that was evaluated, told when its handshake has finished
    /// (`PeerTrust.handshakeCompleted()`); nil when nothing was evaluated.
    let evaluatedTrust: PeerTrust?
    /// When the evaluation ran (its validation time), and until when what it relied on holds
    /// (`PeerTrust.reliedOnUntil`); nil when nothing was evaluated.
    let evaluatedAt: Date?
    let reliedOnUntil: Date?

    /// Whether the evaluation accepted the server.
    public var isTrusted: Bool { failure == nil }

    private static func summary(_ certificate: Certificate) -> TrustError.CertificateSummary {
        .init(pin: certificate.spkiPin, subject: certificate.subject)
    }

    init(policy: TrustPolicy, trust: PeerTrust, failure: TrustError?) {
        host = policy.host
        matchedPattern = policy.pattern
        evaluator = policy.evaluator.name
        policyEvaluator = policy.evaluator
        evaluatedTrust = trust
        presentedCertificates = trust.presentedChain
        validatedCertificates = trust.validatedChainIfComputed ?? []
        revocation = trust.revocationResults ?? []
        findings = trust.findings
        evaluatedAt = trust.validationTime
        reliedOnUntil = trust.reliedOnUntil
        self.failure = failure
        if let failure {
            result = .failed(failure)
        } else if let informational = findings.first(where: { $0.mode == .informational }) {
            result = .failed(informational.error)
        } else {
            result = .verified
        }
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
        host = policy.host
        matchedPattern = policy.pattern
        evaluator = policy.evaluator.name
        policyEvaluator = policy.evaluator
        evaluatedTrust = nil
        presentedCertificates = []
        validatedCertificates = []
        revocation = []
        findings = []
        evaluatedAt = nil
        reliedOnUntil = nil
        self.failure = failure
        self.result = result
    }

    public var description: String {
        var text = "\(host) — \(evaluator)" + (matchedPattern.map { " (pattern \($0))" } ?? "")
        text += failure == nil ? ": trusted" : ": rejected: \(failure!.reason)"
        for entry in validatedChain { text += "\n  \(entry)" }
        for result in revocation { text += "\n  revocation: \(result)" }
        for finding in findings { text += "\n  \(finding.mode) failure: \(finding.error.code): \(finding.error.reason)" }
        return text
    }
}
