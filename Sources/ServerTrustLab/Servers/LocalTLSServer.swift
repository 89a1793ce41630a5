public import ServerTrust
import Foundation
internal import COpenSSL
internal import CServerTrustShims

/// An HTTPS/1.1 server in the process, on `127.0.0.1` and an ephemeral port, for demos and
/// integration tests of TLS clients — never for production traffic.
///
/// It runs from `init` until ``stop()`` (or `deinit`) on threads of its own — an accept thread
/// and one per connection — never on Swift concurrency's pool, so tests can `await` clients
/// against it. Every connection is served by the same HTTP engine as ``LocalHTTPServer``: the
/// configured handler first, then ``LocalHTTPRoutes`` (`/status/{code}`, `/echo`, `/large/{n}`…).
///
/// ```swift
/// let server = try LocalTLSServer(.init(chain: [leaf, intermediate], privateKeyPEM: key.pemPrivateKey))
/// defer { server.stop() }
/// // curl: --resolve localhost:\(server.port):127.0.0.1 https://localhost:\(server.port)/status/201
/// ```
///
/// Starting any local server sets SIGPIPE to be ignored process-wide: OpenSSL writes to sockets
/// with `write(2)`, and a client that hangs up mid-response must not kill the test process.
///
/// A demo or test can make the same address present another certificate to new handshakes with
/// ``replaceIdentity(_:stapledOCSPResponse:)`` (an impostor after the first request); sessions
/// issued under the previous identity then no longer resume.
public final class LocalTLSServer: Sendable {
    /// The port on `127.0.0.1`.
    public let port: Int

    private let listener: TCPListener
    private let core: Core

    /// Starts a server; it listens before this returns.
    ///
    /// - Throws: ``LocalServerError`` when the identity does not load (no certificate, a key
    ///   that does not parse or does not match the leaf), the versions are inverted, or the
    ///   socket cannot be bound.
    public init(_ configuration: Configuration) throws {
        guard configuration.minimumTLSVersion <= configuration.maximumTLSVersion else {
            throw LocalServerError("minimumTLSVersion \(configuration.minimumTLSVersion) is above maximumTLSVersion \(configuration.maximumTLSVersion).")
        }
        let clientCertificates = ClientCertificateLog()
        let core = Core(
            configuration: configuration, context: try Core.makeContext(configuration, clientCertificates: clientCertificates),
            clientCertificates: clientCertificates)
        listener = try TCPListener(name: "LocalTLSServer") { [core] connection in
            core.serve(connection)
        }
        self.core = core
        port = listener.port
    }

    /// A server presenting `chain` (leaf first) with the leaf's PEM key, other settings default.
    public convenience init(chain: [Certificate], privateKeyPEM: String, handler: LocalHTTPHandler? = nil) throws {
        try self.init(Configuration(chain: chain, privateKeyPEM: privateKeyPEM, handler: handler))
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

    /// `https://{host}:{port}{path}`; pair a name with ``resolveEntry(host:)``.
    public func url(_ path: String = "/", host: String = "localhost") -> String {
        "https://\(host):\(port)\(path)"
    }

    /// `{host}:{port}:127.0.0.1`, for `CURLOPT_RESOLVE` or curl's `--resolve`.
    public func resolveEntry(host: String = "localhost") -> String {
        "\(host):\(port):127.0.0.1"
    }

    /// Presents `identity` (and staples `stapledOCSPResponse`) on handshakes that start after
    /// this returns. Open connections keep what they negotiated.
    ///
    /// Builds a new `SSL_CTX`, so session tickets and cache entries of the previous identity
    /// are not honoured: a client resuming one gets a full handshake with the new identity.
    ///
    /// - Throws: ``LocalServerError`` if the identity does not load; the old one stays.
    public func replaceIdentity(_ identity: Identity, stapledOCSPResponse: [UInt8]? = nil) throws {
        var configuration = core.configuration
        configuration.identity = identity
        configuration.stapledOCSPResponse = stapledOCSPResponse
        core.setContext(try Core.makeContext(configuration, clientCertificates: core.clientCertificates))
    }

    /// Staples `response` (DER `OCSPResponse`, nil for none) to later handshakes, keeping the
    /// identity and its sessions.
    public func setStapledOCSPResponse(_ response: [UInt8]?) {
        core.currentContext.setStapledOCSPResponse(response)
    }

    /// Replaces the custom handler for requests read from now on.
    public func setHandler(_ handler: LocalHTTPHandler?) {
        core.http.setHandler(handler)
    }

    /// TCP connections accepted so far.
    public var acceptedConnections: Int { listener.acceptedConnections }

    /// TCP connections open now.
    public var openConnections: Int { listener.openConnections }

    /// TLS handshakes completed so far, full or resumed.
    public var completedHandshakes: Int { core.counts.withLock { $0.completed } }

    /// Completed handshakes that resumed a session (`SSL_session_reused`).
    public var resumedHandshakes: Int { core.counts.withLock { $0.resumed } }

    /// Requests answered so far; a request is counted before its response is written.
    public var requestsServed: Int { core.http.requestsServed }

    /// Every counter at one instant.
    public var statistics: Statistics {
        let counts = core.counts.withLock { $0 }
        return Statistics(
            acceptedConnections: listener.acceptedConnections, completedHandshakes: counts.completed,
            resumedHandshakes: counts.resumed, failedHandshakes: counts.failed, stapledResponses: counts.stapled,
            requestsServed: core.http.requestsServed, openConnections: listener.openConnections)
    }

    /// Completed handshakes, oldest first.
    public var handshakes: [Handshake] { core.counts.withLock { $0.handshakes } }

    /// With ``Configuration/requestsUnverifiedClientCertificate``: the subject (`/O=…/CN=…`) of every
    /// client certificate received, in order, including in handshakes that failed afterwards.
    public var clientCertificateSubjects: [String] { core.clientCertificates.all }

    /// The most recent requests, oldest first: the last 64, fewer when their bodies add up to
    /// over 16 MiB (the last request is always there).
    public var recentRequests: [LocalHTTPRequest] { core.http.recentRequests }
}

extension LocalTLSServer {
    /// The state the connection threads share: immutable, or behind a lock (`Locked`).
    fileprivate final class Core: Sendable {
        let configuration: Configuration
        let http: HTTPService
        private let context: Locked<TLSServerContext>
        let counts = Locked(Counts())
        let clientCertificates: ClientCertificateLog

        struct Counts {
            var completed = 0
            var resumed = 0
            var failed = 0
            var stapled = 0
            var handshakes: [Handshake] = []
        }

        init(configuration: Configuration, context: TLSServerContext, clientCertificates: ClientCertificateLog) {
            self.configuration = configuration
            self.http = HTTPService(handler: configuration.handler)
            self.context = Locked(context)
            self.clientCertificates = clientCertificates
        }

        static func makeContext(_ configuration: Configuration, clientCertificates: ClientCertificateLog) throws -> TLSServerContext {
            try TLSServerContext(
                identity: configuration.identity,
                versions: configuration.minimumTLSVersion ... configuration.maximumTLSVersion,
                sessionTickets: configuration.sessionTickets,
                sessionCache: configuration.sessionCache,
                stapledOCSPResponse: configuration.stapledOCSPResponse,
                clientCertificates: configuration.requestsUnverifiedClientCertificate ? clientCertificates : nil)
        }

        var currentContext: TLSServerContext { context.withLock { $0 } }

        func setContext(_ new: TLSServerContext) {
            context.withLock { $0 = new }
        }

        func serve(_ connection: TCPListener.Connection) {
            let context = currentContext
            guard let ssl = context.makeSSL(fd: connection.fd) else { return }
            defer {
                ERR_clear_error()
                SSL_free(ssl)
                withExtendedLifetime(context) {}
            }
            guard SSL_accept(ssl) == 1 else {
                counts.withLock { $0.failed += 1 }
                return
            }
            recordHandshake(ssl, context: context, connectionNumber: connection.number)
            http.serve(TLSStream(ssl: ssl), connectionNumber: connection.number, stopSignal: connection.stopSignal)
            if !connection.stopSignal.isFired { _ = SSL_shutdown(ssl) }
        }

        private func recordHandshake(_ ssl: OpaquePointer, context: TLSServerContext, connectionNumber: Int) {
            var staple: UnsafePointer<UInt8>?
            let stapled = CServerTrustShims_SSL_get_tlsext_status_ocsp_resp(ssl, &staple) > 0
            var alpn: UnsafePointer<UInt8>?
            var alpnLength: UInt32 = 0
            SSL_get0_alpn_selected(ssl, &alpn, &alpnLength)
            let handshake = Handshake(
                connectionNumber: connectionNumber,
                tlsVersion: String(cString: SSL_get_version(ssl)),
                resumed: SSL_session_reused(ssl) == 1,
                serverName: SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name).map { String(cString: $0) },
                alpnProtocol: alpn.map { String(decoding: UnsafeBufferPointer(start: $0, count: Int(alpnLength)), as: UTF8.self) },
                stapledOCSPResponse: stapled,
                leafFingerprint: context.leafFingerprint)
            counts.withLock { counts in
                counts.completed += 1
                if handshake.resumed { counts.resumed += 1 }
                if stapled { counts.stapled += 1 }
                counts.handshakes.append(handshake)
            }
        }
    }
}
