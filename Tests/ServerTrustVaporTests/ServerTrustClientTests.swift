#if VaporClient
import Foundation
@_spi(CustomByteBufferAllocator) import NIOCore
import NIOPosix
import ServerTrust
import ServerTrustHTTP
import ServerTrustTestSupport
import ServerTrustVapor
import Synchronization
import Testing
import Vapor
import VaporTesting

/// How many buffers ``countingAllocator`` has allocated (the only user of that allocator).
private let countingAllocations = Atomic<Int>(0)

/// A `ByteBufferAllocator` that counts its allocations, so a test can tell which allocator made
/// a response body.
private let countingAllocator = ByteBufferAllocator(
    allocate: { size in
        countingAllocations.add(1, ordering: .relaxed)
        return malloc(size)
    },
    reallocate: { pointer, _, newSize in realloc(pointer, newSize) },
    deallocate: { pointer in free(pointer) },
    copy: { destination, source, count in memcpy(destination, source, count) }
)

/// `ServerTrustClient` called directly and through Vapor: futures and async callers, the
/// event loop, allocator and logger it is given, and the mapping of requests and responses.
@Suite struct ServerTrustClientTests {
    // MARK: (e) event loops, futures, allocator, logger

    /// A handler returning an `EventLoopFuture` beside an `async` one, both through `req.client`;
    /// the future's callbacks run on the request's event loop (Vapor's `delegating(to:)`).
    @Test func aFutureHandlerAndAnAsyncHandlerBothReachTheUpstream() async throws {
        let fixture = try VaporFixture()
        defer { fixture.stop() }
        let session = try fixture.session()
        defer { session.shutdown() }
        let upstream = fixture.url("/balance", on: fixture.genuine)

        try await withVaporApp(session: session, routes: { app in
            app.get("future") { req -> EventLoopFuture<String> in
                req.client.get(URI(string: upstream)).map { response in
                    "\(req.eventLoop.inEventLoop) \(response.body.map { String(buffer: $0) } ?? "")"
                }
            }
            app.get("async") { req async throws -> String in
                try await req.client.get(URI(string: upstream)).body.map { String(buffer: $0) } ?? ""
            }
            app.get("app-client") { req async throws -> String in
                try await req.application.client.get(URI(string: upstream)).body.map { String(buffer: $0) } ?? ""
            }
        }) { app in
            try await app.test(.GET, "future") { #expect($0.body.string == #"true {"balance":"100.00"}"#) }
            try await app.test(.GET, "async") { #expect($0.body.string == #"{"balance":"100.00"}"#) }
            try await app.test(.GET, "app-client") { #expect($0.body.string == #"{"balance":"100.00"}"#) }
        }
        #expect(fixture.genuine.recentRequests.filter { $0.target == "/balance" }.count == 3)
    }

    @Test func delegatingCompletesOnTheGivenLoopAllocatingAndLoggingAreUsed() async throws {
        let fixture = try VaporFixture()
        defer { fixture.stop() }
        let session = try fixture.session()
        defer { session.shutdown() }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        defer { group.shutdownGracefully { _ in } }
        let first = group.next()
        let second = group.next()
        #expect(first !== second)
        let logs = CapturedLogs()

        let client = ServerTrustClient(session: session, eventLoop: first)
            .delegating(to: second).allocating(to: countingAllocator).logging(to: logs.logger)
        #expect(client.eventLoop === second)
        let before = countingAllocations.load(ordering: .relaxed)
        let future = Self.future(client, ClientRequest(url: URI(string: fixture.url("/balance", on: fixture.genuine))))
        #expect(future.eventLoop === second)
        let onLoop = try await future.map { _ in second.inEventLoop }.get()
        let response = try await future.get()

        #expect(onLoop)
        #expect(response.status == .ok)
        #expect(response.body.map { String(buffer: $0) } == #"{"balance":"100.00"}"#)
        #expect(countingAllocations.load(ordering: .relaxed) > before)
        #expect(logs.at(.trace).contains { $0.message == "ServerTrustClient sending" && $0.metadata["servertrust.host"] == VaporFixture.host })

        // A failure is logged to the logger given, with the session's code and the trust error's.
        let error = await thrownError { try await client.get(URI(string: fixture.url("/balance", on: fixture.impostor))) }
        #expect((error as? SessionError)?.trustError?.code == .pinMismatch)
        let failure = try #require(logs.at(.debug).first { $0.message == "ServerTrustClient request failed" })
        #expect(failure.metadata["servertrust.code"] == "trustEvaluationFailed")
        #expect(failure.metadata["servertrust.trustError"] == "pinMismatch")
    }

    // MARK: (f) mapping both ways

    /// Method, URL with its query, header fields in order with a repeated name, and the body go
    /// out as written; status, repeated response fields and body come back.
    @Test func aRequestAndItsResponseAreMappedBothWays() async throws {
        let fixture = try VaporFixture()
        defer { fixture.stop() }
        fixture.genuine.setHandler { request in
            guard request.path == "/ledger" else { return nil }
            return LocalHTTPResponse(
                status: 201,
                headers: [("Content-Type", "text/plain"), ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2"), ("X-Received", request.bodyText)],
                body: .text("created"))
        }
        let session = try fixture.session()
        defer { session.shutdown() }
        let client = ServerTrustClient(session: session, eventLoop: MultiThreadedEventLoopGroup.singleton.next())

        var headers = HTTPHeaders()
        headers.add(name: "X-Multi", value: "first")
        headers.add(name: "X-Multi", value: "second")
        headers.add(name: "Content-Type", value: "text/plain")
        headers.add(name: "Content-Length", value: "5")
        let request = ClientRequest(
            method: .PUT, url: URI(string: fixture.url("/ledger?account=12&note=two%20words", on: fixture.genuine)), headers: headers,
            body: ByteBuffer(string: "hello"))
        let response = try await Self.future(client, request).get()

        let received = try #require(fixture.genuine.recentRequests.last)
        #expect(received.method == "PUT")
        #expect(received.target == "/ledger?account=12&note=two%20words")
        #expect(received.headers(named: "X-Multi") == ["first", "second"])
        #expect(received.header("Content-Type") == "text/plain")
        #expect(received.headers(named: "Content-Length") == ["5"])
        #expect(received.header("Host") == "\(VaporFixture.host):\(fixture.genuine.port)")
        #expect(received.bodyText == "hello")

        #expect(response.status == .created)
        #expect(response.status.code == 201)
        #expect(response.headers["Set-Cookie"] == ["a=1", "b=2"])
        #expect(response.headers.first(name: "X-Received") == "hello")
        #expect(response.body.map { String(buffer: $0) } == "created")
    }

    /// An empty response body is nil, as Vapor's own client gives it.
    @Test func anEmptyResponseBodyIsNil() async throws {
        let fixture = try VaporFixture()
        defer { fixture.stop() }
        let session = try fixture.session()
        defer { session.shutdown() }
        let client = ServerTrustClient(session: session, eventLoop: MultiThreadedEventLoopGroup.singleton.next())

        let head = try await client.send(ClientRequest(method: .HEAD, url: URI(string: fixture.url("/large/10", on: fixture.genuine))))
        #expect(head.status == .ok)
        #expect(head.headers.first(name: "Content-Length") == "10")
        #expect(head.body == nil)
        let noContent = try await client.get(URI(string: fixture.url("/status/204", on: fixture.genuine)))
        #expect(noContent.status == .noContent)
        #expect(noContent.body == nil)
    }

    /// Requests the client cannot send as written, each refused with `invalidRequest` and a
    /// reason naming what is refused, before any connection is opened.
    @Test(arguments: [
        ("relative URL", "\"/echo\" is not an absolute URL with a scheme and a host."),
        ("method with a space", "The method \"GET /admin\" is not an RFC 9110 token."),
        ("header name with a space", "The header name \"X Bad\" is not an RFC 9110 token."),
        ("header value with CR LF", "The value of header \"X-Note\" contains CR, LF or NUL."),
        ("Host of another server", "Host"),
        ("Content-Length that disagrees", "The header \"Content-Length: 3\" disagrees with the body's 5 bytes."),
        ("Transfer-Encoding", "Transfer-Encoding"),
    ])
    func aRequestThatCannotBeMappedIsRefusedByName(_ name: String, _ expected: String) async throws {
        let fixture = try VaporFixture()
        defer { fixture.stop() }
        let session = try fixture.session()
        defer { session.shutdown() }
        let logs = CapturedLogs()
        let client = ServerTrustClient(session: session, eventLoop: MultiThreadedEventLoopGroup.singleton.next(), logger: logs.logger)
        var request = ClientRequest(method: .POST, url: URI(string: fixture.url("/echo", on: fixture.genuine)), body: ByteBuffer(string: "hello"))
        switch name {
        case "relative URL": request.url = URI(string: "/echo")
        case "method with a space": request.method = .RAW(value: "GET /admin")
        case "header name with a space": request.headers.add(name: "X Bad", value: "1")
        case "header value with CR LF": request.headers.add(name: "X-Note", value: "a\r\nX-Injected: 1")
        case "Host of another server": request.headers.add(name: "Host", value: "internal.example")
        case "Content-Length that disagrees": request.headers.add(name: "Content-Length", value: "3")
        default: request.headers.add(name: "Transfer-Encoding", value: "chunked")
        }

        let error = await thrownError { try await Self.future(client, request).get() }

        let refusal = try #require(error as? SessionError, "\(name): \(String(describing: error))")
        #expect(refusal.code == .invalidRequest, "\(name)")
        #expect(expected.hasSuffix(".") ? refusal.reason == expected : refusal.reason.contains(expected), "\(name): \(refusal.reason)")
        #expect(fixture.genuine.acceptedConnections == 0, "\(name)")
        #expect(logs.at(.debug).contains { $0.metadata["servertrust.code"] == "invalidRequest" }, "\(name)")
    }

    /// A `Host` field naming the URL's own server (here in another case) is admitted and left
    /// out: the server receives one `Host`, the URL's authority, as the session sends it.
    @Test func aHostFieldNamingTheURLsServerIsAdmittedAndTheURLsAuthoritySent() async throws {
        let fixture = try VaporFixture()
        defer { fixture.stop() }
        let session = try fixture.session()
        defer { session.shutdown() }
        let client = ServerTrustClient(session: session, eventLoop: MultiThreadedEventLoopGroup.singleton.next())
        let authority = "\(VaporFixture.host.uppercased()):\(fixture.genuine.port)"

        let response = try await client.get(URI(string: fixture.url("/balance", on: fixture.genuine)), headers: ["Host": authority])

        #expect(response.status == .ok)
        #expect(fixture.genuine.recentRequests.last?.headers(named: "Host") == ["\(VaporFixture.host):\(fixture.genuine.port)"])
    }

    /// After `session.shutdown()` a request through the client (directly and through `req.client`)
    /// fails with the session's `sessionShutDown`, and nothing reaches the upstream.
    @Test func aRequestAfterTheSessionIsShutDownFailsWithSessionShutDown() async throws {
        let fixture = try VaporFixture()
        defer { fixture.stop() }
        let session = try fixture.session()
        let client = ServerTrustClient(session: session, eventLoop: MultiThreadedEventLoopGroup.singleton.next())
        let upstream = URI(string: fixture.url("/balance", on: fixture.genuine))
        #expect(try await client.get(upstream).status == .ok)
        let served = fixture.genuine.requestsServed

        session.shutdown()
        let direct = await thrownError { try await client.get(upstream) }
        #expect((direct as? SessionError)?.code == .sessionShutDown, "\(String(describing: direct))")
        try await withVaporApp(session: session, routes: { app in
            app.get("after") { req async throws -> String in
                do {
                    _ = try await req.client.get(upstream)
                    return "sent"
                } catch let error as SessionError {
                    return "\(error.code)"
                }
            }
        }) { app in
            try await app.test(.GET, "after") { #expect($0.body.string == "sessionShutDown") }
        }
        #expect(fixture.genuine.requestsServed == served)
    }

    /// The future `Client.send(_:)` returns (from an async context the async overload would be chosen).
    static func future(_ client: any Client, _ request: ClientRequest) -> EventLoopFuture<ClientResponse> {
        client.send(request)
    }

    // MARK: Timeouts

    /// `ClientRequest.timeout` is the session's per-hop `Request.timeout`: a slow upstream fails
    /// with `timedOut` although the session's own limit (300 s here) is far off; a timeout that
    /// is not positive is refused by the session by name.
    @Test func theClientRequestTimeoutIsHonoured() async throws {
        let fixture = try VaporFixture()
        defer { fixture.stop() }
        let session = try fixture.session()
        defer { session.shutdown() }
        let client = ServerTrustClient(session: session, eventLoop: MultiThreadedEventLoopGroup.singleton.next())
        let slow = URI(string: fixture.url("/slow/60000", on: fixture.genuine))

        let timedOut = await thrownError { try await client.send(ClientRequest(url: slow, timeout: .milliseconds(300))) }
        #expect((timedOut as? SessionError)?.code == .timedOut, "\(String(describing: timedOut))")

        let zero = await thrownError { try await client.send(ClientRequest(url: slow, timeout: .zero)) }
        let refused = try #require(zero as? SessionError)
        #expect(refused.code == .invalidRequest)
        #expect(refused.reason.contains("timeout must be positive"))
    }
}
#endif
