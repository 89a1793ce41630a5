
/// The nonces a verifier accepted recently, so a second response for the same request is
/// reported as a replay.
///
/// Bounded in time and size: an entry is dropped once its request time is outside the
/// freshness window (the time check then rejects a replay on its own), and the oldest entries
/// go first when ``capacity`` is reached. Behind a lock (`Locked`), hence `Sendable`.
final class NonceCache: Sendable {
    private struct State {
        var expiries: [[UInt8]: Int64] = [:]
        var order: [(nonce: [UInt8], expiry: Int64)] = []
        var head = 0
    }

    let capacity: Int
    private let state = Locked(State())

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Whether `nonce` was accepted and its entry has not expired at `now`.
    func contains(_ nonce: [UInt8], now: Int64) -> Bool {
        state.withLock { ($0.expiries[nonce] ?? .min) >= now }
    }

    /// Records `nonce` until `expiry`; false if it was already there (a replay).
    func insert(_ nonce: [UInt8], expiry: Int64, now: Int64) -> Bool {
        state.withLock { state in
            while state.head < state.order.count,
                state.order[state.head].expiry < now || state.order.count - state.head >= capacity
            {
                let old = state.order[state.head]
                if state.expiries[old.nonce] == old.expiry { state.expiries[old.nonce] = nil }
                state.head += 1
            }
            if state.head > 1024, state.head * 2 > state.order.count {
                state.order.removeFirst(state.head)
                state.head = 0
            }
            if let existing = state.expiries[nonce], existing >= now { return false }
            state.expiries[nonce] = expiry
            state.order.append((nonce, expiry))
            return true
        }
    }
}
