public import Foundation
internal import ServerTrust

/// A session's hosts, each resolved once (``PolicyRegistry``) under the manager in force (``SessionTrust``).
extension Session {
    /// Whether responses from `url`'s host are signature-checked: the host's resolved policy
    /// (`HostPolicy.signedResponses`) is informational or enforced.
    ///
    /// Such a response needs its whole body before any of it can be used, so ``stream(_:)``
    /// refuses the request and ``data(for:)`` buffers and verifies it. An adapter that streams
    /// by default asks this to choose: ServerTrustOpenAPI's transport, for one.
    /// A redirect can still lead a stream to a checked host, where ``stream(_:)`` refuses
    /// that hop.
    public func checksSignedResponses(from url: URL) -> Bool {
        guard let host = url.host, let policy = try? policy(forRawHost: host, override: nil) else { return false }
        return policy.checksSignedResponses
    }

    /// The policy for a host as the URL spells it (``PolicyRegistry/policy(forRawHost:override:)``).
    func policy(forRawHost rawHost: String, override: (any ServerTrustEvaluating)?) throws(SessionError) -> TrustPolicy {
        let trust = currentTrust()
        if let failure = trust.failure { throw failure }
        return try policies.policy(forRawHost: rawHost, override: override, trust: trust)
    }

    // Fast path: docs/PERFORMANCE.md#fast-paths, "Trust generation read without a lock".
    /// The tables of the manager in force: the held ones while the live manager's generation
    /// is theirs, else new ones for the new manager (made once, under the lock).
    ///
    /// The live manager's generation is read first, without its lock
    /// (`LiveTrustManager.publishedGeneration`): while it is the held tables' — every request
    /// but the first after a replacement — one lock, the session's, is all a request takes.
    func currentTrust() -> SessionTrust {
        guard let source = liveTrustManager else { return trustTables.withLock { $0 } }
        let published = source.publishedGeneration
        if let held = trustTables.withLock({ $0.generation >= published ? $0 : nil }) { return held }
        let (manager, generation) = source.snapshot
        return trustTables.withLock { held in
            // A reader holding an older snapshot than the tables never moves them back.
            guard generation > held.generation else { return held }
            held = SessionTrust.replacing(held, with: manager, generation: generation, configuration: configuration)
            return held
        }
    }
}
