import Foundation
import HTTPTypes
import Testing
@testable import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// Streamed and file request bodies (`Request.Body`): framing, method, back-pressure, failures,
/// cancellation, redirects, and the trust guard before the first body byte.
@Suite(.timeLimit(.minutes(5))) struct StreamedUploadTests {
    private func fixture() throws -> SessionFixture {
        let fixture = try SessionFixture()
        fixture.server.setHandler(uploadSinkHandler)
        return fixture
    }

    @Test func a32MiBStreamOfUnknownLengthArrivesIntactChunkedWithBoundedBuffering() async throws {
        let fixture = try fixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        let body = GeneratedChunks(count: 512, chunkSize: 64 << 10)
        let clock = ContinuousClock()
        let started = clock.now
        let response = try await session.data(for: Request(method: .put, url: fixture.url("/sink"), uploadBody: .stream(body)))
        // A figure for the report, never asserted.
        print("StreamedUploadTests: 32 MiB streamed in \(clock.now - started); peak buffered \(session.probe.peakBufferedUploadBytes) bytes")
        #expect(response.status == 200)
        #expect(response.header("X-Received-Method") == "PUT")
        #expect(response.header("X-Received-Transfer-Encoding") == "chunked")
        #expect(response.header("X-Received-Content-Length") == "none")
        #expect(response.header("X-Received-Expect") == "none")
        #expect(response.header("X-Body-Length") == "\(32 << 20)")
        #expect(response.header("X-Body-SHA256") == hex(sha256(body.allBytes)))
        // Back-pressure: the session never held more than its limit plus one chunk.
        #expect(session.probe.peakBufferedUploadBytes > 0)
        #expect(session.probe.peakBufferedUploadBytes <= UploadStream.bufferLimit + body.chunkSize)
        #expect(session.probe.uploadProducersStarted == 1)
    }

    @Test func aStreamOfKnownLengthSendsContentLengthWithTheRequestedMethod() async throws {
        let fixture = try fixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        let body = GeneratedChunks(count: 40, chunkSize: 10_007)
        for method in ["POST", "PUT", "PATCH"] {
            let response = try await session.data(
                for: Request(method: try #require(HTTPRequest.Method(method)), url: fixture.url("/sink"), uploadBody: .stream(body, length: body.totalBytes)))
            #expect(response.header("X-Received-Method") == method)
            #expect(response.header("X-Received-Content-Length") == "\(body.totalBytes)")
            #expect(response.header("X-Received-Transfer-Encoding") == "none")
            #expect(response.header("X-Body-SHA256") == hex(sha256(body.allBytes)))
        }
        let chunkedPost = try await session.data(for: Request(method: .post, url: fixture.url("/sink"), uploadBody: .stream(body)))
        #expect(chunkedPost.header("X-Received-Method") == "POST")
        #expect(chunkedPost.header("X-Received-Transfer-Encoding") == "chunked")
        #expect(chunkedPost.header("X-Body-SHA256") == hex(sha256(body.allBytes)))
        // The reused easy handle carries nothing of the uploads into the next requests.
        let get = try await session.get(fixture.url("/echo").absoluteString)
        #expect(get.header("X-Echo-Method") == "GET")
        #expect(get.header("X-Echo-Request")?.contains("\"bodyLength\":0") == true)
        let post = try await session.post(fixture.url("/echo").absoluteString, body: Array("small".utf8))
        #expect(post.header("X-Echo-Method") == "POST")
        #expect(post.text == "small")
        #expect(session.probe.easyHandlesMade == 1)
    }

    @Test func aFileBodyArrivesIntactWithItsLengthAndAMissingFileFailsBeforeAnythingIsSent() async throws {
        let fixture = try fixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        let body = GeneratedChunks(count: 48, chunkSize: 65_537)
        let file = try patternFile(body)
        defer { try? FileManager.default.removeItem(at: file) }
        let response = try await session.data(for: Request(method: .put, url: fixture.url("/sink"), uploadBody: .file(file)))
        #expect(response.header("X-Received-Content-Length") == "\(body.totalBytes)")
        #expect(response.header("X-Received-Transfer-Encoding") == "none")
        #expect(response.header("X-Body-SHA256") == hex(sha256(body.allBytes)))
        #expect(session.probe.peakBufferedUploadBytes <= UploadStream.bufferLimit + 64 << 10)

        let connections = fixture.server.acceptedConnections
        let missing = file.appendingPathExtension("missing")
        let error = await outcome { try await session.data(for: Request(method: .put, url: fixture.url("/sink"), uploadBody: .file(missing))) }
            .sessionError
        #expect(error?.code == .uploadFailed)
        #expect(error?.reason.contains(missing.path) == true)
        #expect(error?.reason.contains("No such file") == true)
        #expect(fixture.server.requestsServed == 1)
        #expect(fixture.server.acceptedConnections == connections)
    }

    @Test func aStreamThatThrowsFailsTheRequestWithUploadFailed() async throws {
        let fixture = try fixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        let probe = UploadProbe()
        let failing = GeneratedChunks(count: 100, chunkSize: 64 << 10, failAfter: 20, probe: probe)
        let error = await outcome { try await session.data(for: Request(method: .put, url: fixture.url("/sink"), uploadBody: .stream(failing))) }
            .sessionError
        #expect(error?.code == .uploadFailed)
        #expect(error?.reason == "Reading the request body stream failed: the test's body source broke")
        #expect(error?.curlCode == 42)  // CURLE_ABORTED_BY_CALLBACK: the read callback aborted
        #expect(probe.produced == 20 * (64 << 10))

        let short = GeneratedChunks(count: 3, chunkSize: 1000)
        let shortError = await outcome {
            try await session.data(for: Request(method: .put, url: fixture.url("/sink"), uploadBody: .stream(short, length: 5000)))
        }.sessionError
        #expect(shortError?.code == .uploadFailed)
        #expect(shortError?.reason.contains("ended after 3000 of its declared 5000 bytes") == true)

        let long = await outcome {
            try await session.data(for: Request(method: .put, url: fixture.url("/sink"), uploadBody: .stream(short, length: 2500)))
        }.sessionError
        #expect(long?.code == .uploadFailed)
        #expect(long?.reason.contains("more than its declared length of 2500 bytes") == true)
        #expect(fixture.server.requestsServed == 0)
    }

    @Test func cancellingMidUploadEndsWithCancelledAndStopsTheProducer() async throws {
        let fixture = try fixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        let probe = UploadProbe()
        let body = GeneratedChunks(count: 1000, chunkSize: 64 << 10, holdAfter: 64, probe: probe)
        let task = Task { try await session.data(for: Request(method: .put, url: fixture.url("/sink"), uploadBody: .stream(body))) }
        await probe.waitUntilHeld()
        task.cancel()
        let error = await outcome { try await task.value }.sessionError
        #expect(error?.code == .cancelled)
        // The producer's task was cancelled: the stream's wait ended and its iterator was released.
        await probe.waitUntilReleased()
        #expect(probe.produced == 64 * (64 << 10))
        #expect(session.probe.activeTransfers == 0)
    }

    @Test func aRedirectKeepingTheBodyFailsForAStreamResendsAFileAndA303DropsIt() async throws {
        let fixture = try fixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        let sink = fixture.url("/sink").absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let body = GeneratedChunks(count: 20, chunkSize: 50_000)

        for code in [307, 308, 302] {  // 302 keeps a PUT and its body
            let error = await outcome {
                try await session.data(for: Request(method: .put, url: fixture.url("/redirect/\(code)?to=\(sink)"), uploadBody: .stream(body)))
            }.sessionError
            #expect(error?.code == .bodyNotReplayable)
            #expect(error?.reason.contains("\(code) redirect") == true)
        }
        #expect(fixture.server.recentRequests.allSatisfy { $0.path.hasPrefix("/redirect/") })

        let file = try patternFile(body)
        defer { try? FileManager.default.removeItem(at: file) }
        let resent = try await session.data(for: Request(method: .put, url: fixture.url("/redirect/307?to=\(sink)"), uploadBody: .file(file)))
        #expect(resent.hops.count == 2)
        #expect(resent.header("X-Received-Method") == "PUT")
        #expect(resent.header("X-Body-SHA256") == hex(sha256(body.allBytes)))
        #expect(fixture.server.recentRequests.suffix(2).map(\.body.count) == [body.totalBytes, body.totalBytes])

        let seeOther = try await session.data(for: Request(method: .post, url: fixture.url("/redirect/303?to=\(sink)"), uploadBody: .stream(body)))
        #expect(seeOther.header("X-Received-Method") == "GET")
        #expect(seeOther.header("X-Body-Length") == "0")
    }

    @Test func aRejectedServerNeverStartsTheProducer() async throws {
        let fixture = try fixture()
        let session = try fixture.session([SessionFixture.host: try PinnedKeyHashesTrustEvaluator(pins: [SessionFixture.unrelatedPin])])
        defer { session.shutdown() }
        let probe = UploadProbe()
        let body = GeneratedChunks(count: 10, chunkSize: 1000, probe: probe)
        let error = await outcome { try await session.data(for: Request(method: .post, url: fixture.url("/sink"), uploadBody: .stream(body))) }
            .sessionError
        #expect(error?.code == .trustEvaluationFailed)
        #expect(error?.trustError?.code == .pinMismatch)
        #expect(probe.nextCalls == 0)
        #expect(session.probe.uploadProducersStarted == 0)
        #expect(fixture.server.requestsServed == 0)
    }

    /// The connection guard's path: a kept-alive connection opened under the session's policy is
    /// re-evaluated under the request's own pins before the request goes out, and refused.
    @Test func aConnectionTheGuardRefusesNeverStartsTheProducer() async throws {
        let fixture = try fixture()
        let session = try fixture.session { $0.maximumConnectionsPerHost = 1 }
        defer { session.shutdown() }
        _ = try await session.get(fixture.url("/status/200").absoluteString)
        let probe = UploadProbe()
        let body = GeneratedChunks(count: 10, chunkSize: 1000, probe: probe)
        let wrongPins = try PinnedKeyHashesTrustEvaluator(pins: [SessionFixture.unrelatedPin])
        let error = await outcome {
            try await session.data(for: Request(method: .put, url: fixture.url("/sink"), uploadBody: .stream(body), trustEvaluator: wrongPins))
        }.sessionError
        #expect(error?.code == .trustEvaluationFailed)
        #expect(error?.trustError?.code == .pinMismatch)
        #expect(fixture.server.acceptedConnections == 1)  // refused on the reused connection, by the guard
        #expect(probe.nextCalls == 0)
        #expect(session.probe.uploadProducersStarted == 0)
        #expect(fixture.server.requestsServed == 1)
    }

    @Test func tinyChunksAndDataElementsFromAnAsyncThrowingStreamArriveInOrder() async throws {
        let fixture = try fixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        // 200 000 chunks of 5 bytes: many chunks per read, and the buffer's compaction.
        let tiny = GeneratedChunks(count: 200_000, chunkSize: 5)
        let response = try await session.data(for: Request(method: .post, url: fixture.url("/sink"), uploadBody: .stream(tiny)))
        #expect(response.header("X-Body-SHA256") == hex(sha256(tiny.allBytes)))

        let expected = GeneratedChunks(count: 64, chunkSize: 30_011).allBytes
        let (chunks, continuation) = AsyncThrowingStream.makeStream(of: Data.self)
        let feeder = Task {
            var offset = 0
            while offset < expected.count {
                let end = min(offset + 30_011, expected.count)
                continuation.yield(Data(expected[offset..<end]))
                offset = end
            }
            continuation.finish()
        }
        defer { feeder.cancel() }
        let fromData = try await session.data(for: Request(method: .put, url: fixture.url("/sink"), uploadBody: .stream(chunks, length: expected.count)))
        #expect(fromData.header("X-Received-Content-Length") == "\(expected.count)")
        #expect(fromData.header("X-Body-SHA256") == hex(sha256(expected)))
    }

    /// A retry policy that ignored `isReplayable` could not send a one-shot sequence short or
    /// empty: the same stream body is refused the second time, before anything is sent.
    @Test func theSameStreamBodySentTwiceIsRefusedTheSecondTime() async throws {
        let fixture = try fixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        let probe = UploadProbe()
        let chunks = GeneratedChunks(count: 4, chunkSize: 1000, probe: probe)
        let request = Request(method: .put, url: fixture.url("/sink"), uploadBody: .stream(chunks))
        let first = try await session.data(for: request)
        #expect(first.header("X-Body-Length") == "4000")
        let connections = fixture.server.acceptedConnections
        let error = await outcome { try await session.data(for: request) }.sessionError
        #expect(error?.code == .bodyNotReplayable)
        #expect(error?.reason.contains("already read") == true)
        #expect(probe.produced == 4000)
        #expect(fixture.server.requestsServed == 1)
        #expect(fixture.server.acceptedConnections == connections)
    }

    @Test func replayability() {
        #expect(Request.Body.bytes([1]).isReplayable)
        #expect(Request.Body.file(URL(fileURLWithPath: "/tmp/x")).isReplayable)
        #expect(!Request.Body.stream(GeneratedChunks(count: 1, chunkSize: 1)).isReplayable)
        var request = Request(method: .put, url: URL(string: "https://a.test/")!, uploadBody: .stream(GeneratedChunks(count: 1, chunkSize: 1)))
        #expect(request.body == nil)
        request.body = [7]
        #expect(request.uploadBody?.bytes == [7])
    }
}
