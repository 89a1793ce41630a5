import Foundation
import HTTPTypes
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// `Session.Configuration.retryPolicy` against in-process servers that drop connections.
@Suite struct RetryTests {
    /// Retries with no backoff to wait out (`random` 0 under full jitter gives a zero delay).
    private static func retrying(_ maximumRetries: Int, logs: CapturedLogs? = nil) -> (inout Session.Configuration) -> Void {
        { configuration in
            configuration.retryPolicy = Session.RetryPolicy(maximumRetries: maximumRetries, jitter: .full)
            configuration.retryRandom = { 0 }
            if let logs { configuration.logger = logs.logger }
        }
    }

    @Test func aGETWhoseConnectionsAreDroppedIsRetriedUntilItSucceeds() async throws {
        let fixture = try SessionFixture()
        fixture.server.setHandler(LocalHTTPHandlers.dropping(first: 2))
        let logs = CapturedLogs()
        let session = try fixture.session(configure: Self.retrying(3, logs: logs))
        defer { session.shutdown() }
        let response = try await session.get(fixture.url("/status/200").absoluteString)
        #expect(response.status == 200)
        #expect(response.attempts == 3)
        #expect(response.hopAttempts == [3])
        #expect(fixture.server.requestsServed == 3)
        #expect(fixture.server.acceptedConnections == 3)
        let retries = logs.at(.notice).filter { $0.message.hasPrefix("Retrying GET") }
        #expect(retries.map { $0.metadata["attempt"] } == ["2", "3"])
        #expect(retries.allSatisfy { $0.metadata["reason"]?.contains("curl 52") == true }, "\(retries)")
        #expect(retries.allSatisfy { $0.metadata["host"] == SessionFixture.host && $0.metadata["delay"] == "0.0 seconds" }, "\(retries)")
    }

    @Test func aPOSTIsNotRetriedAndEndsWithTheEmptyReply() async throws {
        let fixture = try SessionFixture()
        fixture.server.setHandler(LocalHTTPHandlers.dropping(first: -1))
        let session = try fixture.session(configure: Self.retrying(3))
        defer { session.shutdown() }
        let error = await outcome { try await session.post(fixture.url("/echo").absoluteString, body: Array("pay".utf8)) }.sessionError
        #expect(error?.code == .transferFailed)
        #expect(error?.curlCode == 52)  // CURLE_GOT_NOTHING
        #expect(error?.attempts == 1)
        #expect(fixture.server.requestsServed == 1)
    }

    @Test func aGETMarkedNotIdempotentIsNotRetried() async throws {
        let fixture = try SessionFixture()
        fixture.server.setHandler(LocalHTTPHandlers.dropping(first: -1))
        let session = try fixture.session(configure: Self.retrying(3))
        defer { session.shutdown() }
        let request = Request(url: fixture.url("/status/200"), isIdempotent: false)
        let error = await outcome { try await session.data(for: request) }.sessionError
        #expect(error?.code == .transferFailed)
        #expect(error?.attempts == 1)
        #expect(fixture.server.requestsServed == 1)
    }

    @Test func aStreamedBodyIsNeverRetriedEvenForAPUTMarkedIdempotent() async throws {
        let fixture = try SessionFixture()
        fixture.server.setHandler(LocalHTTPHandlers.dropping(first: -1))
        let session = try fixture.session(configure: Self.retrying(3))
        defer { session.shutdown() }
        let probe = UploadProbe()
        let chunks = GeneratedChunks(count: 4, chunkSize: 1000, probe: probe)
        let request = Request(
            method: .put, url: fixture.url("/status/200"), uploadBody: .stream(chunks, length: chunks.totalBytes), isIdempotent: true)
        let error = await outcome { try await session.data(for: request) }.sessionError
        #expect(error?.code == .transferFailed)
        #expect(error?.curlCode == 52)  // CURLE_GOT_NOTHING: the server read the body and closed
        #expect(error?.attempts == 1)
        #expect(fixture.server.requestsServed == 1)
        #expect(probe.produced == chunks.totalBytes)
    }

    @Test func aFileBodyIsRetriedAndSentWholeEachTime() async throws {
        let fixture = try SessionFixture()
        fixture.server.setHandler(LocalHTTPHandlers.dropping(first: 2))
        let session = try fixture.session(configure: Self.retrying(3))
        defer { session.shutdown() }
        let chunks = GeneratedChunks(count: 4, chunkSize: 1000)
        let file = try patternFile(chunks)
        defer { try? FileManager.default.removeItem(at: file) }
        let response = try await session.data(for: Request(method: .put, url: fixture.url("/status/200"), uploadBody: .file(file)))
        #expect(response.status == 200)
        #expect(response.attempts == 3)
        #expect(fixture.server.recentRequests.map(\.method) == ["PUT", "PUT", "PUT"])
        #expect(fixture.server.recentRequests.allSatisfy { $0.body == chunks.allBytes })
    }

    @Test func aPOSTMarkedIdempotentIsRetriedWithItsBody() async throws {
        let fixture = try SessionFixture()
        fixture.server.setHandler(LocalHTTPHandlers.dropping(first: 1))
        let session = try fixture.session(configure: Self.retrying(3))
        defer { session.shutdown() }
        let request = Request(
            method: .post, url: fixture.url("/echo"), headers: [HTTPField.Name("Idempotency-Key")!: "k1"], body: Array("pay".utf8), isIdempotent: true)
        let response = try await session.data(for: request)
        #expect(response.status == 200)
        #expect(response.text == "pay")
        #expect(response.header("X-Echo-Method") == "POST")
        #expect(response.attempts == 2)
        #expect(fixture.server.recentRequests.map(\.method) == ["POST", "POST"])
    }

    @Test func retriesStopAtTheMaximumWithTheLastFailure() async throws {
        let fixture = try SessionFixture()
        fixture.server.setHandler(LocalHTTPHandlers.dropping(first: -1))
        let logs = CapturedLogs()
        let session = try fixture.session(configure: Self.retrying(2, logs: logs))
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/status/200").absoluteString) }.sessionError
        #expect(error?.code == .transferFailed)
        #expect(error?.curlCode == 52)
        #expect(error?.attempts == 3)
        #expect(fixture.server.requestsServed == 3)
        #expect(logs.at(.notice).filter { $0.message.hasPrefix("Retrying") }.count == 2)
    }

    @Test func aTrustRejectionIsNeverRetried() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session([SessionFixture.host: try PinnedKeyHashesTrustEvaluator(pins: [SessionFixture.unrelatedPin])], configure: Self.retrying(3))
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/status/200").absoluteString) }.sessionError
        #expect(error?.code == .trustEvaluationFailed)
        #expect(error?.trustError?.code == .pinMismatch)
        #expect(error?.attempts == 1)
        #expect(fixture.server.acceptedConnections == 1)  // one handshake, never another
        #expect(session.counters.snapshot.evaluations == 1)
    }

    @Test func aRetryOnANewConnectionIsEvaluatedAgain() async throws {
        let fixture = try SessionFixture()
        fixture.server.setHandler(LocalHTTPHandlers.dropping(first: 1))
        let session = try fixture.session([SessionFixture.host: try PinnedKeyHashesTrustEvaluator(pins: [fixture.leafPin])], configure: Self.retrying(3))
        defer { session.shutdown() }
        let response = try await session.get(fixture.url("/status/200").absoluteString)
        #expect(response.attempts == 2)
        #expect(response.trust.evaluator == "PinnedKeyHashesTrustEvaluator")
        #expect(session.counters.snapshot.evaluations == 2)  // the first connection, then the retry's
        #expect(fixture.server.acceptedConnections == 2)
    }

    @Test func aRetryThatReachesAnImpostorIsRejected() async throws {
        let fixture = try SessionFixture()
        let impostor = try GenuineAndImpostor.Impostor(host: SessionFixture.host).leaf
        let server = fixture.server
        let drop = LocalHTTPHandlers.dropping(first: 1)
        // The first request's connection is dropped, and the address then presents another
        // (untrusted) certificate: the retry must be judged as a first attempt would be.
        server.setHandler { request in
            let response = drop(request)
            if response != nil { try? server.replaceIdentity(.init(chain: impostor.chain, privateKeyPEM: impostor.key.pemPrivateKey)) }
            return response
        }
        let session = try fixture.session([SessionFixture.host: try PinnedKeyHashesTrustEvaluator(pins: [fixture.intermediatePin])], configure: Self.retrying(3))
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/status/200").absoluteString) }.sessionError
        #expect(error?.code == .trustEvaluationFailed, "\(String(describing: error))")
        #expect(error?.attempts == 2)
        #expect(fixture.server.requestsServed == 1)
    }

    @Test func aBodyCutShortIsNotRetried() async throws {
        let fixture = try SessionFixture()
        fixture.server.setHandler { _ in
            var response = LocalHTTPResponse(headers: [("Content-Length", "1000")], body: .pattern(count: 1000))
            response.truncatedAfter = 200
            return response
        }
        let session = try fixture.session(configure: Self.retrying(3))
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/large/1000").absoluteString) }.sessionError
        #expect(error?.code == .transferFailed)
        #expect(error?.curlCode == 18)  // CURLE_PARTIAL_FILE
        #expect(error?.attempts == 1)
        #expect(fixture.server.requestsServed == 1)
    }

    @Test func aTimeoutIsNotRetried() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session(configure: Self.retrying(3))
        defer { session.shutdown() }
        let request = Request(url: fixture.url("/slow/5000"), timeout: .milliseconds(300))
        let error = await outcome { try await session.data(for: request) }.sessionError
        #expect(error?.code == .timedOut)
        #expect(error?.attempts == 1)
        #expect(fixture.server.requestsServed == 1)
    }

    @Test func aRefusedConnectionIsRetriedUpToTheMaximum() async throws {
        let fixture = try SessionFixture()
        let refusing = try RefusingLoopbackPort()
        defer { withExtendedLifetime(refusing) {} }
        let closedPort = refusing.port
        let logs = CapturedLogs()
        let session = try fixture.session {
            Self.retrying(2, logs: logs)(&$0)
            $0.resolve = ["\(SessionFixture.host):\(closedPort):127.0.0.1"]
        }
        defer { session.shutdown() }
        let error = await outcome { try await session.get("https://\(SessionFixture.host):\(closedPort)/") }.sessionError
        #expect(error?.code == .transferFailed)
        #expect(error?.curlCode == 7)  // CURLE_COULDNT_CONNECT
        #expect(error?.attempts == 3)
        #expect(logs.at(.notice).filter { $0.message.hasPrefix("Retrying") }.count == 2)
    }

    /// Third review, finding 4: the retry's log line names the host, not the URL's
    /// credentials or token.
    @Test func finding4TheRetryLogLineCarriesNoUserInfoOrQuery() async throws {
        let fixture = try SessionFixture()
        let logs = CapturedLogs()
        let session = try fixture.session { Self.retrying(1, logs: logs)(&$0) }
        defer { session.shutdown() }
        // Port 1 on loopback: nothing listens, so the connection is refused at once.
        let error = await outcome { try await session.get("https://user:pw@127.0.0.1:1/p?access_token=SECRET") }.sessionError
        #expect(error?.attempts == 2)
        let retry = try #require(logs.at(.notice).first { $0.message.hasPrefix("Retrying") })
        #expect(retry.metadata["host"] == "127.0.0.1")
        for record in logs.all {
            #expect(!record.description.contains("pw"), "\(record)")
            #expect(!record.description.contains("SECRET"), "\(record)")
        }
    }

    @Test func onlyTheConfiguredFailuresAreRetried() async throws {
        let fixture = try SessionFixture()
        fixture.server.setHandler(LocalHTTPHandlers.dropping(first: -1))
        let session = try fixture.session {
            $0.retryPolicy = Session.RetryPolicy(maximumRetries: 3, failures: [.connectionRefused])
        }
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/status/200").absoluteString) }.sessionError
        #expect(error?.curlCode == 52)
        #expect(error?.attempts == 1)
        #expect(fixture.server.requestsServed == 1)
    }

    @Test func eachRedirectHopIsRetriedOnItsOwn() async throws {
        let fixture = try SessionFixture()
        let target = fixture.url("/status/200").absoluteString
        let drop = LocalHTTPHandlers.dropping(first: 2, path: "/status/200")
        fixture.server.setHandler { request in
            // The redirect closes its connection, so the next hop's first attempt opens a new
            // one (libcurl resends once by itself a request whose *reused* connection was dead).
            guard request.path == "/hop" else { return drop(request) }
            return LocalHTTPResponse(status: 302, headers: [("Location", target)], closesConnection: true)
        }
        let session = try fixture.session(configure: Self.retrying(3))
        defer { session.shutdown() }
        let response = try await session.get(fixture.url("/hop").absoluteString)
        #expect(response.status == 200)
        #expect(response.hopAttempts == [1, 3])
        #expect(response.attempts == 3)
    }

    @Test func aStreamedResponseIsRetriedBeforeItsHead() async throws {
        let fixture = try SessionFixture()
        fixture.server.setHandler(LocalHTTPHandlers.dropping(first: 1))
        let session = try fixture.session(configure: Self.retrying(3))
        defer { session.shutdown() }
        let response = try await session.stream(Request(url: fixture.url("/large/1000")))
        #expect(response.attempts == 2)
        #expect(try await response.body.collect(upTo: 10_000).count == 1000)
    }

    /// The limit only stops a regression from hanging the run for the hour-long backoff; it is
    /// generous because the first attempt alone can take a minute on a loaded machine.
    @Test(.timeLimit(.minutes(5)))
    func cancellingDuringTheBackoffEndsTheRequestWithCancelled() async throws {
        let fixture = try SessionFixture()
        fixture.server.setHandler(LocalHTTPHandlers.dropping(first: -1))
        let (backoffStarted, started) = AsyncStream<Void>.makeStream()
        let session = try fixture.session {
            // An hour's wait: only cancellation ends it within the test's time limit.
            $0.retryPolicy = Session.RetryPolicy(maximumRetries: 3, baseDelay: .seconds(3600), maximumDelay: .seconds(3600), jitter: .equal)
            $0.retryRandom = {
                started.yield()
                return 0.5
            }
        }
        defer { session.shutdown() }
        let task = Task {
            // A first attempt that fails in a way never retried ends the wait below, too.
            defer { started.finish() }
            return try await session.get(fixture.url("/status/200").absoluteString)
        }
        for await _ in backoffStarted { break }
        task.cancel()
        let error = await outcome { try await task.value }.sessionError
        #expect(error?.code == .cancelled)
        #expect(error?.attempts == 1)
        #expect(fixture.server.requestsServed == 1)
    }

    @Test func aPolicyOutOfRangeIsRejectedNamingTheField() throws {
        let cases: [(Session.RetryPolicy, String)] = [
            (Session.RetryPolicy(maximumRetries: -1), "retryPolicy.maximumRetries"),
            (Session.RetryPolicy(baseDelay: .zero), "retryPolicy.baseDelay"),
            (Session.RetryPolicy(baseDelay: .seconds(-1)), "retryPolicy.baseDelay"),
            (Session.RetryPolicy(maximumDelay: .zero), "retryPolicy.maximumDelay"),
            (Session.RetryPolicy(baseDelay: .seconds(3), maximumDelay: .seconds(2)), "retryPolicy.maximumDelay"),
        ]
        for (policy, field) in cases {
            var configuration = Session.Configuration()
            configuration.retryPolicy = policy
            let error = #expect(throws: SessionError.self) { try Session(configuration: configuration) }
            #expect(error?.code == .invalidRequest)
            #expect(error?.reason.hasPrefix(field) == true, "\(String(describing: error))")
        }
    }
}

/// A loopback port that refuses connections for as long as this object lives: a socket bound to
/// it but never listening, so the kernel answers every SYN with a reset, and no other server of
/// the test process can take the port meanwhile (a closed port could be handed out again).
final class RefusingLoopbackPort {
    let port: Int
    private let fd: Int32

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        if !bound { close(fd) }
        try #require(bound)
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }
}
