import Synchronization
internal import ServerTrust

/// One policy's curl handles: the share its transfers resume TLS sessions through, and the
/// finished easy handles waiting for its next request (``EasyHandleConfigurator``).
///
/// Owned by its ``TrustPolicy``, so whatever holds the policy holds them — the session's
/// ``PolicyRegistry``, a running transfer, a cached connection (its `SSL_CTX` retains the
/// context naming the policy) — and they go when the policy goes, eviction included. Nothing
/// else keeps a table of them. Without this a session with a per-request evaluator, or with
/// more hosts than its registry keeps, grew by one share per policy without end.
///
/// A policy is deinitialised wherever its last reference drops, often inside curl: OpenSSL
/// frees a closed connection's `SSL_CTX`, and with it the policy, in the middle of
/// `curl_multi_perform`, where curl must not be re-entered to free handles. So the handles are
/// retired to the session's ``Pool`` and freed by a loop at the top of its next turn (within a
/// second: the loop polls with a one-second timeout), or at once after the session has shut
/// down. An easy handle keeps its share alive (``EasyHandle/share``), so the two can be freed in
/// any order.
///
/// Taken and given back on a loop thread; the lock makes a policy's move from one loop to
/// another (``RevocationLoops``) and its deinitialisation on any thread safe.
final class PolicyHandles: Sendable {
    private struct Held {
        var share: ShareHandle?
        var idle: [EasyHandle] = []
    }

    private let held = Locked(Held())
    private let pool: Pool

    init(pool: Pool) { self.pool = pool }

    deinit {
        let held = held.withLock { held in
            defer { held = Held() }
            return held
        }
        pool.retire(share: held.share, idle: held.idle)
    }

    /// The policy's share (made on first use when `makingShare`; nil if curl cannot make one)
    /// and an idle easy handle made for the policy, if one is waiting.
    func checkOut(makingShare: Bool) -> (share: ShareHandle?, idle: EasyHandle?) {
        let (share, idle, madeShare) = held.withLock { held -> (ShareHandle?, EasyHandle?, Bool) in
            var made = false
            if makingShare, held.share == nil {
                held.share = ShareHandle()
                made = held.share != nil
            }
            return (held.share, held.idle.popLast(), made)
        }
        if madeShare { pool.shareMade() }
        if idle != nil { pool.idleTaken(1) }
        return (share, idle)
    }

    /// Keeps `easy`, unhooked from its finished transfer, for the policy's next request; frees
    /// it instead when the session's idle handles are at their limit.
    /// Loop thread, outside curl callbacks.
    func checkIn(_ easy: EasyHandle) {
        EasyHandleConfigurator.detach(easy)
        guard pool.reserveIdleSlot() else { return }
        held.withLock { $0.idle.append(easy) }
    }

    /// The session's side of every policy's handles: the limit on idle easy handles, counts for
    /// tests, and the handles of deinitialised policies waiting for a loop to free them.
    final class Pool: Sendable {
        private struct Retired {
            var closed = false
            var shares: [ShareHandle] = []
            var idle: [EasyHandle] = []
        }

        /// The most idle easy handles kept across the session's policies: what a burst of
        /// concurrent requests leaves behind, one handle per request
        /// (``Session/Configuration/maximumIdleHandles``).
        let idleCapacity: Int
        private let idleCount = Atomic<Int>(0)
        private let shareCount = Atomic<Int>(0)
        /// Set when something was retired: lets a loop skip the lock on its other turns.
        private let pending = Atomic<Bool>(false)
        private let retired = Locked(Retired())

        init(idleCapacity: Int) { self.idleCapacity = idleCapacity }

        /// Idle easy handles kept (tests).
        var idleHandles: Int { idleCount.load(ordering: .relaxed) }
        /// Policy shares not yet freed, retired ones included (tests).
        var liveShares: Int { shareCount.load(ordering: .relaxed) }

        fileprivate func shareMade() { shareCount.add(1, ordering: .relaxed) }
        fileprivate func idleTaken(_ count: Int) { idleCount.subtract(count, ordering: .relaxed) }

        fileprivate func reserveIdleSlot() -> Bool {
            var current = idleCount.load(ordering: .relaxed)
            while current < idleCapacity {
                let (exchanged, original) = idleCount.weakCompareExchange(
                    expected: current, desired: current + 1, successOrdering: .relaxed, failureOrdering: .relaxed)
                if exchanged { return true }
                current = original
            }
            return false
        }

        /// A deinitialised policy's handles: freed by ``drain()`` on a loop, or now once the
        /// session's loops have stopped (``close()``).
        fileprivate func retire(share: ShareHandle?, idle: [EasyHandle]) {
            guard share != nil || !idle.isEmpty else { return }
            idleTaken(idle.count)
            let kept = retired.withLock { retired -> Bool in
                guard !retired.closed else { return false }
                if let share { retired.shares.append(share) }
                retired.idle += idle
                return true
            }
            if kept {
                pending.store(true, ordering: .releasing)
            } else {
                free(shares: share.map { [$0] } ?? [], idle: idle)
            }
        }

        /// Frees what was retired. Loop threads, at the top of a turn: never inside a curl call.
        func drain() {
            guard pending.load(ordering: .acquiring) else { return }
            let taken = retired.withLock { retired in
                pending.store(false, ordering: .relaxed)
                defer { retired.shares = []; retired.idle = [] }
                return (retired.shares, retired.idle)
            }
            free(shares: taken.0, idle: taken.1)
        }

        /// The session's loops have stopped: frees what is retired and, from now on, frees
        /// retired handles at once. Idempotent.
        func close() {
            let taken = retired.withLock { retired in
                retired.closed = true
                defer { retired.shares = []; retired.idle = [] }
                return (retired.shares, retired.idle)
            }
            free(shares: taken.0, idle: taken.1)
        }

        private func free(shares: consuming [ShareHandle], idle: consuming [EasyHandle]) {
            // Each easy handle holds its share too, so the share's curl_share_cleanup runs
            // only after the last easy handle using it was cleaned up.
            let freedShares = shares.count
            _ = consume idle
            _ = consume shares
            shareCount.subtract(freedShares, ordering: .relaxed)
        }
    }
}
