import Foundation

/// A joinable POSIX thread.
///
/// The servers run on threads of their own, never on Swift concurrency's cooperative pool:
/// that pool has as few threads as the machine has cores, and the tests that talk to a server
/// `await` on it, so a server blocking there could starve its own clients.
struct ServerThread: Sendable {
    private let handle: pthread_t

    /// Starts `body` on a new thread named `name` (truncated to the 15 bytes Linux keeps).
    static func spawn(name: String, _ body: @escaping @Sendable () -> Void) throws -> ServerThread {
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(&handle, nil, { argument in
            let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
            Thread.current.name = start.name
            start.body()
            return nil
        }, start)
        guard result == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            throw LocalServerError("pthread_create failed", errno: result)
        }
        return ServerThread(handle: handle)
    }

    /// Waits for the thread to end. Call once, never from the thread itself.
    func join() {
        _ = pthread_join(handle, nil)
    }

    private final class Start {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}
