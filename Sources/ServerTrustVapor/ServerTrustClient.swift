#if VaporClient
public import Logging
public import NIOCore
public import ServerTrustHTTP
public import Vapor

/// A Vapor `Client` that sends every request through a ServerTrustHTTP `Session`, so each
/// connection is evaluated by the session's trust policies — pins, revocation, per-host
/// evaluators — and each request follows its redirects, signed-response checks and trust
/// updates.
///
/// Install it as the application's client, and `req.client` and `app.client` use it:
///
/// ```swift
/// let session = try Session(trustManager: ServerTrustManager(evaluators: [
///     try HostPattern("api.example.com"): .pinnedKeyHashes(["sha256/…", "sha256/…backup"]),
/// ], allHostsMustBeEvaluated: true))
/// app.clients.use(.serverTrust(session))
///
/// app.get("balance") { req async throws -> ClientResponse in
///     try await req.client.get("https://api.example.com/balance")
/// }
/// ```
///
/// Or make one and call it directly: `ServerTrustClient(session: session, eventLoop: loop)`.
///
/// **Errors are the session's.** A request the session refuses fails with its `SessionError`,
/// unchanged: `catch let error as SessionError`, then `error.code == .trustEvaluationFailed`
/// and `error.trustError` (which check rejected the server: `pinMismatch`, its evaluator, the
/// chain the server showed beside the configured pins), `error.signatureError` for a signed
/// response that failed. A `ClientRequest` that cannot be sent as it is written fails with
/// `SessionError` `invalidRequest`, its reason naming the part, before any connection is opened.
///
/// **What differs from Vapor's default client** (AsyncHTTPClient):
/// - `app.http.client.configuration` is not used: no proxy, timeout, redirect, TLS or
///   decompression setting of it applies. The session's `Session.Configuration` does —
///   `proxy`, `connectTimeout`, `requestTimeout`, `redirectPolicy`, `contentDecoding`.
/// - The response body is read whole before the future completes, up to the session's
///   `Session.Configuration.maximumResponseBodySize` (64 MiB by default); a larger one fails
///   with `SessionError.Code.responseTooLarge`. Vapor's client buffers too, without a limit.
/// - `ClientRequest.timeout` is honoured as the session's per-request `Request.timeout`, which
///   bounds *each hop* (a redirect starts a new one); Vapor's client makes it one deadline for
///   the whole exchange. Without it, the session's `requestTimeout` (60 s by default) applies.
/// - A request cannot be cancelled through its future; the session's timeouts bound it.
/// - The response carries no trust report (`ClientResponse` has no room for one); call the
///   session directly (`Session.data(for:)`) when you need `Response.trust` or
///   `Response.verification`. Make signed-response policies `enforced` for hosts whose
///   answers must be proven: an `informational` policy's failure is not visible here.
public struct ServerTrustClient: Client {
    /// The session every request goes through. The client never shuts it down: shut it down
    /// (or let it go) when the application that uses it is done. After `session.shutdown()`
    /// every request fails with `SessionError.Code.sessionShutDown`, and nothing is sent.
    public let session: ServerTrustHTTP.Session
    /// The event loop on which every future the client returns completes.
    public let eventLoop: any EventLoop
    /// Where response bodies are allocated.
    public let byteBufferAllocator: ByteBufferAllocator
    /// The logger of the client's own lines (a request refused before it was sent, a request
    /// that failed), at `debug` and `trace`. The session logs its trust decisions to its own
    /// `Session.Configuration.logger`.
    public let logger: Logger

    /// A client over `session` whose futures complete on `eventLoop`.
    ///
    /// - Parameters:
    ///   - session: the session every request goes through.
    ///   - eventLoop: where the futures ``send(_:)`` returns complete.
    ///   - logger: for the client's own lines; default `Logger(label: "servertrust.vapor")`.
    ///   - byteBufferAllocator: for response bodies; default a new `ByteBufferAllocator`.
    public init(
        session: ServerTrustHTTP.Session, eventLoop: any EventLoop, logger: Logger = Logger(label: "servertrust.vapor"),
        byteBufferAllocator: ByteBufferAllocator = ByteBufferAllocator()
    ) {
        self.session = session
        self.eventLoop = eventLoop
        self.logger = logger
        self.byteBufferAllocator = byteBufferAllocator
    }

    /// Sends `request` through the session and completes on ``eventLoop`` with the whole response.
    ///
    /// - Returns: a future that succeeds with the final hop's status, header fields and body (a
    ///   buffer from ``byteBufferAllocator``; nil when the body is empty, as with Vapor's
    ///   client), or fails with the session's `SessionError` (`invalidRequest` for a request
    ///   that cannot be mapped, before any connection is opened).
    public func send(_ request: ClientRequest) -> EventLoopFuture<ClientResponse> {
        let outgoing: ServerTrustHTTP.Request
        do {
            outgoing = try Self.sessionRequest(request)
        } catch {
            logger.debug(
                "ServerTrustClient refused a request it cannot map", metadata: ["servertrust.code": "\(error.code)", "servertrust.reason": "\(error.reason)"])
            return eventLoop.makeFailedFuture(error)
        }
        let host = outgoing.url.host ?? ""
        logger.trace("ServerTrustClient sending", metadata: ["servertrust.method": "\(outgoing.method.rawValue)", "servertrust.host": "\(host)"])
        let promise = eventLoop.makePromise(of: ClientResponse.self)
        promise.completeWithTask { [session, logger, byteBufferAllocator] in
            do {
                let response = try await session.data(for: outgoing)
                return Self.clientResponse(response, allocator: byteBufferAllocator)
            } catch let error as SessionError {
                var metadata: Logger.Metadata = ["servertrust.code": "\(error.code)", "servertrust.host": "\(host)"]
                if let trustError = error.trustError { metadata["servertrust.trustError"] = "\(trustError.code)" }
                logger.debug("ServerTrustClient request failed", metadata: metadata)
                throw error
            }
        }
        return promise.futureResult
    }

    /// This client with its futures completing on `eventLoop` (`req.client` delegates to the
    /// request's loop).
    public func delegating(to eventLoop: any EventLoop) -> any Client {
        ServerTrustClient(session: session, eventLoop: eventLoop, logger: logger, byteBufferAllocator: byteBufferAllocator)
    }

    /// This client with its own lines going to `logger` (`req.client` logs to the request's logger).
    public func logging(to logger: Logger) -> any Client {
        ServerTrustClient(session: session, eventLoop: eventLoop, logger: logger, byteBufferAllocator: byteBufferAllocator)
    }

    /// This client with response bodies allocated by `byteBufferAllocator`.
    public func allocating(to byteBufferAllocator: ByteBufferAllocator) -> any Client {
        ServerTrustClient(session: session, eventLoop: eventLoop, logger: logger, byteBufferAllocator: byteBufferAllocator)
    }
}

extension Application.Clients.Provider {
    /// The application's client is a ``ServerTrustClient`` over `session`:
    /// `app.clients.use(.serverTrust(session))`, and every `req.client` and `app.client`
    /// request goes through the session.
    ///
    /// `app.client` completes on one of the application's event loops and logs to
    /// `app.logger`; `req.client` on the request's loop, to the request's logger, with the
    /// request's allocator (Vapor's `delegating(to:)`, `logging(to:)`, `allocating(to:)`).
    /// The session is not shut down with the application: shut it down after
    /// `app.asyncShutdown()`.
    public static func serverTrust(_ session: ServerTrustHTTP.Session) -> Self {
        .init { application in
            application.clients.use { application in
                ServerTrustClient(
                    session: session, eventLoop: application.eventLoopGroup.next(), logger: application.logger,
                    byteBufferAllocator: application.allocator)
            }
        }
    }
}
#endif
