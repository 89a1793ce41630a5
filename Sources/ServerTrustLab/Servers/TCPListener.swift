import Foundation
internal import ServerTrust

/// A TCP listener on `127.0.0.1`, ephemeral port, that serves every accepted connection on a
/// thread of its own and can stop everything it started.
///
/// Stopping never closes a descriptor another thread may be blocked on (the number could be
/// reused under it): it `shutdown`s every tracked socket, which wakes blocked reads and writes,
/// fires the ``StopSignal`` for sleepers and pollers, then joins the threads; each thread
/// closes its own sockets.
package final class TCPListener: Sendable {
    /// One accepted connection, handed to the serve closure on its own thread.
    package struct Connection: Sendable {
        /// The socket (blocking, `TCP_NODELAY`); the listener closes it when `serve` returns.
        package let fd: Int32
        /// 1 for the first connection accepted, 2 for the next…
        package let number: Int
        /// The listener, to ``TCPListener/track(_:)`` more sockets and read its ``stopSignal``.
        package let listener: TCPListener

        /// Fires when the listener stops: for sleeps and `poll` sets.
        package var stopSignal: StopSignal { listener.stopSignal }
    }

    package let port: Int
    package let stopSignal: StopSignal
    private let listenFD: Int32
    private let state = Locked(State())

    private struct State {
        var stopped = false
        var acceptThread: ServerThread?
        var connectionThreads: [Int: ServerThread] = [:]
        /// Connections whose thread has ended and can be joined without waiting.
        var finished: [Int] = []
        var trackedSockets: Set<Int32> = []
        var accepted = 0
        var open = 0
    }

    /// Number of connections accepted so far.
    package var acceptedConnections: Int { state.withLock { $0.accepted } }

    /// Number of connections currently open.
    package var openConnections: Int { state.withLock { $0.open } }

    /// Binds `127.0.0.1:0`, listens and starts the accept thread.
    ///
    /// - Parameter serve: runs on a new thread per connection; return to close the connection.
    package init(name: String, serve: @escaping @Sendable (Connection) -> Void) throws {
        _ = Self.ignoreSIGPIPE
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw LocalServerError("socket", errno: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        if bound == 0 {
            bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
        }
        guard bound == 0, listen(fd, 128) == 0 else {
            let code = errno
            close(fd)
            throw LocalServerError("bind/listen on 127.0.0.1:0", errno: code)
        }
        listenFD = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        stopSignal = try StopSignal()
        let thread = try ServerThread.spawn(name: name) { [self] in acceptLoop(name: name, serve: serve) }
        state.withLock { $0.acceptThread = thread }
    }

    deinit {
        close(listenFD)
    }

    /// Shuts every connection down, joins every thread. Idempotent; must not be called from a
    /// thread this listener started.
    package func stop() {
        let acceptThread: ServerThread? = state.withLock { state in
            guard !state.stopped else { return nil }
            state.stopped = true
            for socket in state.trackedSockets { shutdown(socket, Int32(SHUT_RDWR)) }
            defer { state.acceptThread = nil }
            return state.acceptThread
        }
        guard let acceptThread else { return }
        stopSignal.fire()
        acceptThread.join()
        // The accept thread has ended: no connection thread can be added any more.
        let threads = state.withLock { state in
            defer { state.connectionThreads = [:]; state.finished = [] }
            return Array(state.connectionThreads.values)
        }
        for thread in threads { thread.join() }
    }

    /// Registers an extra socket (a proxy's upstream) to be shut down by `stop()`.
    ///
    /// - Returns: false when the listener is stopping; the caller then closes the socket.
    package func track(_ socket: Int32) -> Bool {
        state.withLock { state in
            guard !state.stopped else { return false }
            state.trackedSockets.insert(socket)
            return true
        }
    }

    /// Unregisters and closes a socket registered with ``track(_:)``.
    package func untrackAndClose(_ socket: Int32) {
        state.withLock { _ = $0.trackedSockets.remove(socket) }
        close(socket)
    }

    private func acceptLoop(name: String, serve: @escaping @Sendable (Connection) -> Void) {
        var entries = [pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: stopSignal.fd, events: Int16(POLLIN), revents: 0)]
        while true {
            let ready = poll(&entries, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 || entries[1].revents != 0 { return }
            // Glibc's module hides accept4; the window before FD_CLOEXEC is a few instructions.
            let fd = accept(listenFD, nil, nil)
            if fd >= 0 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            if fd < 0 {
                if errno == EMFILE || errno == ENFILE { _ = stopSignal.sleep(for: .milliseconds(10)) }
                continue
            }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let (number, finished): (Int?, [ServerThread]) = state.withLock { state in
                guard !state.stopped else { return (nil, []) }
                state.accepted += 1
                state.open += 1
                state.trackedSockets.insert(fd)
                let finished = state.finished.compactMap { state.connectionThreads.removeValue(forKey: $0) }
                state.finished = []
                return (state.accepted, finished)
            }
            for thread in finished { thread.join() }
            guard let number else {
                close(fd)
                return
            }
            let connection = Connection(fd: fd, number: number, listener: self)
            do {
                let thread = try ServerThread.spawn(name: "\(name)#\(number)") { [self] in
                    serve(connection)
                    state.withLock { state in
                        state.trackedSockets.remove(fd)
                        state.open -= 1
                        state.finished.append(number)
                    }
                    close(fd)
                }
                state.withLock { $0.connectionThreads[number] = thread }
            } catch {
                state.withLock { state in
                    state.trackedSockets.remove(fd)
                    state.open -= 1
                }
                close(fd)
            }
        }
    }

    /// A peer that goes away while we write must cost an `EPIPE`, not the test process:
    /// OpenSSL writes with `write(2)`, which cannot take `MSG_NOSIGNAL`.
    private static let ignoreSIGPIPE: Void = {
        signal(SIGPIPE, SIG_IGN)
    }()
}
