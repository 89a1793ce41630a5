import Synchronization

/// A result delivered once from the loop thread to one awaiting task, in either order.
///
/// Two atomic operations per request: the continuation and the result are plain fields,
/// published by the state's compare-and-exchange (release) and read by whoever sees its new
/// value (acquire) — not a lock object and a separately allocated mutex, which were two more
/// allocations on every request's path (docs/PERFORMANCE.md#fast-paths, "One-shot hand-off").
///
/// The continuation stays a `CheckedContinuation`. An `UnsafeContinuation` would save its
/// canary's allocation, but ThreadSanitizer then sees no happens-before
/// between the loop thread resuming it and the task reading its frame on another thread (the
/// hand-off is inside the uninstrumented concurrency runtime) and reports a race on every
/// request; the checked continuation's canary is an atomic exchange TSan sees.
///
/// Not generic: a generic class's deinit destroys its `Optional<CheckedContinuation<Value, _>>`
/// and `Optional<Result<Value, _>>` through type metadata looked up at run time, four
/// `swift_getGenericMetadata` hash look-ups per request. A streamed
/// request's head comes through it as an ``Transfer/Outcome`` with no body.
///
/// ``attach(_:)`` is called once, by the awaiting task; ``resume(with:)`` by the
/// transfer, whose `finish` and `abandon` each run at most once and on one thread at a time
/// (the loop thread, or the submitting task when the loop had already stopped). A second
/// `resume` is ignored.
///
/// ``Transfer`` is its subclass: the transfer is its own continuation box, so a request
/// allocates one object for both, and the transfer resumes its task itself rather than through
/// a completion closure. Every member is `final`: nothing here is overridden or dispatched.
// Fast path: docs/PERFORMANCE.md#fast-paths, "One-shot result hand-off".
class OneShot: @unchecked Sendable {
    typealias Value = Transfer.Outcome

    private enum State: Int {
        /// Neither side has come.
        case empty
        /// The continuation waits in ``continuation``.
        case attached
        /// The result waits in ``result``.
        case resolved
        /// The continuation was resumed.
        case done
    }

    private let state = Atomic<Int>(State.empty.rawValue)
    // Exempt from the runtime's dynamic exclusivity checks: the state's exchanges already
    // give each field one owner at a time (the attaching task, then whoever sees `attached` or
    // `resolved`), which is what a check would enforce, at a runtime call per access.
    @exclusivity(unchecked) private var continuation: CheckedContinuation<Value, any Error>?
    @exclusivity(unchecked) private var result: Result<Value, SessionError>?

    final func attach(_ continuation: CheckedContinuation<Value, any Error>) {
        self.continuation = continuation
        let (attached, _) = state.compareExchange(
            expected: State.empty.rawValue, desired: State.attached.rawValue, ordering: .acquiringAndReleasing)
        guard !attached else { return }
        // The result came first (`resolved`; the exchange's acquire made it visible).
        self.continuation = nil
        state.store(State.done.rawValue, ordering: .relaxed)
        Self.deliver(result.take() ?? .failure(SessionError(.transferFailed, "The transfer ended without a result.")), to: continuation)
    }

    final func resume(with result: consuming Result<Value, SessionError>) {
        switch State(rawValue: state.load(ordering: .acquiring)) {
        case .empty?:
            self.result = copy result
            let (resolved, _) = state.compareExchange(
                expected: State.empty.rawValue, desired: State.resolved.rawValue, ordering: .acquiringAndReleasing)
            if resolved { return }  // attach() delivers it
            self.result = nil  // the continuation arrived meanwhile: deliver it here
        case .attached?:
            break
        case .resolved?, .done?, nil:
            return
        }
        // Released for ``settle()``: the awaiting task acquires it once resumed.
        state.store(State.done.rawValue, ordering: .releasing)
        guard let continuation = continuation.take() else { return }
        Self.deliver(result, to: continuation)
    }

    /// Called by the awaiting task once it has been resumed, before it reads what it received:
    /// acquires the state ``resume(with:)`` released just before resuming it.
    ///
    /// The concurrency runtime already orders the resumption after everything the loop thread
    /// wrote, but inside its uninstrumented code: ThreadSanitizer sees that edge only when the
    /// continuation's canary happens to be freed on the resumed side, and otherwise reports
    /// the task's first read of an object the loop made just before resuming it (a response's
    /// ``ReceivedFields``) as a race. This acquire makes the edge visible to it on every
    /// request, for one atomic load.
    final func settle() {
        _ = state.load(ordering: .acquiring)
    }

    /// Resumes `continuation` with `result`, moved in (no copy of the outcome, no mapped `Result`).
    private static func deliver(_ result: consuming Result<Value, SessionError>, to continuation: CheckedContinuation<Value, any Error>) {
        switch consume result {
        case .success(let value): continuation.resume(returning: value)
        case .failure(let error): continuation.resume(throwing: error)
        }
    }
}
