import Foundation

/// A plain HTTP/1.1 server in the process, on `127.0.0.1` and an ephemeral port: an OCSP
/// responder or CRL distribution point for revocation tests, or any plain-HTTP peer.
///
/// The same engine and routes as ``LocalTLSServer``, without TLS: the handler first, then
/// ``LocalHTTPRoutes``. Runs on its own threads from `init` until ``stop()`` (or `deinit`).
///
/// ```swift
/// let responder = try LocalHTTPServer { request in
///     request.path == "/ocsp" ? LocalHTTPResponse(headers: [("Content-Type", "application/ocsp-response")],
///                                                 body: .bytes(ocspResponseDER)) : nil
/// }
/// // AIA OCSP URL: responder.url("/ocsp")
/// ```
public final class LocalHTTPServer: Sendable {
    /// The port on `127.0.0.1`.
    public let port: Int

    private let listener: TCPListener
    private let http: HTTPService

    /// Starts a server; it listens before this returns.
    ///
    /// - Parameter handler: consulted first for every request. Default: none (routes only).
    public init(handler: LocalHTTPHandler? = nil) throws {
        let http = HTTPService(handler: handler)
        listener = try TCPListener(name: "LocalHTTPServer") { [http] connection in
            http.serve(SocketStream(fd: connection.fd), connectionNumber: connection.number, stopSignal: connection.stopSignal)
        }
        self.http = http
        port = listener.port
    }

    deinit {
        stop()
    }

    /// Closes the listener and every connection, and joins every thread. Idempotent.
    ///
    /// Must not be called from a handler (it would wait for its own thread).
    public func stop() {
        listener.stop()
    }

    /// `http://127.0.0.1:{port}{path}`.
    public func url(_ path: String = "/") -> String {
        "http://127.0.0.1:\(port)\(path)"
    }

    /// Replaces the custom handler for requests read from now on.
    public func setHandler(_ handler: LocalHTTPHandler?) {
        http.setHandler(handler)
    }

    /// TCP connections accepted so far.
    public var acceptedConnections: Int { listener.acceptedConnections }

    /// TCP connections open now.
    public var openConnections: Int { listener.openConnections }

    /// Requests answered so far; a request is counted before its response is written.
    public var requestsServed: Int { http.requestsServed }

    /// The most recent requests, oldest first: the last 64, fewer when their bodies add up to
    /// over 16 MiB (the last request is always there).
    public var recentRequests: [LocalHTTPRequest] { http.recentRequests }
}
