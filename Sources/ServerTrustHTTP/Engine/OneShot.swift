internal import ServerTrust

/// A result delivered once from the loop thread to one awaiting task, in either order.
final class OneShot<Value: Sendable>: Sendable {
    private struct State: ~Copyable {
        var continuation: CheckedContinuation<Value, any Error>?
        var result: Result<Value, SessionError>?
    }
    private let state = Locked(State())

    func attach(_ continuation: CheckedContinuation<Value, any Error>) {
        let ready = state.withLock { state -> Result<Value, SessionError>? in
            if let result = state.result { return result }
            state.continuation = continuation
            return nil
        }
        if let ready { continuation.resume(with: ready) }
    }

    func resume(with result: Result<Value, SessionError>) {
        let waiting = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.continuation = nil }
            return state.continuation
        }
        waiting?.resume(with: result)
    }
}
