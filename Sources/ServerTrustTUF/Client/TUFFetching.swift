#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Fetches repository files for the ``Updater``: the client's only network interface.
///
/// ServerTrustTUF has no HTTP code of its own, so a program that links it chooses the
/// transport (ServerTrustHTTP's pinned `Session`, or a test's in-memory repository).
/// An implementation must stop reading after `maximumLength` bytes (throw
/// ``TUFError/Code/downloadTooLarge``: the endless-data defence) and give up at `deadline`
/// (throw ``TUFError/Code/slowRetrieval``), and must throw ``TUFError/Code/notFound`` for an
/// HTTP 403 or 404 — the end of the root chain.
public protocol TUFFetching: Sendable {
    func fetch(_ url: String, maximumLength: Int, deadline: ContinuousClock.Instant) async throws(TUFError) -> [UInt8]
}

/// The time the ``Updater`` checks expiry against.
public protocol TUFClock: Sendable {
    /// Seconds since the Unix epoch, UTC.
    func now() -> Int64
}

/// The system's wall clock.
public struct SystemTUFClock: TUFClock {
    public init() {}
    public func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec)
    }
}
