#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value shared between threads, protected by a `pthread_mutex_t`.
///
/// Used instead of `Synchronization.Mutex` everywhere in the package so that ThreadSanitizer can
/// check it: `Mutex` locks with atomics and `futex` calls inside the uninstrumented standard
/// library, so TSan sees no happens-before edge between two `withLock` calls and reports every
/// access a `Mutex` protects as a race (docs/SECURITY-TESTING.md, "ThreadSanitizer"). With
/// suppressions for those false reports TSan would also hide real ones; a pthread mutex is
/// intercepted by TSan, so its reports need no suppression. An uncontended lock costs a few
/// tens of nanoseconds more than `Mutex`, far below anything measurable per request.
///
/// `Value` must not be zero-sized (`()` or an empty struct): ThreadSanitizer reports the exclusive
/// access to a zero-sized stored property as a race even with the mutex held (reproduced with
/// `Locked(())` and eight threads; `Locked(0)` under the same load is clean), so a lock that only
/// serialises work holds a counter instead.
package final class Locked<Value: ~Copyable>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Unchecked by the runtime's dynamic exclusivity enforcement: every access is inside
    /// `withLock`, under the mutex, which is what makes it exclusive (the check cost two
    /// runtime calls per `withLock`, eleven of them on a kept-alive request's path).
    @exclusivity(unchecked) private var value: Value

    package init(_ value: consuming Value) {
        precondition(MemoryLayout<Value>.size > 0, "Locked needs a value of non-zero size; see the type's documentation")
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
        self.value = value
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value. Not reentrant: `body` must not call
    /// `withLock` on the same instance.
    @inline(__always)
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
