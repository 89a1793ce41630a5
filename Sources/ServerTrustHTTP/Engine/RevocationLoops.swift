import Foundation
internal import ServerTrust

/// The loops that run the transfers of policies whose evaluator may block on the network
/// (``TrustPolicy/mayFetchRevocationData``): each such policy gets a ``MultiLoop`` of its own,
/// so a live OCSP or CRL fetch — a blocking `curl_easy_perform` inside the handshake, bounded
/// only by the revocation time budget — stalls that policy's transfers and no one else's.
/// Every other policy stays on the session's main loop.
///
/// Why a loop per policy, not an asynchronous verification: libcurl 7.88's OpenSSL backend
/// treats `SSL_ERROR_WANT_RETRY_VERIFY` from `SSL_connect` as a fatal handshake error, so
/// OpenSSL 3's `SSL_set_retry_verify` cannot park the handshake while another thread fetches
/// (docs/PERFORMANCE.md#revocation-fetches-and-other-hosts).
///
/// Lifetime. A policy's loop lives while the session's policy cache holds the policy or one of
/// its transfers is running (`acquire` to `release`), so its kept-alive connections serve the
/// policy's next requests. It is stopped once neither holds: when its last transfer ends after
/// the policy was evicted (``evict(through:)``), or at once for a policy the cache never holds
/// (a per-request evaluator that is not a class instance). ``shutdown()`` stops them all and
/// waits for their threads.
///
/// Bound. At most ``dedicatedLimit`` policies have a loop of their own; the policies beyond
/// share one overflow loop (still apart from the main loop), which stops when its last policy
/// goes. Cost per loop: a thread, a curl multi handle and its connection cache; an idle loop
/// waits in `curl_multi_poll`, waking once a second like the main loop.
///
/// Connections stay inside a loop (each multi handle has its own connection cache), which is
/// where a policy's requests go; ``Session/Configuration/maximumConnectionsPerHost`` applies
/// per loop, and TLS sessions are never shared between loops, even with
/// ``Session/Configuration/unsafeShareTLSSessionsAcrossPolicies``.
final class RevocationLoops: Sendable {
    /// The most policies with a loop of their own.
    static let dedicatedLimit = 8
    static let threadName = "ServerTrust.Session.revocation"

    private struct Entry {
        let loop: MultiLoop
        let dedicated: Bool
        /// Transfers acquired and not yet released.
        var transfers: Int
        /// Whether the session's policy cache may still hold the policy.
        var cached: Bool
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var dedicated = 0
        var overflow: MultiLoop?
        var overflowUsers = 0
        /// Every cached policy with an ID up to this one has been evicted (``evict(through:)``).
        var evictedThrough: UInt64 = 0
        /// Stopped loops whose thread may not have exited yet.
        var retiring: [MultiLoop] = []
        var stopped = false

        /// Removes `id`'s entry; returns the loop to stop when nothing else uses it.
        mutating func remove(_ id: UInt64) -> MultiLoop? {
            guard let entry = entries.removeValue(forKey: id) else { return nil }
            if entry.dedicated {
                dedicated -= 1
            } else {
                overflowUsers -= 1
                guard overflowUsers == 0 else { return nil }
                overflow = nil
            }
            retiring.removeAll { $0.hasExited }
            retiring.append(entry.loop)
            return entry.loop
        }
    }

    private let configuration: Session.Configuration
    private let handlePool: PolicyHandles.Pool
    private let state = Locked(State())

    init(configuration: Session.Configuration, handlePool: PolicyHandles.Pool) {
        self.configuration = configuration
        self.handlePool = handlePool
    }

    /// The loop for one transfer of `policy`, made on the policy's first transfer; the caller
    /// must ``release(_:)`` it when the transfer ends. Nil once ``shutdown()`` has run.
    ///
    /// - Parameter cacheable: whether the session's policy cache can hold `policy`; a policy it
    ///   cannot hold is used by one request only, and its loop stops with that request.
    /// - Throws: ``SessionError/Code/transferFailed`` when libcurl cannot make a multi handle.
    func acquire(_ policy: TrustPolicy, cacheable: Bool) throws(SessionError) -> MultiLoop? {
        try state.withLock { (state: inout State) throws(SessionError) -> MultiLoop? in
            guard !state.stopped else { return nil }
            if var entry = state.entries[policy.id] {
                entry.transfers += 1
                state.entries[policy.id] = entry
                return entry.loop
            }
            // Made under the lock (a thread and a multi handle, once per policy), so two first
            // transfers of one policy cannot make two loops.
            let loop: MultiLoop
            let dedicated = state.dedicated < Self.dedicatedLimit
            if dedicated {
                loop = try MultiLoop(configuration: configuration, handlePool: handlePool, threadName: Self.threadName)
                state.dedicated += 1
            } else {
                if let overflow = state.overflow {
                    loop = overflow
                } else {
                    loop = try MultiLoop(configuration: configuration, handlePool: handlePool, threadName: Self.threadName)
                    state.overflow = loop
                }
                state.overflowUsers += 1
            }
            // A policy evicted before its first transfer got here counts as uncached. IDs only
            // grow, so this may also catch a policy made before an eviction and filed after it:
            // its loop then stops when idle and is made again, never kept too long.
            let cached = cacheable && policy.id > state.evictedThrough
            state.entries[policy.id] = Entry(loop: loop, dedicated: dedicated, transfers: 1, cached: cached)
            return loop
        }
    }

    /// Books a loop for one transfer of `policy`, before it is made, when its evaluator may
    /// fetch revocation data in the handshake; otherwise the transfer runs on the session's main
    /// loop. Returns what the transfer runs when it ends, before it resumes its task
    /// (`Transfer`'s `onCompletion`): giving the booking back, so a loop outliving its policy
    /// stops only after its last transfer; nil when the main loop is the transfer's.
    func book(
        for policy: TrustPolicy, cacheable: Bool
    ) throws(SessionError) -> (@Sendable (Result<Transfer.Outcome, SessionError>) -> Void)? {
        // After shutdown no loop is booked: the transfer goes to the stopped main loop, which
        // refuses it with `.sessionShutDown`.
        guard policy.mayFetchRevocationData, try acquire(policy, cacheable: cacheable) != nil else { return nil }
        return { [self] _ in
            // Before the caller resumes: a loop that stops here is already stopping when the
            // request returns.
            release(policy)
        }
    }

    /// The loop running `policy`'s transfers, if it has one now.
    func loop(for policy: TrustPolicy) -> MultiLoop? {
        state.withLock { $0.entries[policy.id]?.loop }
    }

    /// One transfer of `policy` has ended (on its loop's thread): stops the loop when the
    /// policy has no other transfer and the cache no longer holds it.
    func release(_ policy: TrustPolicy) {
        let idle = state.withLock { state -> MultiLoop? in
            guard var entry = state.entries[policy.id] else { return nil }
            entry.transfers -= 1
            guard entry.transfers == 0, !entry.cached else {
                state.entries[policy.id] = entry
                return nil
            }
            return state.remove(policy.id)
        }
        idle?.stop()
    }

    /// The session's policy cache dropped every policy with an ID up to `id`: their loops stop
    /// when their last transfer ends, now if none is running.
    func evict(through id: UInt64) {
        let idle = state.withLock { state -> [MultiLoop] in
            state.evictedThrough = max(state.evictedThrough, id)
            var idle: [MultiLoop] = []
            for (policyID, var entry) in state.entries where policyID <= id && entry.cached {
                entry.cached = false
                state.entries[policyID] = entry
                if entry.transfers == 0, let loop = state.remove(policyID) { idle.append(loop) }
            }
            return idle
        }
        for loop in idle { loop.stop() }
    }

    /// Stops every loop, failing the transfers still running, and waits for every thread.
    /// Idempotent, and a second caller waits too; later ``acquire(_:cacheable:)`` calls return nil.
    func shutdown() {
        let loops = state.withLock { state -> [MultiLoop] in
            state.stopped = true
            // Kept as retiring, so a concurrent second call waits for the same threads.
            state.retiring += state.entries.values.filter(\.dedicated).map(\.loop)
            if let overflow = state.overflow { state.retiring.append(overflow) }
            state.entries.removeAll()
            state.overflow = nil
            state.overflowUsers = 0
            state.dedicated = 0
            state.retiring.removeAll { $0.hasExited }
            return state.retiring
        }
        // Outside the lock: a loop failing its transfers calls `release`, which takes it.
        for loop in loops { loop.shutdown() }
    }

    // MARK: Tests

    /// Every loop whose thread has not exited: running, or stopped and still freeing (tests).
    var liveLoops: [MultiLoop] {
        state.withLock { state in
            var loops = state.retiring + state.entries.values.filter(\.dedicated).map(\.loop)
            if let overflow = state.overflow { loops.append(overflow) }
            return loops.filter { !$0.hasExited }
        }
    }

    /// Waits for the threads of the loops stopped so far (tests; not from a loop thread).
    func waitForStoppedLoops() {
        let retiring = state.withLock { $0.retiring }
        for loop in retiring { loop.waitForExit() }
        state.withLock { $0.retiring.removeAll { $0.hasExited } }
    }
}
