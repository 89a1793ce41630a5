import Synchronization

/// The ``ServerTrustManager`` in force, replaced as a whole when a trust update arrives.
///
/// A `Session` made with one reads the manager in force for every request: once
/// ``replace(with:)`` returns, new connections are evaluated under the new policies, and a
/// kept-alive connection evaluated under a replaced one is evaluated again under the new
/// policy before its next request (the connection guard), or refused. ServerTrustNIO's
/// verifier reads it at every handshake; a NIO or gRPC channel has no per-request guard, so an
/// established channel keeps what it was accepted under until it is closed — watch
/// ``generation`` or ``changes()`` to retire such channels (ServerTrustNIO's
/// `PolicyRetirementHandler` does it for you).
///
/// Replacing is atomic: a reader sees the old manager or the new one, never a mixture; the
/// ``generation`` counts replacements (the first manager is generation 1).
public final class LiveTrustManager: Sendable {
    private struct State {
        var manager: ServerTrustManager
        var generation: UInt64
        var observers: [UInt64: AsyncStream<UInt64>.Continuation] = [:]
        var nextObserver: UInt64 = 0
    }

    private let state: Locked<State>
    /// ``generation``, published after the manager it counts (stored under the lock, read
    /// without it): a reader whose tables are of this generation already needs no lock
    /// (``publishedGeneration``). An atomic, not a `Mutex`: ThreadSanitizer sees atomics
    /// (Locked.swift).
    private let generationCounter = Atomic<UInt64>(1)

    /// - Parameter manager: the manager in force until the first replacement (the
    ///   application's compiled-in policy, typically).
    public init(_ manager: ServerTrustManager) {
        state = Locked(State(manager: manager, generation: 1))
    }

    /// The generation in force, read without the lock: a reader that already holds what it
    /// made from this generation's manager (a `Session`'s tables) uses it as it is, and only
    /// one that is behind reads ``snapshot``. A replacement is published here after its
    /// manager is stored, so a reader that sees generation N finds, in ``snapshot``, the
    /// manager of generation N or a later one.
    package var publishedGeneration: UInt64 { generationCounter.load(ordering: .acquiring) }

    /// The manager in force.
    public var current: ServerTrustManager { state.withLock { $0.manager } }

    /// The manager in force and its generation, read together.
    public var snapshot: (manager: ServerTrustManager, generation: UInt64) {
        state.withLock { ($0.manager, $0.generation) }
    }

    /// How many managers have been in force (1 before any replacement).
    public var generation: UInt64 { state.withLock { $0.generation } }

    /// Puts `manager` in force for every session, verifier and channel that reads this object.
    /// - Returns: the new generation.
    @discardableResult
    public func replace(with manager: ServerTrustManager) -> UInt64 {
        let (generation, observers) = state.withLock { state -> (UInt64, [AsyncStream<UInt64>.Continuation]) in
            state.manager = manager
            state.generation += 1
            generationCounter.store(state.generation, ordering: .releasing)
            return (state.generation, Array(state.observers.values))
        }
        for observer in observers { observer.yield(generation) }
        return generation
    }

    /// The generation of every later replacement, as it happens (the newest only, when a
    /// reader falls behind). The stream ends when the task reading it is cancelled.
    public func changes() -> AsyncStream<UInt64> {
        let (stream, continuation) = AsyncStream<UInt64>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state -> UInt64 in
            state.nextObserver += 1
            state.observers[state.nextObserver] = continuation
            return state.nextObserver
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
        }
        return stream
    }
}
