/// The ``ShareHandle`` of each policy the loop has served, freed with its policy.
///
/// A policy lives as long as something still uses it: the session's policy cache, a transfer,
/// or a cached connection (its `SSL_CTX` retains the ``ConnectionContext`` naming it). Once none
/// does, nothing can resume its TLS sessions any more, so its share and its idle easy handles
/// (which point at the share) are freed. Without this a session with a per-request evaluator,
/// or with more hosts than its policy cache keeps, grew by one share per policy without end.
///
/// Dead policies are found by a sweep over their ``PolicyLifetime``s, run when the table has
/// doubled since the last one: amortised O(1) per new policy. Loop thread only.
struct PolicyShares: ~Copyable {
    private final class Entry {
        let share: ShareHandle?
        let lifetime: PolicyLifetime
        init(share: ShareHandle?, policy: TrustPolicy) {
            self.share = share
            lifetime = policy.lifetime
        }
    }

    private var entries: [UInt64: Entry] = [:]
    private var nextSweep = PolicyShares.minimumSweepSize
    static let minimumSweepSize = 64

    /// Shares alive (tests).
    var count: Int { entries.count }

    /// `policy`'s share, made on first use.
    mutating func share(for policy: TrustPolicy, idle: inout IdleEasyHandles) -> ShareHandle? {
        if let entry = entries[policy.id] { return entry.share }
        if entries.count >= nextSweep { sweep(idle: &idle) }
        let entry = Entry(share: ShareHandle(), policy: policy)
        entries[policy.id] = entry
        return entry.share
    }

    /// Frees the share and idle handles of every policy that is gone; the handles first, as
    /// `curl_share_cleanup` refuses a share an easy handle still uses.
    mutating func sweep(idle: inout IdleEasyHandles) {
        for (id, entry) in entries where entry.lifetime.hasEnded {
            idle.removeAll(for: id)
            entries[id] = nil
        }
        nextSweep = max(Self.minimumSweepSize, 2 * entries.count)
    }

    mutating func removeAll() { entries.removeAll() }
}
