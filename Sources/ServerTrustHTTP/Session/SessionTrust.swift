import Foundation
internal import ServerTrust

/// What a session derives from one trust manager: the manager, its generation in the
/// session's `LiveTrustManager`, and the tables built from its host policies (signed
/// responses, client identities). Made once per manager the session sees, so a replaced
/// manager replaces all of it at once, and a request reads one consistent set.
final class SessionTrust: Sendable {
    let generation: UInt64
    let manager: ServerTrustManager?
    let signedResponses: SignedResponseChecker
    let clientIdentities: ClientIdentityTable
    /// Why this manager cannot be used with the session's configuration (a delivered policy
    /// that sets signed responses the configuration sets too…): every request fails with it,
    /// closed, until a usable manager replaces it.
    let failure: SessionError?

    private init(
        generation: UInt64, manager: ServerTrustManager?, signedResponses: SignedResponseChecker, clientIdentities: ClientIdentityTable,
        failure: SessionError?
    ) {
        self.generation = generation
        self.manager = manager
        self.signedResponses = signedResponses
        self.clientIdentities = clientIdentities
        self.failure = failure
    }

    /// The tables of `manager` under `configuration`.
    /// - Throws: what ``Session/init(configuration:trustManager:)`` documents for them.
    static func make(_ manager: ServerTrustManager?, generation: UInt64, configuration: Session.Configuration) throws -> SessionTrust {
        let signedResponses = try SignedResponseChecker(configuration: configuration, trustManager: manager)
        let clientIdentities = try ClientIdentityTable(configuration.clientIdentities, trustManager: manager)
        try Session.refuseTwoSourcesOfReportURIs(configuration, manager)
        return SessionTrust(
            generation: generation, manager: manager, signedResponses: signedResponses, clientIdentities: clientIdentities, failure: nil)
    }

    /// `make`, or — when the new manager does not fit the configuration — the previous tables
    /// with a failure that refuses every request.
    static func replacing(
        _ previous: SessionTrust, with manager: ServerTrustManager, generation: UInt64, configuration: Session.Configuration
    ) -> SessionTrust {
        do {
            return try make(manager, generation: generation, configuration: configuration)
        } catch {
            let reason = "The trust manager of generation \(generation) cannot be used with this session's configuration: \(error)"
            configuration.logger.error("\(reason)")
            return SessionTrust(
                generation: generation, manager: manager, signedResponses: previous.signedResponses,
                clientIdentities: previous.clientIdentities,
                failure: SessionError(.trustEvaluationFailed, reason, trustError: error as? TrustError ?? TrustError(.invalidConfiguration, reason)))
        }
    }
}
