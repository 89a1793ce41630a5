import Foundation
internal import ServerTrust

/// What a session derives from one trust manager: the manager, its generation in the
/// session's `LiveTrustManager` and the compiled signed-response policies of its patterns. Made
/// once per manager the session sees, so a replaced manager replaces all of it at once.
///
/// It holds no per-host table of its own: ``resolve(_:override:)`` gives a host everything it
/// needs once — the manager's resolution and the host's compiled signed-response policy — and
/// the session keeps that in the host's `TrustPolicy`.
final class SessionTrust: Sendable {
    let generation: UInt64
    let manager: ServerTrustManager?
    /// Why this manager cannot be used with the session's configuration (a client identity
    /// OpenSSL refuses…): every request fails with it, closed, until a usable manager replaces it.
    let failure: SessionError?
    /// The signed-response policy of each pattern that has one, compiled.
    private let signedResponseEntries: [HostPattern: SignedResponseChecker.Entry]

    private init(
        generation: UInt64, manager: ServerTrustManager?, signedResponseEntries: [HostPattern: SignedResponseChecker.Entry],
        failure: SessionError?
    ) {
        self.generation = generation
        self.manager = manager
        self.signedResponseEntries = signedResponseEntries
        self.failure = failure
    }

    /// The manager under `configuration`, checked and compiled.
    /// - Throws: what ``Session/init(configuration:trustManager:)`` documents for them.
    static func make(_ manager: ServerTrustManager?, generation: UInt64, configuration: Session.Configuration) throws -> SessionTrust {
        let policies = manager?.policies ?? []
        var signedResponseEntries: [HostPattern: SignedResponseChecker.Entry] = [:]
        for (pattern, policy) in policies {
            guard let signed = policy.signedResponses else { continue }
            signedResponseEntries[pattern] = try SignedResponseChecker.compile(signed, clock: configuration.signatureClock)
        }
        // Each client identity OpenSSL would refuse is refused now.
        for (pattern, policy) in policies {
            guard let identity = policy.clientIdentity, let problems = TLSBridge.installationProblems(identity) else { continue }
            var evidence = TrustError.Evidence()
            evidence.openSSLErrors = problems
            throw TrustError(
                .invalidConfiguration,
                "OpenSSL refuses the client identity \(identity) for \(pattern.description.debugDescription) (a key below the system's security level, e.g. RSA under 2048 bits?).",
                evidence: evidence)
        }
        return SessionTrust(generation: generation, manager: manager, signedResponseEntries: signedResponseEntries, failure: nil)
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
                generation: generation, manager: manager, signedResponseEntries: previous.signedResponseEntries,
                failure: SessionError(.trustEvaluationFailed, reason, trustError: error as? TrustError ?? TrustError(.invalidConfiguration, reason)))
        }
    }

    /// Everything the session needs of a host, once: `resolved` (the manager's resolution, or
    /// default validation), with `override` as its evaluator when a request names its own (and
    /// no pattern: its reports name none), and the host's compiled signed-response policy.
    func resolve(
        _ resolved: ResolvedHostPolicy, override: (any ServerTrustEvaluating)?
    ) -> (resolved: ResolvedHostPolicy, signedResponses: SignedResponseChecker.Entry?) {
        let signedResponses = resolved.policy.signedResponses == nil ? nil : resolved.pattern.flatMap { signedResponseEntries[$0] }
        guard let override else { return (resolved, signedResponses) }
        var policy = HostPolicy.custom(override)
        (policy.minimumTLSVersion, policy.keyExchange, policy.certificateTransparency) =
            (resolved.policy.minimumTLSVersion, resolved.policy.keyExchange, resolved.policy.certificateTransparency)
        (policy.signedResponses, policy.clientIdentity, policy.reportURIs) =
            (resolved.policy.signedResponses, resolved.policy.clientIdentity, resolved.policy.reportURIs)
        return (
            ResolvedHostPolicy(
                host: resolved.host, pattern: nil, policy: policy, evaluator: override, denyList: resolved.denyList,
                certificateTransparencyLogs: resolved.certificateTransparencyLogs),
            signedResponses
        )
    }
}
