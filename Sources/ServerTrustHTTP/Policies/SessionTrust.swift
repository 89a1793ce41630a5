import Foundation
internal import ServerTrust

/// What a session derives from one trust manager: the manager, its generation in the
/// session's `LiveTrustManager`, the compiled signed-response policies of its patterns, and the
/// deprecated per-pattern settings of the configuration, validated. Made once per manager the
/// session sees, so a replaced manager replaces all of it at once.
///
/// It holds no per-host table of its own: ``resolve(_:override:)`` gives a host everything it
/// needs once — the manager's resolution with the deprecated settings folded into its
/// ``HostPolicy`` and the host's compiled signed-response policy — and the session keeps that
/// in the host's `TrustPolicy`.
final class SessionTrust: Sendable {
    let generation: UInt64
    let manager: ServerTrustManager?
    /// Why this manager cannot be used with the session's configuration (a delivered policy
    /// that sets signed responses the configuration sets too…): every request fails with it,
    /// closed, until a usable manager replaces it.
    let failure: SessionError?
    /// The signed-response policy of each pattern that has one (the manager's, or the
    /// deprecated `Session.Configuration.signedResponses`'), compiled.
    private let signedResponseEntries: [HostPattern: SignedResponseChecker.Entry]
    private let legacy: LegacySettings

    /// The deprecated per-pattern dictionaries, validated; empty where the manager's host
    /// policies set the same setting (the two are refused together).
    private struct LegacySettings: Sendable {
        var signedResponses = LegacyPatternSettings<SignedResponsePolicy>()
        var clientIdentities = LegacyPatternSettings<ClientIdentity>()
        var reportURIs = LegacyPatternSettings<[URL]>()
    }

    private init(
        generation: UInt64, manager: ServerTrustManager?, signedResponseEntries: [HostPattern: SignedResponseChecker.Entry],
        legacy: LegacySettings, failure: SessionError?
    ) {
        self.generation = generation
        self.manager = manager
        self.signedResponseEntries = signedResponseEntries
        self.legacy = legacy
        self.failure = failure
    }

    /// The manager under `configuration`, checked and compiled.
    /// - Throws: what ``Session/init(configuration:trustManager:)`` documents for them.
    static func make(_ manager: ServerTrustManager?, generation: UInt64, configuration: Session.Configuration) throws -> SessionTrust {
        let policies = manager?.table.entries ?? []
        var legacy = LegacySettings()

        // Signed responses: the host policies', or the configuration's, never both.
        var signedSource: [(pattern: HostPattern, value: SignedResponsePolicy)]
        let fromPolicies = policies.compactMap { entry in entry.value.signedResponses.map { (pattern: entry.pattern, value: $0) } }
        if !fromPolicies.isEmpty {
            guard configuration.legacySignedResponses.isEmpty else {
                throw TrustError(
                    .invalidConfiguration,
                    "Signed-response policies are set both in the trust manager's host policies and in "
                        + "Session.Configuration.signedResponses; set them in one place (HostPolicy.signedResponses).")
            }
            signedSource = fromPolicies
        } else {
            legacy.signedResponses = try LegacyPatternSettings(configuration.legacySignedResponses, subject: "Signed-response")
            signedSource = legacy.signedResponses.entries
        }
        var signedResponseEntries: [HostPattern: SignedResponseChecker.Entry] = [:]
        for (pattern, policy) in signedSource {
            signedResponseEntries[pattern] = try SignedResponseChecker.compile(policy, clock: configuration.signatureClock)
        }

        // Client identities: the same rule; each one OpenSSL would refuse is refused now.
        let identitiesFromPolicies = policies.compactMap { entry in entry.value.clientIdentity.map { (pattern: entry.pattern, value: $0) } }
        let identities: [(pattern: HostPattern, value: ClientIdentity)]
        if !identitiesFromPolicies.isEmpty {
            guard configuration.legacyClientIdentities.isEmpty else {
                throw TrustError(
                    .invalidConfiguration,
                    "Client identities are set both in the trust manager's host policies and in Session.Configuration.clientIdentities; "
                        + "set them in one place (HostPolicy.clientIdentity).")
            }
            identities = identitiesFromPolicies
        } else {
            legacy.clientIdentities = try LegacyPatternSettings(configuration.legacyClientIdentities, subject: "Client identity")
            identities = legacy.clientIdentities.entries
        }
        for (pattern, identity) in identities {
            guard let problems = TLSBridge.installationProblems(identity) else { continue }
            var evidence = TrustError.Evidence()
            evidence.openSSLErrors = problems
            throw TrustError(
                .invalidConfiguration,
                "OpenSSL refuses the client identity \(identity) for \(pattern.description.debugDescription) (a key below the system's security level, e.g. RSA under 2048 bits?).",
                evidence: evidence)
        }

        // Report URIs: the reporter's by pattern, unless the host policies set different ones.
        try Session.refuseTwoSourcesOfReportURIs(configuration, manager)
        legacy.reportURIs = configuration.failureReporter?.legacyReportURIs ?? LegacyPatternSettings()

        return SessionTrust(
            generation: generation, manager: manager, signedResponseEntries: signedResponseEntries, legacy: legacy, failure: nil)
    }

    /// `make`, or — when the new manager does not fit the configuration — the previous manager's
    /// settings with a failure that refuses every request.
    static func replacing(
        _ previous: SessionTrust, with manager: ServerTrustManager, generation: UInt64, configuration: Session.Configuration
    ) -> SessionTrust {
        do {
            return try make(manager, generation: generation, configuration: configuration)
        } catch {
            let reason = "The trust manager of generation \(generation) cannot be used with this session's configuration: \(error)"
            configuration.logger.error("\(reason)")
            return SessionTrust(
                generation: generation, manager: manager, signedResponseEntries: previous.signedResponseEntries, legacy: previous.legacy,
                failure: SessionError(.trustEvaluationFailed, reason, trustError: error as? TrustError ?? TrustError(.invalidConfiguration, reason)))
        }
    }

    /// Everything the session needs of a host, once: `resolved` (the manager's resolution, or
    /// default validation) with the deprecated per-pattern settings folded into its policy where
    /// the policy sets none, `override` as its evaluator when a request names its own, and the
    /// host's compiled signed-response policy.
    func resolve(
        _ resolved: ResolvedHostPolicy, override: (any ServerTrustEvaluating)?
    ) -> (resolved: ResolvedHostPolicy, signedResponses: SignedResponseChecker.Entry?) {
        let host = resolved.host
        var policy = resolved.policy
        var signedPattern = policy.signedResponses == nil ? nil : resolved.pattern
        if policy.signedResponses == nil, let match = legacy.signedResponses.match(host) {
            policy.signedResponses = match.value
            signedPattern = match.pattern
        }
        if policy.clientIdentity == nil, let match = legacy.clientIdentities.match(host) { policy.clientIdentity = match.value }
        // A request's own evaluator replaces the manager's pattern too (its reports name none).
        let pattern = override == nil ? resolved.pattern : nil
        if policy.reportURIs.isEmpty {
            policy.reportURIs = legacy.reportURIs.match(host)?.value ?? pattern.flatMap(legacy.reportURIs.value(for:)) ?? []
        }
        if let override { policy.evaluator = override }
        return (
            ResolvedHostPolicy(
                host: host, pattern: pattern, policy: policy, denyList: resolved.denyList,
                certificateTransparencyLogs: resolved.certificateTransparencyLogs),
            signedPattern.flatMap { signedResponseEntries[$0] }
        )
    }
}
