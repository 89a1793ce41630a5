import Foundation
import HTTPTypes
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// Concurrency, cancellation, timeouts, limits and streaming.
@Suite struct SessionBehaviourTests {
    @Test func twoHundredConcurrentRequestsCompleteOverABoundedNumberOfConnections() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session {
            $0.maximumConnectionsPerHost = 4
            $0.httpVersion = .http1_1
        }
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<200 {
                group.addTask { try await session.get(fixture.url("/status/\(200 + index % 3)").absoluteString).status.code }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.count == 200)
        #expect(Set(statuses) == [200, 201, 202])
        #expect(fixture.server.acceptedConnections <= 4)
        #expect(session.probe.activeTransfers == 0)
        session.shutdown()
        // Shutting down closes every cached connection: nothing is left open on the server.
        for _ in 0..<50 where fixture.server.openConnections > 0 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(fixture.server.openConnections == 0)
    }

    @Test func cancellingTheTaskCancelsTheTransfer() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        let task = Task { try await session.get(fixture.url("/slow/10000").absoluteString) }
        try await Task.sleep(for: .milliseconds(200))
        task.cancel()
        let error = await outcome { try await task.value }.sessionError
        #expect(error?.code == .cancelled)
        #expect(session.probe.activeTransfers == 0)
    }

    @Test func aRequestThatOutlivesItsTimeoutFailsWithTimedOut() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session { $0.requestTimeout = .milliseconds(300) }
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/slow/5000").absoluteString) }.sessionError
        #expect(error?.code == .timedOut)
        #expect(error?.curlCode == 28)  // CURLE_OPERATION_TIMEDOUT
    }

    @Test func aBodyOverTheLimitFailsWithResponseTooLarge() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session { $0.maximumResponseBodySize = 1000 }
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/large/5000").absoluteString) }.sessionError
        #expect(error?.code == .responseTooLarge)
        let small = try await session.get(fixture.url("/large/1000").absoluteString)
        #expect(small.body.count == 1000)
    }

    @Test func aLargeDownloadStreamsInChunksWithItsTrustReportUpFront() async throws {
        let fixture = try SessionFixture()
        // No time limit to race: the test is about chunking and back-pressure, and under a
        // sanitizer on a loaded machine 6 MiB through a slow reader can take many seconds.
        let session = try fixture.session([SessionFixture.host: try PinnedKeyHashesTrustEvaluator(pins: [fixture.leafPin])]) {
            $0.requestTimeout = nil
        }
        defer { session.shutdown() }
        let size = 6 << 20
        let expected = LocalHTTPResponse.Body.patternBytes(count: size)
        let response = try await session.stream(Request(url: fixture.url("/large/\(size)")))
        #expect(response.status == 200)
        #expect(response.trust.evaluator == "PinnedKeyHashesTrustEvaluator")
        var received = 0
        var chunks = 0
        var intact = true
        for try await chunk in response.body {
            guard received + chunk.count <= size else {
                intact = false
                break
            }
            let matches = chunk.withUnsafeBytes { got in
                expected.withUnsafeBytes { want in memcmp(got.baseAddress!, want.baseAddress! + received, chunk.count) == 0 }
            }
            if !matches { intact = false }
            received += chunk.count
            chunks += 1
            if chunks == 1 { try await Task.sleep(for: .milliseconds(300)) }  // a slow consumer: the transfer pauses
        }
        #expect(received == size)
        #expect(chunks > 1)
        #expect(intact)
    }

    @Test func aStreamRejectedByTrustThrowsBeforeAnyByte() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session([SessionFixture.host: try PinnedKeyHashesTrustEvaluator(pins: [SessionFixture.unrelatedPin])])
        defer { session.shutdown() }
        let error = await outcome { try await session.stream(Request(url: fixture.url("/large/100000"))) }.sessionError
        #expect(error?.trustError?.code == .pinMismatch)
    }

    @Test func requestsAfterShutdownFail() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session()
        session.shutdown()
        let error = await outcome { try await session.get(fixture.url("/").absoluteString) }.sessionError
        #expect(error?.code == .sessionShutDown)
    }

    @Test func withSessionShutsTheSessionDown() async throws {
        let fixture = try SessionFixture()
        let (escaped, status) = try await withSession(configuration: try fixture.configuration()) { session throws -> (Session, Int) in
            (session, try await session.get(fixture.url("/status/200").absoluteString).status.code)
        }
        #expect(status == 200)
        let error = await outcome { try await escaped.get(fixture.url("/").absoluteString) }.sessionError
        #expect(error?.code == .sessionShutDown)
    }

    /// A header value cannot smuggle in a second field. With `String` headers the session
    /// refused a value with a line break; an `HTTPField` cannot hold one (CR and LF become
    /// spaces when it is made), so what is checked now is the wire: one `X-Evil` field, no
    /// `Injected` field.
    @Test func aHeaderWithALineBreakCannotInjectAField() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        let evil = try #require(HTTPField.Name("X-Evil"))
        let response = try await session.data(for: Request(url: fixture.url("/headers"), headers: [evil: "a\r\nInjected: yes"]))
        #expect(response.status == 200)
        #expect(response.text.contains("X-Evil: a  Injected: yes\n"), "\(response.text)")
        #expect(!response.text.contains("\nInjected"), "\(response.text)")
        let received = try #require(fixture.server.recentRequests.last)
        #expect(received.header("Injected") == nil)
        #expect(received.headers.filter { $0.name == "X-Evil" }.count == 1)
    }
}
