import Foundation
internal import ServerTrust

// Fast path: docs/PERFORMANCE.md#fast-paths, "Host spelling key".
/// A session's trust policies, one per host (and per request-level evaluator), resolved once.
///
/// A manager lookup and a `TrustPolicy` per request would cost kept-alive throughput for
/// nothing, and a host must keep one policy — one stamp — however many spellings reach it. One
/// table holds them, keyed by host text: a key is either a ``NormalizedHost`` name or a URL's
/// own spelling of a host, and its value is always the policy of `NormalizedHost(key)`.
/// Normalising is idempotent, so the two kinds of key can never disagree: a normalised name is
/// its own spelling. Looking the URL's spelling up first saves the normalisation on every
/// request after the first.
///
/// At ``limit`` entries the table is emptied; `onEviction` then frees what the dropped policies
/// held (curl shares and idle handles, revocation loops) once nothing uses them.
final class PolicyRegistry: Sendable {
    static let limit = 10_000

    private struct Key: Hashable {
        /// A normalised host name, or a spelling that normalises to the policy's host.
        let host: String
        let evaluator: ObjectIdentifier?
    }

    private struct Table {
        /// The ``SessionTrust/generation`` the policies were made under.
        var generation: UInt64 = 0
        var policies: [Key: TrustPolicy] = [:]
    }

    private let table = Locked(Table())
    private let makePolicy:
        @Sendable (_ host: NormalizedHost, _ override: (any ServerTrustEvaluating)?, _ trust: SessionTrust) throws(SessionError) -> TrustPolicy
    private let onEviction: @Sendable (_ evictedThrough: UInt64) -> Void

    /// - Parameters:
    ///   - makePolicy: a new policy for a host and a request's own evaluator (or nil).
    ///   - onEviction: called after the table was emptied, with the highest policy ID dropped.
    init(
        makePolicy:
            @escaping @Sendable (_ host: NormalizedHost, _ override: (any ServerTrustEvaluating)?, _ trust: SessionTrust) throws(SessionError) ->
            TrustPolicy,
        onEviction: @escaping @Sendable (_ evictedThrough: UInt64) -> Void
    ) {
        self.makePolicy = makePolicy
        self.onEviction = onEviction
    }

    /// Drops every policy (the session has shut down); `onEviction` is not called.
    func removeAll() { table.withLock { $0.policies.removeAll() } }

    /// Distinct policies held (tests).
    var count: Int { table.withLock { Set($0.policies.values.lazy.map { ObjectIdentifier($0) }).count } }

    /// Whether a policy with this override may be held, and the override's part of the key: an
    /// evaluator that is not a class instance has no identity to key it by, so its policy is
    /// made for each request.
    static func cacheIdentity(of override: (any ServerTrustEvaluating)?) -> (cacheable: Bool, identity: ObjectIdentifier?) {
        let identity = override.flatMap { type(of: $0) is AnyObject.Type ? ObjectIdentifier($0 as AnyObject) : nil }
        return (override == nil || identity != nil, identity)
    }

    /// The policy for a host as the URL spells it, made once per normalised host and trust
    /// manager: when `trust` is newer than the policies held, they are dropped (as at the
    /// limit) and the host's policy is made from the new manager — so a kept-alive connection
    /// stamped by a replaced policy is evaluated again before its next request.
    func policy(forRawHost rawHost: String, override: (any ServerTrustEvaluating)?, trust: SessionTrust) throws(SessionError) -> TrustPolicy {
        let (cacheable, identity) = Self.cacheIdentity(of: override)
        let spelling = Key(host: rawHost, evaluator: identity)
        let generation = trust.generation
        if cacheable, let held = table.withLock({ $0.generation == generation ? $0.policies[spelling] : nil }) { return held }
        let host = NormalizedHost(rawHost)
        let key = Key(host: host.name, evaluator: identity)
        if cacheable, let held = table.withLock({ $0.generation == generation ? $0.policies[key] : nil }) {
            table.withLock { table in
                // Only while the host's own entry still holds it: a spelling never outlives it.
                guard table.generation == generation, table.policies[key] === held, table.policies.count < Self.limit else { return }
                table.policies[spelling] = held
            }
            return held
        }
        let policy = try makePolicy(host, override, trust)
        guard cacheable else { return policy }
        let (filed, evictedThrough) = table.withLock { table -> (TrustPolicy, UInt64?) in
            var evictedThrough: UInt64?
            if generation > table.generation {
                // A new trust manager: every policy of the old one goes.
                evictedThrough = table.policies.values.lazy.map(\.id).max()
                table.policies.removeAll()
                table.generation = generation
            } else if generation < table.generation {
                // Made from a manager already replaced (a request that read it just before):
                // used for this request, never filed.
                return (policy, nil)
            }
            // Two requests may resolve the same host at once: the first one filed wins, so a
            // host keeps one policy (and one stamp) however many spellings reach it.
            if let filed = table.policies[key] { return (filed, evictedThrough) }
            if table.policies.count >= Self.limit {
                evictedThrough = max(evictedThrough ?? 0, table.policies.values.lazy.map(\.id).max() ?? 0)
                table.policies.removeAll()
            }
            table.policies[key] = policy
            table.policies[spelling] = policy
            return (policy, evictedThrough)
        }
        if let evictedThrough { onEviction(evictedThrough) }
        return filed
    }
}

// MARK: The policy factory

extension PolicyRegistry {
    /// A new policy for a normalised host: the trust manager's resolution (its
    /// ``ServerTrustManager/resolve(host:)``: the most specific pattern's ``HostPolicy``, else
    /// default validation), with `override` as the evaluator when a request names its own.
    /// Called by the registry when it holds none for the host.
    static func makePolicy(
        forHost host: NormalizedHost, override: (any ServerTrustEvaluating)?, trust: SessionTrust, parts: PolicyParts
    ) throws(SessionError) -> TrustPolicy {
        let trustManager = trust.manager
        let resolved: ResolvedHostPolicy
        do throws(TrustError) {
            if let trustManager {
                resolved = try trustManager.resolve(host, spelled: host.name)
            } else {
                resolved = .defaultValidation(for: host)
            }
        } catch {
            // A request's own evaluator replaces the manager's for the host, unmatched or not.
            guard override == nil else {
                return makePolicy(
                    .defaultValidation(for: host, denyList: trustManager?.denyList ?? KeyDenyList()),
                    override, trust, parts)
            }
            throw SessionError(.trustEvaluationFailed, "No trust policy for \(host).", trustError: error)
        }
        return makePolicy(resolved, override, trust, parts)
    }

    private static func makePolicy(
        _ resolved: ResolvedHostPolicy, _ override: (any ServerTrustEvaluating)?, _ trust: SessionTrust, _ parts: PolicyParts
    ) -> TrustPolicy {
        let (resolved, signedResponses) = trust.resolve(resolved, override: override)
        let configuration = parts.configuration
        return TrustPolicy(
            resolved: resolved, signedResponses: signedResponses, anchors: parts.anchors,
            validationOptions: configuration.validationOptions, revocationFetcher: parts.revocationFetcher,
            counters: configuration.trustCounters, logger: configuration.logger, clock: configuration.clock,
            maximumConnectionLifetime: parts.connectionLifetime,
            writesTLSSecretsToKeyLog: configuration.unsafeWriteTLSSecretsToSSLKEYLOGFILE,
            metrics: parts.metrics, handlePool: parts.handlePool)
    }

    /// What every policy of a session is made with.
    struct PolicyParts: Sendable {
        let configuration: Session.Configuration
        let anchors: TrustAnchors
        let revocationFetcher: any RevocationFetcher
        let connectionLifetime: TimeInterval
        let metrics: SessionMetrics?
        let handlePool: PolicyHandles.Pool
    }
}
