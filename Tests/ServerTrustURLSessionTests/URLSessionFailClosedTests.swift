#if URLSessionAdapter
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport
import ServerTrustURLSession
import Testing

/// Requests the protocol cannot serve through its Session fail, and never reach URLSession's
/// own, unpinned HTTP stack.
@Suite struct URLSessionFailClosedTests {
    /// `localhost` (which URLSession's own stack would resolve and connect to) rather than a
    /// name only the session's `resolve` knows: no connection at all proves no fallthrough.
    @Test func aProtocolRegisteredWithoutASessionFailsClosed() async throws {
        let fixture = try URLSessionFixture()
        defer { fixture.stop() }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [ServerTrustURLProtocol.self] + (configuration.protocolClasses ?? [])
        let error = try #require(await urlError { try await URLSession(configuration: configuration).data(from: URL(string: fixture.impostor.url("/status/200"))!) })
        #expect(error.code == .unsupportedURL)
        #expect((error.userInfo[NSUnderlyingErrorKey] as? SessionError)?.code == .sessionNotFound)
        #expect(fixture.impostor.acceptedConnections == 0)
    }

    @Test func aReleasedSessionFailsClosed() async throws {
        let fixture = try URLSessionFixture()
        defer { fixture.stop() }
        var released: Session? = try Session(configuration: {
            var configuration = Session.Configuration()
            configuration.anchors = .bundle(try TrustAnchors([fixture.redirectorRoot.certificate]))
            configuration.resolve = [fixture.redirector.resolveEntry(host: URLSessionFixture.redirectorHost)]
            return configuration
        }())
        let configuration = URLSessionConfiguration.serverTrust(session: released!)
        released = nil
        let error = try #require(await urlError { try await URLSession(configuration: configuration).data(from: URL(string: fixture.redirector.url("/status/200"))!) })
        #expect(error.code == .unsupportedURL)
        #expect((error.userInfo[NSUnderlyingErrorKey] as? SessionError)?.code == .sessionNotFound)
        #expect(fixture.redirector.acceptedConnections == 0)
    }

    /// A plain-http URL is the session's to refuse (no `allowsPlainHTTP`), not URLSession's
    /// own stack's to serve.
    @Test func aPlainHTTPRequestIsRefusedNotServedByURLSessionsOwnStack() async throws {
        let fixture = try URLSessionFixture()
        defer { fixture.stop() }
        let plain = try LocalHTTPServer()
        defer { plain.stop() }
        let error = try #require(await urlError { try await fixture.urlSession().data(from: URL(string: plain.url("/status/200"))!) })
        #expect(error.code == .appTransportSecurityRequiresSecureConnection)
        #expect(error.sessionError?.code == .invalidRequest)
        #expect(plain.acceptedConnections == 0)
    }

    /// FoundationNetworking answers a 401 challenge by resending the request through its own
    /// HTTP stack; the protocol hides the challenge so that never happens.
    @Test func aChallengeIsDeliveredAsTheResponseNotAnsweredByURLSessionsOwnStack() async throws {
        let fixture = try URLSessionFixture(redirectorHandler: { request in
            request.target == "/private"
                ? LocalHTTPResponse(status: 401, headers: [("WWW-Authenticate", "Basic realm=\"private\"")], body: .text("who are you?\n")) : nil
        })
        defer { fixture.stop() }
        let delegate = RecordingDelegate()
        fixture.urlSession(delegate: delegate).dataTask(with: fixture.redirectorURL("/private")).resume()
        await delegate.completion()
        let (response, data, error, challenges) = delegate.record.withLock { ($0.response, $0.data, $0.error, $0.challenges) }
        #expect(error == nil)
        #expect(challenges == 0)
        let served = try #require(response as? ServerTrustHTTPURLResponse)
        #expect(served.statusCode == 401)
        #expect(served.value(forHTTPHeaderField: "WWW-Authenticate") == nil)
        #expect(served.value(forHTTPHeaderField: "X-ServerTrust-WWW-Authenticate") == "Basic realm=\"private\"")
        #expect(served.headerFields[.wwwAuthenticate] == "Basic realm=\"private\"")
        #expect(String(decoding: data, as: UTF8.self) == "who are you?\n")
        #expect(fixture.redirector.requestsServed == 1)
    }

    /// An upload task's separate body is invisible to a protocol: refused, rather than sent
    /// without its body.
    @Test func anUploadTaskWithASeparateBodyIsRefusedNotSentEmpty() async throws {
        let fixture = try URLSessionFixture()
        defer { fixture.stop() }
        var request = URLRequest(url: fixture.redirectorURL("/echo"))
        request.httpMethod = "POST"
        let error = try #require(await urlError { try await fixture.urlSession().upload(for: request, from: Data("payload".utf8)) })
        #expect(error.code == .unsupportedURL)
        #expect((error.userInfo[NSUnderlyingErrorKey] as? SessionError)?.code == .unsupportedTask)
        #expect(fixture.redirector.requestsServed == 0)
    }

    @Test func aDownloadTaskIsRefused() async throws {
        let fixture = try URLSessionFixture()
        defer { fixture.stop() }
        let delegate = RecordingDelegate()
        fixture.urlSession(delegate: delegate).downloadTask(with: fixture.genuineURL).resume()
        await delegate.completion()
        let error = try #require(delegate.record.withLock { $0.error } as? URLError)
        #expect(error.code == .unsupportedURL)
        #expect((error.userInfo[NSUnderlyingErrorKey] as? SessionError)?.code == .unsupportedTask)
    }

    /// A WebSocket task never reaches URLSession's own WebSocket protocol: refused by this one
    /// (or, when the runtime libcurl has no WebSocket support, by URLSession before any protocol).
    @Test func aWebSocketTaskIsRefused() async throws {
        let fixture = try URLSessionFixture()
        defer { fixture.stop() }
        let delegate = RecordingDelegate()
        let url = URL(string: fixture.redirector.url("/socket").replacingOccurrences(of: "https:", with: "wss:"))!
        fixture.urlSession(delegate: delegate).webSocketTask(with: url).resume()
        await delegate.completion()
        let error = try #require(delegate.record.withLock { $0.error } as? URLError)
        #expect(error.code == .unsupportedURL)
        #expect(fixture.redirector.acceptedConnections == 0)
    }

    /// Cancelling the Swift task cancels URLSession's task, whose `stopLoading` cancels the
    /// session's transfer: it does not run on to the end of a slow response.
    @Test func cancellingTheTaskCancelsTheSessionTransfer() async throws {
        let fixture = try URLSessionFixture()
        defer { fixture.stop() }
        let urlSession = fixture.urlSession()
        // Not timed: the response would take ten minutes, so a transfer that ran on to its end
        // would still be active when the bounded waits below give up (they only keep a broken
        // build from hanging the run).
        let task = Task { try await urlSession.data(from: fixture.redirectorURL("/slow/600000")) }
        var started = ContinuousClock.now
        while fixture.session.probe.activeTransfers == 0 && ContinuousClock.now - started < .seconds(120) {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(fixture.session.probe.activeTransfers == 1)
        task.cancel()
        let error = try #require(await urlError { try await task.value })
        #expect(error.code == .cancelled)
        started = ContinuousClock.now
        while fixture.session.probe.activeTransfers > 0 && ContinuousClock.now - started < .seconds(120) {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(fixture.session.probe.activeTransfers == 0)
    }

    @Test func requestBodiesInMemoryAndStreamedAreSent() async throws {
        let fixture = try URLSessionFixture()
        defer { fixture.stop() }
        let urlSession = fixture.urlSession()
        var request = URLRequest(url: fixture.redirectorURL("/echo"))
        request.httpMethod = "POST"
        request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data("in memory".utf8)
        let (inMemory, _) = try await urlSession.data(for: request)
        #expect(String(decoding: inMemory, as: UTF8.self) == "in memory")

        request.httpBody = nil
        let streamedBytes = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0) })
        request.httpBodyStream = InputStream(data: streamedBytes)
        let (streamed, response) = try await urlSession.data(for: request)
        #expect(streamed == streamedBytes)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
    }
}
#endif
