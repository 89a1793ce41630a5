import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// Streamed and file bodies for a host with a signed-response policy: the request signature
/// covers the body's digest, so the session reads the body into memory first, up to
/// `maximumSignedRequestBodySize`, and refuses a larger one before connecting.
@Suite(.timeLimit(.minutes(5))) struct SignedUploadTests {
    private func signedFixture() throws -> (SessionFixture, SigningKeys) {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        // The signature covers the body the server received; the reply names its length.
        fixture.serveSigned(keys) { request in SignedReply(body: "got \(request.body.count) bytes") }
        return (fixture, keys)
    }

    @Test func aStreamOrFileWithinTheLimitIsBufferedSignedAndVerified() async throws {
        let (fixture, keys) = try signedFixture()
        let session = try fixture.signingSession([SessionFixture.host: .enforced(roots: keys.roots)]) {
            $0.maximumSignedRequestBodySize = 256 << 10
        }
        defer { session.shutdown() }
        let body = GeneratedChunks(count: 4, chunkSize: 64 << 10)  // exactly the limit
        let streamed = try await session.data(for: Request(method: .post, url: fixture.url("/v1/upload"), uploadBody: .stream(body)))
        #expect(streamed.verification == .verified)
        #expect(streamed.text == "got \(body.totalBytes) bytes")
        let sent = try #require(fixture.server.recentRequests.last)
        #expect(sent.header("Content-Length") == "\(body.totalBytes)")  // sent from memory
        #expect(sent.body == body.allBytes)
        #expect(session.probe.uploadProducersStarted == 0)  // buffered before the request, not uploaded by a producer

        let file = try patternFile(body)
        defer { try? FileManager.default.removeItem(at: file) }
        let filed = try await session.data(for: Request(method: .put, url: fixture.url("/v1/upload"), uploadBody: .file(file)))
        #expect(filed.verification == .verified)
        #expect(filed.text == "got \(body.totalBytes) bytes")
    }

    /// Once buffered for signing the body is bytes, so a 307 resends it (a stream could not be).
    @Test func aBufferedStreamIsResentOnA307AndBothHopsAreVerified() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        fixture.serveSigned(keys) { request in
            request.path == "/v1/moved"
                ? SignedReply(status: 307, body: "moved\n", headers: [("Location", "/v1/upload")])
                : SignedReply(body: "got \(request.body.count) bytes")
        }
        let session = try fixture.signingSession([SessionFixture.host: .enforced(roots: keys.roots)])
        defer { session.shutdown() }
        let body = GeneratedChunks(count: 3, chunkSize: 10_000)
        let response = try await session.data(for: Request(method: .post, url: fixture.url("/v1/moved"), uploadBody: .stream(body)))
        #expect(response.status == 200)
        #expect(response.hopVerifications == [.verified, .verified])
        #expect(response.text == "got \(body.totalBytes) bytes")
        #expect(fixture.server.recentRequests.map(\.path) == ["/v1/moved", "/v1/upload"])
        #expect(fixture.server.recentRequests.map(\.body) == [body.allBytes, body.allBytes])
    }

    @Test func aStreamOrFileOverTheLimitIsRefusedBeforeAnythingIsSent() async throws {
        let (fixture, keys) = try signedFixture()
        let session = try fixture.signingSession([SessionFixture.host: .enforced(roots: keys.roots)]) {
            $0.maximumSignedRequestBodySize = 256 << 10
        }
        defer { session.shutdown() }
        let probe = UploadProbe()
        let body = GeneratedChunks(count: 5, chunkSize: 64 << 10, probe: probe)
        let error = await outcome { try await session.data(for: Request(method: .post, url: fixture.url("/v1/upload"), uploadBody: .stream(body))) }
            .sessionError
        #expect(error?.code == .requestBodyTooLarge)
        #expect(error?.reason.contains("maximumSignedRequestBodySize (262144 bytes)") == true)
        #expect(probe.produced == 5 * (64 << 10))  // read up to the chunk that crossed the limit, no further

        let known = await outcome {
            try await session.data(for: Request(method: .post, url: fixture.url("/v1/upload"), uploadBody: .stream(body, length: body.totalBytes)))
        }.sessionError
        #expect(known?.code == .requestBodyTooLarge)

        let file = try patternFile(body)
        defer { try? FileManager.default.removeItem(at: file) }
        let filed = await outcome { try await session.data(for: Request(method: .put, url: fixture.url("/v1/upload"), uploadBody: .file(file))) }
            .sessionError
        #expect(filed?.code == .requestBodyTooLarge)
        #expect(filed?.reason.contains("\(body.totalBytes) bytes exceed") == true)
        #expect(fixture.server.acceptedConnections == 0)
    }

    @Test func aHostWithoutASignedPolicyStreamsPastTheLimit() async throws {
        let (fixture, keys) = try signedFixture()
        let session = try fixture.signingSession(["other.servertrust.test": .enforced(roots: keys.roots)]) {
            $0.maximumSignedRequestBodySize = 64 << 10
        }
        defer { session.shutdown() }
        let body = GeneratedChunks(count: 8, chunkSize: 64 << 10)
        let response = try await session.data(for: Request(method: .post, url: fixture.url("/v1/upload"), uploadBody: .stream(body)))
        #expect(response.verification == .notRequested)
        #expect(response.text == "got \(body.totalBytes) bytes")
        #expect(fixture.server.recentRequests.last?.header("Transfer-Encoding") == "chunked")
        #expect(session.probe.uploadProducersStarted == 1)
    }
}
