import Foundation
import Synchronization

/// A one-shot event that wakes every thread of a server when it stops: a pipe whose read end
/// becomes readable once fired, so it can sit in a `poll` set beside sockets, and sleeps
/// (`/slow`, `/drip`) end early instead of delaying `stop()`.
package final class StopSignal: Sendable {
    /// The read end, to add to a `poll` set with `POLLIN`.
    package let fd: Int32
    private let writeFD: Int32
    private let fired = Atomic<Bool>(false)

    init() throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw LocalServerError("pipe", errno: errno) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        fd = ends[0]
        writeFD = ends[1]
    }

    deinit {
        close(fd)
        close(writeFD)
    }

    package var isFired: Bool { fired.load(ordering: .acquiring) }

    package func fire() {
        guard !fired.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        _ = write(writeFD, &byte, 1)
    }

    /// Sleeps for `duration`; returns false if the signal fired first.
    package func sleep(for duration: Duration) -> Bool {
        let deadline = ContinuousClock.now + duration
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            if remaining <= .zero { return !isFired }
            let milliseconds = Int32(clamping: remaining.components.seconds * 1000
                + (remaining.components.attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&entry, 1, milliseconds) > 0 { return false }
        }
    }

    /// Waits until `socket` is ready for `events`; false if the signal fired first or
    /// `timeoutMilliseconds` (-1: none) passed.
    package func wait(for events: Int16, on socket: Int32, timeoutMilliseconds: Int32 = -1) -> Bool {
        var entries = [pollfd(fd: socket, events: events, revents: 0), pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
        while true {
            let ready = poll(&entries, 2, timeoutMilliseconds)
            if ready < 0 && errno == EINTR { continue }
            return ready > 0 && entries[1].revents == 0
        }
    }
}
