import Foundation
internal import ServerTrust

/// A session's trust policies, one per host (and per request-level evaluator), resolved once.
///
/// A manager lookup and a `TrustPolicy` per request would cost kept-alive throughput for
/// nothing, and a host must keep one policy — one stamp — however many spellings reach it. The
/// registry holds them in two tables, never mixed: by normalised host, and by the URL's own
/// spelling of the host, which maps to the policy of *its* normalisation. A raw key is never
/// read as a normalised one: `HostName.normalize` is not idempotent (`a.test..` → `a.test.` →
/// `a.test`), so one shared table could hand `a.test.`'s policy to a host that normalises to
/// `a.test.`. Looking the spelling up first saves the normalisation (≈ 8.5 k instructions for an
/// IP literal).
///
/// At ``limit`` policies the tables are emptied; `onEviction` then frees what the dropped
/// policies held (curl shares and idle handles, revocation loops) once nothing uses them.
final class PolicyRegistry: Sendable {
    static let limit = 10_000

    private struct Key: Hashable {
        let host: String
        let evaluator: ObjectIdentifier?
    }

    private struct Tables {
        var byHost: [Key: TrustPolicy] = [:]
        var byRawHost: [Key: TrustPolicy] = [:]
    }

    private let tables = Locked(Tables())
    private let makePolicy: @Sendable (_ host: String, _ override: (any ServerTrustEvaluating)?) throws(SessionError) -> TrustPolicy
    private let onEviction: @Sendable (_ evictedThrough: UInt64) -> Void

    /// - Parameters:
    ///   - makePolicy: a new policy for a normalised host and a request's own evaluator (or nil).
    ///   - onEviction: called after the tables were emptied, with the highest policy ID dropped.
    init(
        makePolicy: @escaping @Sendable (_ host: String, _ override: (any ServerTrustEvaluating)?) throws(SessionError) -> TrustPolicy,
        onEviction: @escaping @Sendable (_ evictedThrough: UInt64) -> Void
    ) {
        self.makePolicy = makePolicy
        self.onEviction = onEviction
    }

    /// Policies held (tests).
    var count: Int { tables.withLock { $0.byHost.count } }

    /// Whether a policy with this override may be held, and the override's part of the key: an
    /// evaluator that is not a class instance has no identity to key it by, so its policy is
    /// made for each request.
    static func cacheIdentity(of override: (any ServerTrustEvaluating)?) -> (cacheable: Bool, identity: ObjectIdentifier?) {
        let identity = override.flatMap { type(of: $0) is AnyObject.Type ? ObjectIdentifier($0 as AnyObject) : nil }
        return (override == nil || identity != nil, identity)
    }

    /// The policy for a host as the URL spells it, looked up by that spelling first.
    func policy(forRawHost rawHost: String, override: (any ServerTrustEvaluating)?) throws(SessionError) -> TrustPolicy {
        let (cacheable, identity) = Self.cacheIdentity(of: override)
        let rawKey = Key(host: rawHost, evaluator: identity)
        if cacheable, let held = tables.withLock({ $0.byRawHost[rawKey] }) { return held }
        let policy = try self.policy(forHost: HostName.normalize(rawHost), override: override, cacheable: cacheable, identity: identity)
        if cacheable {
            tables.withLock { tables in
                // Only a policy byHost still holds, so a spelling never outlives its host's entry.
                guard tables.byHost[Key(host: policy.host, evaluator: identity)] === policy else { return }
                if tables.byRawHost.count >= Self.limit { tables.byRawHost.removeAll() }
                tables.byRawHost[rawKey] = policy
            }
        }
        return policy
    }

    /// The policy for a normalised host, made once.
    private func policy(
        forHost host: String, override: (any ServerTrustEvaluating)?, cacheable: Bool, identity: ObjectIdentifier?
    ) throws(SessionError) -> TrustPolicy {
        let key = Key(host: host, evaluator: identity)
        if cacheable, let held = tables.withLock({ $0.byHost[key] }) { return held }
        let policy = try makePolicy(host, override)
        guard cacheable else { return policy }
        let (filed, evictedThrough) = tables.withLock { tables -> (TrustPolicy, UInt64?) in
            // Two requests may resolve the same host at once: the first one filed wins, so a
            // host keeps one policy (and one stamp) however many spellings reach it.
            if let filed = tables.byHost[key] { return (filed, nil) }
            var evictedThrough: UInt64?
            if tables.byHost.count >= Self.limit {
                evictedThrough = tables.byHost.values.lazy.map(\.id).max()
                tables.byHost.removeAll()
                tables.byRawHost.removeAll()
            }
            tables.byHost[key] = policy
            return (policy, evictedThrough)
        }
        if let evictedThrough { onEviction(evictedThrough) }
        return filed
    }
}
