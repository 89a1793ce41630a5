import Logging

/// The outcome of evaluating one server for one host: what was evaluated, under which pattern
/// and evaluator, with what evidence, and the verdict.
///
/// Made by ``ResolvedHostPolicy/evaluate(_:handshake:in:)``, the one evaluation entry point of
/// every client path; ServerTrustHTTP's `TrustReport` and ServerTrustNIO's verification carry it.
public struct TrustEvaluation: Sendable {
    /// The host evaluated, normalised.
    public let host: String
    /// The manager's pattern that matched, or nil.
    public let matchedPattern: HostPattern?
    /// The evaluator that decided.
    public let evaluator: any ServerTrustEvaluating
    /// What the evaluators saw: the chain, the anchors, the handshake evidence, and what they
    /// recorded (validated chain, revocation results, findings).
    public let trust: PeerTrust
    /// `nil` when the server was accepted; otherwise why not. Every error is a `TrustError`:
    /// a custom evaluator's own error is wrapped once, here (`.openSSLFailure`, naming it).
    public let failure: TrustError?
    /// Failures that did not reject the server (report-only evaluators, canary
    /// disagreements, an expired pin set falling back to default validation).
    public let findings: [TrustFinding]

    /// Whether the server was accepted.
    public var isTrusted: Bool { failure == nil }
    /// What a caller reads as the outcome: the failure, else the first informational finding
    /// (a report-only evaluator that rejected), else nil for verified.
    public var outcome: TrustError? { failure ?? findings.first { $0.mode == .informational }?.error }
    /// The handshake evidence evaluated.
    public var handshake: HandshakeEvidence { trust.handshake }
    /// The chain an evaluator validated, leaf first, with the anchors above the validated path
    /// that issued its top; empty when none was (see ``PeerTrust/validatedChainIfComputed``).
    public var validatedChain: [Certificate] { trust.validatedChainIfComputed ?? [] }
    /// Which certificates of ``validatedChain`` the pins matched, with their depth and whether
    /// each is an anchor above the validated path (``PeerTrust/pinMatches``); empty without pins.
    public var pinMatches: [PinMatch] { trust.pinMatches }
    /// Revocation status per checked certificate, when the policy checks revocation.
    public var revocation: [CertificateRevocationResult] { trust.revocationResults ?? [] }
    /// The Certificate Transparency outcome — compliant or what was missing, with every SCT
    /// seen — when the host requires CT (``HostPolicy/certificateTransparency``) and the chain
    /// got that far; nil otherwise.
    public let certificateTransparency: CertificateTransparencyOutcome?
    /// The requirement ``certificateTransparency`` was judged under (the host's
    /// ``HostPolicy/certificateTransparency``); nil when that outcome is nil.
    public let certificateTransparencyRequirement: CertificateTransparencyRequirement?

    /// ``certificateTransparency`` as reports print it (`fetch --json`, metrics): the outcome
    /// with its mode and every SCT seen; nil when no outcome was reached.
    public var certificateTransparencyReport: CertificateTransparencyReport? {
        guard let outcome = certificateTransparency, let requirement = certificateTransparencyRequirement else { return nil }
        return CertificateTransparencyReport(outcome, requirement: requirement)
    }
}

extension ResolvedHostPolicy {
    /// Evaluates a server for this host: the one evaluation entry point of every client path.
    ///
    /// The policy's evaluator runs on a ``PeerTrust`` made of the presented chain, the
    /// handshake evidence and `context`; then the host is checked against the leaf
    /// (``ServerTrustEvaluating/evaluateAsPolicy(_:forHost:)``, third review, finding 1) and the
    /// negotiated protocol against ``HostPolicy/minimumTLSVersion``, then the host's Certificate
    /// Transparency requirement (``HostPolicy/certificateTransparency``) on the validated chain
    /// and the handshake's SCTs. Before and after the
    /// evaluator, the presented and the validated chain are checked against ``denyList``. The evaluation is counted in
    /// `context.counters` and logged to `context.logger` (debug for every evaluation, error for
    /// every failure and every finding not logged already), whichever transport asked.
    ///
    /// - Parameters:
    ///   - presentedChain: the certificates as the server sent them, leaf first.
    ///   - handshake: what the handshake gave besides the chain; default none.
    ///   - context: anchors, options, fetcher, clock, counters and logger.
    /// - Returns: the evaluation; its ``TrustEvaluation/failure`` is nil when the server is accepted.
    public func evaluate(
        _ presentedChain: [Certificate], handshake: HandshakeEvidence = HandshakeEvidence(), in context: TrustEvaluationContext
    ) -> TrustEvaluation {
        let trust = PeerTrust(
            presentedChain: presentedChain, anchors: context.anchors, validationTime: context.clock(), handshake: handshake,
            validationOptions: context.validationOptions, revocationFetcher: context.revocationFetcher)
        let evaluator = self.evaluator
        let hostName = host.name
        var failure: TrustError?
        var certificateTransparency: CertificateTransparencyOutcome?
        do {
            // The deny-list first, on the chain as sent; then, once an evaluator has built
            // one, on the validated chain (which adds the anchor and may differ from what was
            // sent) — with the anchors above the validated path, as pins see it: a listed key
            // refuses its whole hierarchy whichever of its certificates the anchors hold, and a
            // deny-list that sees more can only refuse more. Nothing the policy decides —
            // report-only, a request's own evaluator — overrides it.
            try denyList.check(presentedChain, host: hostName, evaluator: evaluator.name)
            try evaluator.evaluateAsPolicy(trust, forHost: hostName)
            if let validated = trust.validatedChainIfComputed {
                try denyList.check(validated, host: hostName, evaluator: evaluator.name)
            }
            try checkProtocolVersion(handshake.protocolVersion)
            try checkKeyExchange(handshake.keyExchangeGroup)
            if let checked = checkCertificateTransparency(trust) {
                certificateTransparency = checked.outcome
                if let refusal = checked.refusal { throw refusal }
            }
        } catch let error as TrustError {
            failure = error
        } catch {
            failure = TrustError(.openSSLFailure, "Evaluator \(evaluator.name) threw \(error)", evaluator: evaluator.name, host: hostName)
        }
        let evaluation = TrustEvaluation(
            host: hostName, matchedPattern: pattern, evaluator: evaluator, trust: trust, failure: failure,
            findings: trust.findings, certificateTransparency: certificateTransparency,
            certificateTransparencyRequirement: certificateTransparency == nil ? nil : policy.certificateTransparency)
        record(evaluation, in: context)
        return evaluation
    }

    /// Refuses a negotiated version below the policy's floor. An unknown version (a transport
    /// that cannot tell, as swift-nio-ssl's callback) is left to the transport's configuration,
    /// which ServerTrustNIO checks against the floor before connecting.
    private func checkProtocolVersion(_ version: TLSProtocolVersion?) throws {
        guard let version, version < policy.minimumTLSVersion else { return }
        throw TrustError(
            .tlsVersionBelowPolicy,
            "The connection to \(host) negotiated \(version), and its policy requires \(policy.minimumTLSVersion) or later.",
            evaluator: evaluator.name, host: host.name)
    }

    /// Refuses a key exchange below the policy's requirement. Unlike the version, an unknown
    /// group fails a post-quantum requirement: nothing else would check it.
    private func checkKeyExchange(_ group: String?) throws {
        guard !policy.keyExchange.isSatisfied(by: group) else { return }
        throw TrustError(
            .keyExchangeBelowPolicy,
            "The connection to \(host) " + (group.map { "negotiated the classical key-exchange group \($0)" } ?? "negotiated a key exchange the transport cannot name")
                + ", and its policy requires \(policy.keyExchange) key exchange (an ML-KEM group such as X25519MLKEM768).",
            evaluator: evaluator.name, host: host.name)
    }

    /// Counts and logs an evaluation: the same for every transport.
    private func record(_ evaluation: TrustEvaluation, in context: TrustEvaluationContext) {
        let hostName = evaluation.host
        let logger = context.logger
        context.counters?.recordEvaluation()
        var metadata: Logger.Metadata = [
            "host": .string(hostName), "evaluator": .string(evaluation.evaluator.name),
            "result": .string(evaluation.outcome.map { "failed (\($0.code)): \($0.reason)" } ?? "verified"),
        ]
        let matches = evaluation.pinMatches
        if !matches.isEmpty { metadata["pinMatches"] = .array(matches.map { .string($0.description) }) }
        logger.debug("Trust evaluation for \(hostName): \(evaluation.failure == nil ? "accepted" : "rejected")", metadata: metadata)
        if let failure = evaluation.failure {
            context.counters?.recordFailure(failure.code)
            logger.error("Rejected \(hostName): \(failure.reason)", metadata: TrustLogging.metadata(for: failure, host: hostName, mode: .enforced))
        }
        for finding in evaluation.findings {
            context.counters?.recordFailure(finding.error.code)
            guard !finding.isLogged else { continue }
            logger.error(
                "\(finding.mode) trust failure for \(hostName), not enforced: \(finding.error.reason)",
                metadata: TrustLogging.metadata(for: finding.error, host: hostName, mode: finding.mode))
        }
    }
}
