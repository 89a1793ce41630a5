import Foundation
internal import ServerTrust
internal import COpenSSL
public import ServerTrustLab

/// An HTTP `CONNECT` proxy in the test process, on `127.0.0.1` and an ephemeral port.
///
/// By default it tunnels: it connects to the requested `host:port`, answers
/// `200 Connection Established`, and copies bytes both ways untouched. With
/// ``Configuration/interceptingIdentity`` set it plays the machine in the middle instead: it
/// terminates the client's TLS with that (attacker's) chain and key, opens its own TLS
/// connection to the origin without verifying it, and relays the plaintext — the corporate or
/// on-device proxy that pinning must defeat. With ``Configuration/responseBodyRewrite`` set as
/// well it reads the HTTP/1.1 exchanges inside the intercepted tunnel and rewrites each response
/// body on its way back to the client (fixing `Content-Length`, every other header untouched) —
/// the proxy that response signatures must defeat.
///
/// Anything but `CONNECT` gets a 405. Runs on its own threads from `init` until ``stop()``.
///
/// ```swift
/// let proxy = try LocalConnectProxy()
/// // curl --proxy \(proxy.url) https://localhost:\(server.port)/status/200
/// ```
public final class LocalConnectProxy: Sendable {
    /// How the proxy behaves.
    public struct Configuration: Sendable {
        /// When set, TLS inside each tunnel is terminated with this identity and re-originated
        /// to the origin. Default: none (a blind tunnel).
        public var interceptingIdentity: LocalTLSServer.Identity?
        /// Maps the requested authority (`host:port`, as in the `CONNECT` line) to the one to
        /// connect to, e.g. `api.example.test:443` → `127.0.0.1:\(server.port)`; curl leaves
        /// name resolution to the proxy, so `CURLOPT_RESOLVE` does not reach it. Default: none
        /// (connect where asked, resolving names with `getaddrinfo`).
        public var route: (@Sendable (_ authority: String) -> String)?
        /// When set (with ``interceptingIdentity``), the intercepted plaintext is relayed as
        /// HTTP/1.1 exchanges, one at a time, and every response body goes through this rewrite.
        /// A rewrite that matches nothing makes an HTTP-level pass-through: the same parsing
        /// and re-framing, the body untouched. Default: none (bytes are relayed as they are).
        public var responseBodyRewrite: BodyRewrite?

        public init(
            interceptingIdentity: LocalTLSServer.Identity? = nil,
            route: (@Sendable (_ authority: String) -> String)? = nil,
            responseBodyRewrite: BodyRewrite? = nil
        ) {
            self.interceptingIdentity = interceptingIdentity
            self.route = route
            self.responseBodyRewrite = responseBodyRewrite
        }
    }

    /// The port on `127.0.0.1`.
    public let port: Int

    private let listener: TCPListener
    private let core: Core

    /// Starts a proxy; it listens before this returns.
    ///
    /// - Throws: ``LocalServerError`` when the intercepting identity does not load, a body
    ///   rewrite is set without one, or the socket cannot be bound.
    public init(_ configuration: Configuration = Configuration()) throws {
        if configuration.responseBodyRewrite != nil && configuration.interceptingIdentity == nil {
            throw LocalServerError("A response body rewrite needs an intercepting identity: a blind tunnel sees only ciphertext.")
        }
        let core = try Core(configuration: configuration)
        listener = try TCPListener(name: "LocalConnectProxy") { [core] connection in
            core.serve(connection)
        }
        self.core = core
        port = listener.port
    }

    deinit {
        stop()
    }

    /// Closes the listener and every tunnel, and joins every thread. Idempotent.
    public func stop() {
        listener.stop()
    }

    /// `http://127.0.0.1:{port}`, for `CURLOPT_PROXY` or curl's `--proxy`.
    public var url: String { "http://127.0.0.1:\(port)" }

    /// TCP connections accepted so far.
    public var acceptedConnections: Int { listener.acceptedConnections }

    /// Client connections open now.
    public var openConnections: Int { listener.openConnections }

    /// Tunnels established (the origin connection succeeded and `200` was sent).
    public var tunnelsOpened: Int { core.state.withLock { $0.tunnelsOpened } }

    /// Every authority asked for with `CONNECT`, in order, whether or not it connected.
    public var requestedAuthorities: [String] { core.state.withLock { $0.requestedAuthorities } }
    /// The `User-Agent` of each CONNECT request, in order (nil for none).
    public var connectUserAgents: [String?] { core.state.withLock { $0.connectUserAgents } }

    /// TLS handshakes the proxy completed with clients while intercepting: each one is a client
    /// that accepted the attacker's certificate.
    public var interceptedHandshakes: Int { core.state.withLock { $0.interceptedHandshakes } }

    /// Client handshakes that failed while intercepting: typically a client that refused the
    /// attacker's certificate.
    public var failedInterceptions: Int { core.state.withLock { $0.failedInterceptions } }

    /// Responses relayed as HTTP exchanges (with a ``Configuration/responseBodyRewrite``).
    public var relayedResponses: Int { core.state.withLock { $0.relayedResponses } }

    /// Relayed responses whose body the rewrite changed.
    public var rewrittenResponses: Int { core.state.withLock { $0.rewrittenResponses } }
}

extension LocalConnectProxy {
    /// The state the connection threads share: immutable, or behind a lock (`Locked`).
    fileprivate final class Core: Sendable {
        let route: (@Sendable (String) -> String)?
        let interceptor: (server: TLSServerContext, client: TLSClientContext)?
        let rewrite: BodyRewrite?
        let state = Locked(State())

        struct State {
            var tunnelsOpened = 0
            var requestedAuthorities: [String] = []
            var connectUserAgents: [String?] = []
            var interceptedHandshakes = 0
            var failedInterceptions = 0
            var relayedResponses = 0
            var rewrittenResponses = 0
        }

        init(configuration: Configuration) throws {
            route = configuration.route
            rewrite = configuration.responseBodyRewrite
            interceptor = try configuration.interceptingIdentity.map {
                (try TLSServerContext(identity: $0), try TLSClientContext())
            }
        }

        func serve(_ connection: TCPListener.Connection) {
            let http = HTTPConnection(
                stream: SocketStream(fd: connection.fd), stopSignal: connection.stopSignal, number: connection.number)
            guard let request = try? http.readRequest(acknowledgingExpectContinue: false) else { return }
            guard request.method == "CONNECT" else {
                var response = LocalHTTPResponse.text("Only CONNECT is supported.\n", status: 405)
                response.headers.append(("Allow", "CONNECT"))
                _ = http.send(response, for: request, closing: true)
                return
            }
            state.withLock {
                $0.requestedAuthorities.append(request.target)
                $0.connectUserAgents.append(request.header("User-Agent"))
            }
            let destination = route?(request.target) ?? request.target
            guard let (host, port) = Self.split(authority: destination),
                  let upstream = Self.connect(host: host, port: port, connection: connection) else {
                _ = http.send(.text("Cannot connect to \(destination).\n", status: 502), for: request, closing: true)
                return
            }
            defer { connection.listener.untrackAndClose(upstream) }
            state.withLock { $0.tunnelsOpened += 1 }
            guard http.write(Array("HTTP/1.1 200 Connection Established\r\n\r\n".utf8)) else { return }
            let early = http.takeBufferedBytes()
            guard let interceptor else {
                TunnelRelay.run(
                    TunnelRelay.Endpoint(fd: connection.fd), TunnelRelay.Endpoint(fd: upstream),
                    initial: early, stopSignal: connection.stopSignal)
                return
            }
            // A client that talks before the 200 is not one we intercept.
            guard early.isEmpty else { return }
            intercept(connection, upstream: upstream, host: host, interceptor: interceptor)
        }

        private func intercept(
            _ connection: TCPListener.Connection, upstream: Int32, host: String,
            interceptor: (server: TLSServerContext, client: TLSClientContext)
        ) {
            guard let clientSSL = interceptor.server.makeSSL(fd: connection.fd) else { return }
            defer { SSL_free(clientSSL) }
            guard SSL_accept(clientSSL) == 1 else {
                ERR_clear_error()
                state.withLock { $0.failedInterceptions += 1 }
                return
            }
            state.withLock { $0.interceptedHandshakes += 1 }
            guard let originSSL = interceptor.client.makeSSL(fd: upstream, serverName: host) else { return }
            defer { SSL_free(originSSL) }
            guard SSL_connect(originSSL) == 1 else {
                ERR_clear_error()
                return
            }
            if let rewrite {
                relayExchanges(
                    client: TLSStream(ssl: clientSSL), origin: TLSStream(ssl: originSSL), rewrite: rewrite, connection: connection)
                return
            }
            TunnelRelay.run(
                TunnelRelay.Endpoint(fd: connection.fd, ssl: clientSSL),
                TunnelRelay.Endpoint(fd: upstream, ssl: originSSL),
                stopSignal: connection.stopSignal)
        }

        /// Relays request/response exchanges until either side closes: each request is forwarded
        /// as received, each response read whole, its body rewritten and re-framed with a new
        /// `Content-Length`, its other fields (a signature among them) passed on unchanged.
        private func relayExchanges(
            client clientStream: TLSStream, origin originStream: TLSStream, rewrite: BodyRewrite, connection: TCPListener.Connection
        ) {
            let stopSignal = connection.stopSignal
            let client = HTTPConnection(stream: clientStream, stopSignal: stopSignal, number: connection.number)
            let origin = HTTPConnection(stream: originStream, stopSignal: stopSignal, number: connection.number)
            while !stopSignal.isFired {
                guard let request = try? client.readRequest(acknowledgingExpectContinue: true),
                      origin.forward(request),
                      var response = try? origin.readResponse(answering: request.method) else { return }
                let hasBody = request.method != "HEAD" && response.status != 204 && response.status != 304
                let original = response.body.slice(0..<response.body.count)
                let rewritten = hasBody ? rewrite.apply(to: original) : original
                if hasBody {
                    let framing = ["Content-Length", "Transfer-Encoding"]
                    response.headers.removeAll { field in framing.contains { $0.caseInsensitiveCompare(field.name) == .orderedSame } }
                    response.body = .bytes(rewritten)
                }
                state.withLock {
                    $0.relayedResponses += 1
                    if rewritten != original { $0.rewrittenResponses += 1 }
                }
                let closing = response.header("Connection")?.lowercased() == "close"
                    || request.header("Connection")?.lowercased() == "close"
                guard client.send(response, for: request, closing: closing), !closing else { return }
            }
        }

        /// `host:port` or `[v6]:port`.
        static func split(authority: String) -> (host: String, port: String)? {
            guard let colon = authority.lastIndex(of: ":") else { return nil }
            var host = String(authority[..<colon])
            let port = String(authority[authority.index(after: colon)...])
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty, let number = Int(port), (1...65535).contains(number) else { return nil }
            return (host, port)
        }

        /// A connected, blocking socket to the first address of `host` that answers within 5 s,
        /// tracked by the listener so `stop()` shuts it down.
        static func connect(host: String, port: String, connection: TCPListener.Connection) -> Int32? {
            var hints = addrinfo()
            hints.ai_family = AF_UNSPEC
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var list: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, port, &hints, &list) == 0 else { return nil }
            defer { freeaddrinfo(list) }
            var candidate = list
            while let info = candidate {
                candidate = info.pointee.ai_next
                let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
                guard fd >= 0 else { continue }
                guard connection.listener.track(fd) else {
                    close(fd)
                    return nil
                }
                let flags = fcntl(fd, F_GETFL)
                _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
                var connected = Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0
                if !connected && errno == EINPROGRESS,
                   connection.stopSignal.wait(for: Int16(POLLOUT), on: fd, timeoutMilliseconds: 5000) {
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    connected = getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0
                }
                if connected {
                    _ = fcntl(fd, F_SETFL, flags)
                    var one: Int32 = 1
                    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                    return fd
                }
                connection.listener.untrackAndClose(fd)
            }
            return nil
        }
    }
}
