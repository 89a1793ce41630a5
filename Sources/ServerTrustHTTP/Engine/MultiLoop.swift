import Foundation
internal import CCurl
internal import COpenSSL
internal import CServerTrustCurlShims
import Synchronization
internal import ServerTrust

/// One curl multi handle driven by one dedicated thread.
///
/// Every curl call of a session happens on this thread: transfers are handed over through a
/// command queue and `curl_multi_wakeup` (the only multi call that is safe from another
/// thread). The thread waits in `curl_multi_poll`, so an idle session costs no CPU.
///
/// The loop is also a `TaskExecutor` (``Session/taskExecutor``): a job enqueued on it is one
/// more command, run on the loop thread between curl calls. A task that prefers this executor
/// submits its transfer from the loop thread (no wake-up: the loop looks at its queue before it
/// polls) and is resumed there when the transfer completes (no hand-off to another thread), so
/// a request costs no cross-thread hop at all — the two hops per request that kept a
/// sequential async request far below a blocking `curl_easy_perform` loop
/// (docs/PERFORMANCE.md#kept-alive-and-concurrent-requests). Nothing about a transfer changes: it is the same `Transfer`, added
/// to the same multi handle, evaluated by the same callbacks and guard.
final class MultiLoop: Sendable {
    enum Command: Sendable {
        case add(Transfer)
        /// Boxed: a `SessionError` inline would make every command as large as it, and
        /// every queued `add` and `job` would be copied at that size.
        indirect case cancel(Transfer, SessionError)
        case resume(Transfer)
        /// A job of a task that prefers this loop as its executor.
        case job(UnownedJob)
        case shutdown
    }

    private struct State: ~Copyable {
        var commands: [Command] = []
        var stopped = false
    }

    private let multiPointer: UncheckedPointer
    private let state = Locked(State())
    /// Entered in `init`, left when the thread has freed everything and is about to exit:
    /// every ``waitForExit()`` caller waits on it, however many and however late.
    private let exit = DispatchGroup()
    private let activeCount = Atomic<Int>(0)
    /// `curl_multi_wakeup` calls made for queued commands (tests check the batching).
    private let wakeUps = Atomic<Int>(0)
    var wakeUpCount: Int { wakeUps.load(ordering: .relaxed) }
    /// Easy handles made so far; a request on a reused handle does not count (tests).
    private let handlesMade = Atomic<Int>(0)
    var easyHandlesMade: Int { handlesMade.load(ordering: .relaxed) }
    /// The session's pool of policy handles: retired ones are freed here, between turns.
    private let handlePool: PolicyHandles.Pool
    /// The loop thread's identity while it runs (0 before and after): a command queued from
    /// the loop thread itself needs no wake-up.
    private let loopThread = Atomic<UInt>(0)
    // Fast path: docs/PERFORMANCE.md#fast-paths, "Loop commands without the lock".
    /// Whether the queue has commands: written under the state's lock, where it always equals
    /// `!commands.isEmpty`, and read without it by the loop thread, which takes the lock only
    /// when there is something to take (a kept-alive request turns the loop eight times or so).
    /// A stale `false` is
    /// harmless: a command queued by another thread into an empty queue also wakes the loop,
    /// and one queued by the loop thread itself is seen in order.
    private let hasCommands = Atomic<Bool>(false)
    // Fast path: docs/PERFORMANCE.md#fast-paths, "Loop commands without the lock".
    /// Commands the loop thread queued for itself: a job of a task that prefers this executor
    /// submitting its transfer, a completion resuming such a task, a retry. Appended and taken
    /// on the loop thread only, so without the state's lock: on a kept-alive request from
    /// ``Session/taskExecutor`` every command is one of these, and the lock and unlock they
    /// each took are spared. Taken before the shared queue in each turn (``takeCommands(into:)``).
    /// Exempt from the runtime's dynamic exclusivity checks, as it is touched by one thread
    /// only, one append or one swap at a time.
    @exclusivity(unchecked) nonisolated(unsafe) private var localCommands: [Command] = []
    /// Set under the state's lock when ``stop()`` is called, read by the loop thread before it
    /// queues a command for itself, which is refused then as ``enqueue(_:)`` refuses any.
    private let stopRequested = Atomic<Bool>(false)

    /// Transfers currently added to the multi handle (each owns one easy handle).
    var activeTransfers: Int { activeCount.load(ordering: .relaxed) }
    let configuration: Session.Configuration

    /// Wraps the multi pointer for storage in a Sendable class: it is used on the loop thread
    /// only, except for `curl_multi_wakeup`, which libcurl documents as thread-safe.
    private struct UncheckedPointer: @unchecked Sendable { let raw: UnsafeMutableRawPointer }

    /// - Parameter threadName: the loop thread's name, as debuggers and `top -H` show it.
    init(
        configuration: Session.Configuration, handlePool: PolicyHandles.Pool, threadName: String = "ServerTrust.Session"
    ) throws(SessionError) {
        guard let multi = curl_multi_init() else { throw SessionError(.transferFailed, "curl_multi_init failed") }
        multiPointer = UncheckedPointer(raw: multi)
        self.configuration = configuration
        self.handlePool = handlePool
        _ = CServerTrustCurlShims_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maximumConnectionsPerHost)
        // A fixed cache size: libcurl's default (4 × the transfers in the multi handle right now)
        // drops while a session submits its next requests, and the connections it closes are
        // reopened a moment later with a new handshake.
        // Fast path: docs/PERFORMANCE.md#fast-paths, "Fixed connection cache".
        _ = CServerTrustCurlShims_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, Self.cacheSize(configuration))
        _ = CServerTrustCurlShims_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        exit.enter()
        let thread = Thread { [self] in run() }
        thread.name = threadName
        thread.start()
    }

    /// The connections the multi handle keeps open when idle.
    static func cacheSize(_ configuration: Session.Configuration) -> Int {
        max(configuration.maximumCachedConnections ?? max(32, configuration.maximumConnectionsPerHost), 1)
    }

    // Fast path: docs/PERFORMANCE.md#fast-paths, "Idle easy handles".
    /// The finished easy handles the session keeps (``Session/Configuration/maximumIdleHandles``).
    /// Not the connection cache's size: a burst leaves a handle per request, and 64 requests in
    /// flight over one HTTP/2 connection, with 32 kept, made 32 handles again in every burst.
    static func idleHandleCapacity(_ configuration: Session.Configuration) -> Int {
        configuration.maximumIdleHandles ?? max(128, cacheSize(configuration))
    }

    /// Hands a transfer to the loop; it completes through its own callbacks.
    func submit(_ transfer: Transfer) {
        if !enqueue(.add(transfer)) {
            transfer.abandon(SessionError(.sessionShutDown, "The session has been shut down.", url: transfer.url))
        }
    }

    func cancel(_ transfer: Transfer, _ error: SessionError) { _ = enqueue(.cancel(transfer, error)) }
    func resume(_ transfer: Transfer) { _ = enqueue(.resume(transfer)) }

    /// Whether the caller runs on this loop's thread (a job of ``Session/taskExecutor``, or a
    /// curl callback).
    var isCurrentThread: Bool { loopThread.load(ordering: .relaxed) == Self.currentThreadID() }

    private static func currentThreadID() -> UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }

    /// Stops the loop, failing transfers still running, and waits for the thread to exit.
    /// Not from the loop thread (it would wait for itself): use ``stop()`` there.
    func shutdown() {
        stop()
        waitForExit()
    }

    /// Asks the loop to stop, failing transfers still running, and returns at once; safe from
    /// any thread, the loop's own included. Later submissions are refused. Idempotent.
    func stop() {
        state.withLock { state in
            guard !state.stopped else { return }
            state.stopped = true
            stopRequested.store(true, ordering: .releasing)
            state.commands.append(.shutdown)
            hasCommands.store(true, ordering: .releasing)
            // Under the lock, like enqueue's: once the loop has taken `.shutdown` it frees the
            // multi handle, and the take needs this lock.
            curl_multi_wakeup(multiPointer.raw)
        }
    }

    /// Waits until the thread has released every curl handle and is exiting.
    func waitForExit() { exit.wait() }

    /// Whether the thread has released every curl handle and is exiting (tests).
    var hasExited: Bool { exit.wait(timeout: .now()) == .success }

    /// Queues `command`, waking the loop only when the queue was empty before it.
    ///
    /// Why one wake-up per batch is enough, and the loop never sleeps with a non-empty queue:
    /// - The loop takes the *whole* queue in one critical section at the top of each turn, and
    ///   only then polls. So at any instant the queue holds exactly the commands appended since
    ///   the loop's last take.
    /// - The first of those appends found the queue empty (under the same lock, so that test
    ///   is ordered against every take), and its caller called `curl_multi_wakeup` right
    ///   after appending. A later append that finds the queue non-empty rides on that wake-up: the
    ///   loop has not taken the queue since, so its next take, which follows the wake-up's poll,
    ///   includes the later command too.
    /// - A wake-up is never lost: if the loop is not inside `curl_multi_poll` when it comes,
    ///   the byte waits in curl's wake-up socketpair and the next poll returns at once
    ///   (documented for `curl_multi_wakeup`). The byte is written after the command, so any
    ///   poll it ends is followed by a take that sees the command.
    /// - Memory ordering comes from the mutex alone: the append and the "was empty" test are one
    ///   critical section, the take another; the socketpair only tells the loop when to look.
    ///
    /// A command queued by the loop thread itself (a job that submits a transfer, a completion
    /// that resumes a task preferring this executor, a retry) goes to the loop's own queue
    /// (``localCommands``), without the lock and without a wake-up: the loop is awake, and
    /// before it polls it looks at both queues and skips the poll when anything is there.
    /// Every such append happens before that look in the same turn, so the invariant above
    /// holds: a non-empty queue always has either a wake-up byte pending or a loop that has not
    /// yet looked.
    ///
    /// The wake-up is written inside the critical section: the loop frees the multi handle
    /// right after taking `.shutdown`, which it can only do under this lock, so a wake-up made
    /// while holding the lock can never reach a freed handle (one made after unlocking could,
    /// if a shutdown slipped in between). `curl_multi_wakeup` is a non-blocking write to curl's
    /// socketpair and takes no lock of ours.
    func enqueue(_ command: Command) -> Bool {
        let fromLoopThread = isCurrentThread
        if fromLoopThread {
            // The loop thread's own queue: no lock, no wake-up (the loop is awake, and it looks
            // at this queue before it polls). A command queued once stop() has been called is
            // refused, as the shared queue refuses it; one queued just before is taken before
            // or with the `.shutdown`, as it would be from the shared queue, and at the latest
            // refused when the loop exits (``refuseLocalCommands()``).
            guard !stopRequested.load(ordering: .acquiring) else { return false }
            localCommands.append(command)
            return true
        }
        return state.withLock { state in
            guard !state.stopped else { return false }
            let wasEmpty = state.commands.isEmpty
            state.commands.append(command)
            hasCommands.store(true, ordering: .releasing)
            if wasEmpty && !fromLoopThread {
                curl_multi_wakeup(multiPointer.raw)
                wakeUps.add(1, ordering: .relaxed)
            }
            return true
        }
    }

    // MARK: Loop thread

    private func run() {
        let multi = multiPointer.raw
        var active = ActiveTransfers()
        var sharedAcrossPolicies: ShareHandle?
        var running = true
        // The queue taken this round; it and the state's queue swap buffers, so neither is
        // reallocated per request once both have grown to the batch size.
        var taken: [Command] = []
        loopThread.store(Self.currentThreadID(), ordering: .relaxed)
        while running {
            // Handles of policies deinitialised since the last turn, perhaps inside curl.
            handlePool.drain()
            // The whole queue at once: enqueue() relies on it to wake the loop once per batch.
            // Taken again (a few rounds at most) while the commands run queue more — a job that
            // submits its next request — so the request is added before this turn's perform.
            var rounds = 0
            while running, rounds < 4, takeCommands(into: &taken) {
                rounds += 1
                for command in taken {
                    switch command {
                    case .add(let transfer) where transfer.isCancellationRequested:
                        transfer.abandon(SessionError(.cancelled, "The task was cancelled.", url: transfer.url))
                    case .add(let transfer):
                        let acrossPolicies = configuration.unsafeShareTLSSessionsAcrossPolicies
                        // Fast path: docs/PERFORMANCE.md#fast-paths, "Easy handles reused".
                        var (share, idle) = transfer.policy.handles.checkOut(makingShare: !acrossPolicies)
                        if acrossPolicies {
                            if sharedAcrossPolicies == nil { sharedAcrossPolicies = ShareHandle() }
                            share = sharedAcrossPolicies
                        }
                        do throws(SessionError) {
                            let easy: EasyHandle
                            if let idle {
                                easy = idle
                            } else {
                                easy = try EasyHandleConfigurator.makeHandle(for: transfer.policy, share: share, configuration: configuration)
                                handlesMade.add(1, ordering: .relaxed)
                            }
                            transfer.easy = easy
                            try EasyHandleConfigurator.prepare(easy, for: transfer)
                            guard curl_multi_add_handle(multi, easy.pointer) == CURLM_OK else {
                                throw SessionError(.transferFailed, "curl_multi_add_handle failed", url: transfer.url)
                            }
                            active.insert(transfer)
                            activeCount.store(active.count, ordering: .relaxed)
                        } catch {
                            transfer.easy = nil
                            transfer.abandon(error)
                        }
                    case .cancel(let transfer, let error):
                        if let easy = transfer.easy, active.remove(transfer) {
                            activeCount.store(active.count, ordering: .relaxed)
                            curl_multi_remove_handle(multi, easy.pointer)
                            transfer.abandon(error)
                            transfer.easy = nil
                        }
                    case .resume(let transfer):
                        if let easy = transfer.easy, active.contains(transfer) {
                            curl_easy_pause(easy.pointer, CURLPAUSE_CONT)
                        }
                    case .job(let job):
                        job.runSynchronously(on: asUnownedTaskExecutor())
                    case .shutdown:
                        running = false
                    }
                }
            }
            taken.removeAll(keepingCapacity: true)  // what ran holds no transfer past its turn
            guard running else { break }

            var stillRunning: Int32 = 0
            curl_multi_perform(multi, &stillRunning)
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
                    let transfer = active.remove(runningOn: handle)
                else { continue }
                let code = message.pointee.data.result
                // Published before the caller resumes, so it never sees its own transfer counted.
                activeCount.store(active.count, ordering: .relaxed)
                if transfer.prepareRetry() {
                    // The guard refused the connection (its evaluation expired, or a resumed
                    // session lacked a must-staple leaf's staple): the request goes out again,
                    // once, on a new connection. The refused handle is not kept.
                    curl_multi_remove_handle(multi, handle)
                    transfer.easy = nil
                    submit(transfer)
                    continue
                }
                transfer.finish(code)
                curl_multi_remove_handle(multi, handle)
                // Only a handle whose transfer ended cleanly is kept: nothing half-done in it.
                if code == CURLE_OK, let easy = transfer.easy { transfer.policy.handles.checkIn(easy) }
                transfer.easy = nil
            }
            // Commands the loop queued itself this turn wrote no wake-up (enqueue): look first.
            if localCommands.isEmpty, !hasCommands.load(ordering: .acquiring) {
                curl_multi_poll(multi, nil, 0, 1000, nil)
            }
        }

        for transfer in active.removeAll() {
            if let easy = transfer.easy { curl_multi_remove_handle(multi, easy.pointer) }
            transfer.abandon(SessionError(.sessionShutDown, "The session was shut down during the transfer.", url: transfer.url))
            transfer.easy = nil
        }
        refuseLocalCommands()
        activeCount.store(0, ordering: .relaxed)
        // Every transfer's easy handle is gone; the multi handle closes the cached connections
        // (and so frees their SSL_CTX and SSL objects and our ex_data, perhaps the last
        // reference to a policy, whose handles are retired to the pool and freed just below or
        // when the session closes the pool). Idle easy handles stay with their policies: they
        // are not in this multi handle, and each keeps its share alive.
        curl_multi_cleanup(multi)
        handlePool.drain()
        sharedAcrossPolicies = nil
        // OpenSSL frees this thread's DRBGs and error queue when the thread exits, which may be
        // after a process that called `shutdown()` has exited: do it now, before `shutdown()`
        // returns (LeakSanitizer reported them; docs/SECURITY-TESTING.md, finding 2).
        OPENSSL_thread_stop()
        loopThread.store(0, ordering: .relaxed)
        exit.leave()
    }

    /// Takes both command queues into `taken` (whose earlier commands have run): the loop
    /// thread's own first, then the whole shared queue, each left empty (a queue swapped with
    /// `taken` keeps its old buffer); false when there was nothing queued.
    private func takeCommands(into taken: inout [Command]) -> Bool {
        taken.removeAll(keepingCapacity: true)
        if !localCommands.isEmpty { swap(&localCommands, &taken) }
        guard hasCommands.load(ordering: .acquiring) else { return !taken.isEmpty }
        state.withLock { state in
            if taken.isEmpty {
                swap(&state.commands, &taken)
            } else {
                taken.append(contentsOf: state.commands)
                state.commands.removeAll(keepingCapacity: true)
            }
            hasCommands.store(false, ordering: .relaxed)
        }
        return !taken.isEmpty
    }

    /// The loop has stopped: what the loop thread queued for itself and never ran is refused
    /// as ``enqueue(_:)`` refuses a command after ``stop()``. A transfer fails with
    /// `.sessionShutDown`; a job runs on the global concurrent executor. Nothing more can be
    /// queued here meanwhile: `stopRequested` is set.
    ///
    /// By the order of events this finds nothing: a command queued before `stop()` is taken in
    /// the same round as the `.shutdown` or an earlier one (the loop takes its own queue first),
    /// and one queued after is refused. It is here so that no task can be left waiting forever
    /// should a later change break that order.
    private func refuseLocalCommands() {
        let left = localCommands
        localCommands = []
        for command in left {
            switch command {
            case .add(let transfer):
                transfer.abandon(SessionError(.sessionShutDown, "The session has been shut down.", url: transfer.url))
            case .job(let job):
                globalConcurrentExecutor.enqueue(ExecutorJob(job))
            case .cancel, .resume, .shutdown:
                break
            }
        }
    }
}
