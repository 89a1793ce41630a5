import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// `Configuration.contentDecoding` against a `LocalTLSServer` whose handler sends bodies
/// compressed with zlib: libcurl decodes for an unsigned host; for a signed-response host the
/// session verifies the bytes as received, then decodes them itself.
@Suite struct ContentDecodingTests {
    static let host = SessionFixture.host
    /// Compressible text, about 12 KB.
    static let original = Array((1...200).map { "line \($0): the quick brown fox jumps over the lazy dog\n" }.joined().utf8)

    /// `original` gzipped, and a copy with one byte in the middle flipped (what a tampering hop
    /// sends after the server signed the genuine bytes).
    static func gzipWithOneByteFlipped() -> (genuine: [UInt8], tampered: [UInt8]) {
        let genuine = TestCompression.compress(original, as: .gzip)
        var tampered = genuine
        tampered[genuine.count / 2] ^= 0xFF
        return (genuine, tampered)
    }
    /// 64 MiB of zeros, gzip-compressed to about 64 KiB.
    static let bomb = TestCompression.gzipBomb(decodedSize: 64 << 20)

    /// Serves `original` compressed as the path says: `/gzip`, `/x-gzip`, `/deflate` (zlib),
    /// `/raw-deflate`, `/identity`, `/plain` (no Content-Encoding).
    private func serveCompressed(_ fixture: SessionFixture) {
        let original = Self.original
        fixture.server.setHandler { request in
            let (coding, bytes): (String?, [UInt8])
            switch request.path {
            case "/gzip": (coding, bytes) = ("gzip", TestCompression.compress(original, as: .gzip))
            case "/x-gzip": (coding, bytes) = ("x-gzip", TestCompression.compress(original, as: .gzip))
            case "/deflate": (coding, bytes) = ("deflate", TestCompression.compress(original, as: .zlib))
            case "/raw-deflate": (coding, bytes) = ("deflate", TestCompression.compress(original, as: .rawDeflate))
            case "/identity": (coding, bytes) = ("identity", original)
            case "/plain": (coding, bytes) = (nil, original)
            default: return nil
            }
            return LocalHTTPResponse(headers: coding.map { [("Content-Encoding", $0)] } ?? [], body: .bytes(bytes))
        }
    }

    /// Serves `body` with `Content-Encoding: coding` on every request.
    private func serve(_ fixture: SessionFixture, coding: String, body: [UInt8]) {
        fixture.server.setHandler { _ in LocalHTTPResponse(headers: [("Content-Encoding", coding)], body: .bytes(body)) }
    }

    private var sentAcceptEncoding: (SessionFixture) -> [String] {
        { $0.server.recentRequests.last?.headers(named: "Accept-Encoding") ?? ["(no request)"] }
    }

    // MARK: libcurl decodes (no signed-response policy)

    @Test(arguments: [("/gzip", ContentCoding.gzip), ("/x-gzip", .gzip), ("/deflate", .deflate), ("/raw-deflate", .deflate)])
    func gzipAndDeflateBodiesAreDecodedToTheOriginal(path: String, coding: ContentCoding) async throws {
        let fixture = try SessionFixture()
        serveCompressed(fixture)
        let session = try fixture.session { $0.contentDecoding = [.gzip, .deflate] }
        defer { session.shutdown() }
        let response = try await session.get(fixture.url(path).absoluteString)
        #expect(response.body == Self.original)
        #expect(response.decodedContentEncodings == [coding])
        #expect(response.header("Content-Encoding") == (path == "/x-gzip" ? "x-gzip" : coding.name))  // kept as received
        #expect(sentAcceptEncoding(fixture) == ["gzip, deflate"])
    }

    @Test func acceptEncodingListsTheConfiguredCodingsInOrderOnce() async throws {
        let fixture = try SessionFixture()
        serveCompressed(fixture)
        let session = try fixture.session { $0.contentDecoding = [.deflate, .gzip, .deflate] }
        defer { session.shutdown() }
        _ = try await session.get(fixture.url("/gzip").absoluteString)
        #expect(sentAcceptEncoding(fixture) == ["deflate, gzip"])
    }

    @Test func identityOrNoContentEncodingPassesThroughAsDecodedNothing() async throws {
        let fixture = try SessionFixture()
        serveCompressed(fixture)
        let session = try fixture.session { $0.contentDecoding = [.gzip] }
        defer { session.shutdown() }
        for path in ["/identity", "/plain"] {
            let response = try await session.get(fixture.url(path).absoluteString)
            #expect(response.body == Self.original)
            #expect(response.decodedContentEncodings.isEmpty)
        }
    }

    @Test func withDecodingOffNoAcceptEncodingIsSentAndTheBodyIsReturnedAsReceived() async throws {
        let fixture = try SessionFixture()
        serveCompressed(fixture)
        let session = try fixture.session()
        defer { session.shutdown() }
        let response = try await session.get(fixture.url("/gzip").absoluteString)
        #expect(sentAcceptEncoding(fixture).isEmpty)
        #expect(response.body == TestCompression.compress(Self.original, as: .gzip))
        #expect(response.header("Content-Encoding") == "gzip")
        #expect(response.decodedContentEncodings.isEmpty)
    }

    /// The per-request override, on one reused easy handle: each request sets its own
    /// `Accept-Encoding` and decoding, so nothing of the one before carries over.
    @Test func theRequestOverrideWinsAndNothingCarriesOverOnAReusedHandle() async throws {
        let fixture = try SessionFixture()
        serveCompressed(fixture)
        let session = try fixture.session { $0.contentDecoding = [.gzip] }
        defer { session.shutdown() }
        let url = fixture.url("/gzip")
        let decoded = try await session.data(for: Request(url: url))
        #expect(decoded.body == Self.original)
        #expect(sentAcceptEncoding(fixture) == ["gzip"])
        let off = try await session.data(for: Request(url: url, contentDecoding: []))
        #expect(sentAcceptEncoding(fixture).isEmpty)
        #expect(off.body == TestCompression.compress(Self.original, as: .gzip))
        #expect(off.decodedContentEncodings.isEmpty)
        let deflateOnly = try await session.data(for: Request(url: url, contentDecoding: [.deflate]))
        #expect(sentAcceptEncoding(fixture) == ["deflate"])
        #expect(deflateOnly.body == Self.original)  // libcurl decodes what it knows, asked or not
        #expect(session.easyHandlesMade == 1)
    }

    @Test func streamingYieldsDecodedChunks() async throws {
        let fixture = try SessionFixture()
        serveCompressed(fixture)
        let session = try fixture.session { $0.contentDecoding = [.gzip] }
        defer { session.shutdown() }
        let response = try await session.stream(Request(url: fixture.url("/gzip")))
        #expect(response.header("Content-Encoding") == "gzip")
        #expect(try await response.body.collect(upTo: 1 << 20) == Self.original)
    }

    @Test func aGzipBombIsStoppedByTheBodyLimitOnTheDecodedSize() async throws {
        let fixture = try SessionFixture()
        serve(fixture, coding: "gzip", body: Self.bomb)
        let session = try fixture.session {
            $0.contentDecoding = [.gzip]
            $0.maximumResponseBodySize = 1 << 20
        }
        defer { session.shutdown() }
        #expect(Self.bomb.count < 1 << 20)  // the body on the wire is within the limit
        let error = await outcome { try await session.get(fixture.url("/bomb").absoluteString) }.sessionError
        #expect(error?.code == .responseTooLarge)
        #expect(error?.reason.contains("\(1 << 20)-byte limit") == true)
        #expect(error?.curlCode == 23)  // CURLE_WRITE_ERROR: the write callback refused, libcurl stopped
    }

    @Test(arguments: ["gzip", "deflate"])
    func aGarbledBodyFailsWithContentDecodingFailed(coding: String) async throws {
        let fixture = try SessionFixture()
        var garbled = TestCompression.compress(Self.original, as: coding == "gzip" ? .gzip : .zlib)
        for index in stride(from: 12, to: garbled.count - 8, by: 7) { garbled[index] ^= 0x5A }
        serve(fixture, coding: coding, body: garbled)
        let session = try fixture.session { $0.contentDecoding = [.gzip, .deflate] }
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/garbled").absoluteString) }.sessionError
        #expect(error?.code == .contentDecodingFailed)
        #expect(error?.curlCode == 61)  // CURLE_BAD_CONTENT_ENCODING
    }

    @Test func anUnknownContentEncodingFailsClosed() async throws {
        let fixture = try SessionFixture()
        serve(fixture, coding: "compress", body: Self.original)
        let session = try fixture.session { $0.contentDecoding = [.gzip] }
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/compress").absoluteString) }.sessionError
        #expect(error?.code == .contentDecodingFailed)
        #expect(error?.reason.contains("compress") == true)
    }

    @Test func everyCodingTheRuntimeLibcurlReportsIsAccepted() throws {
        let codings = ContentCoding.supportedByLibcurl
        #expect(codings.prefix(2) == [.deflate, .gzip])
        var configuration = Session.Configuration()
        configuration.contentDecoding = codings
        let session = try Session(configuration: configuration)
        session.shutdown()
        for coding in [ContentCoding.brotli, .zstd] where !coding.isSupportedByLibcurl {
            configuration.contentDecoding = [coding]
            #expect(throws: SessionError.invalidRequest) { try Session(configuration: configuration) }
        }
    }

    // MARK: The session decodes after verifying (signed-response host)

    @Test(arguments: [SignedResponsePolicy.Mode.enforced, .informational])
    func aSignedCompressedBodyIsVerifiedOverTheBytesReceivedThenDecoded(mode: SignedResponsePolicy.Mode) async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        let compressed = TestCompression.compress(Self.original, as: .gzip)
        fixture.serveSigned(keys) { _ in
            var reply = SignedReply(body: "", headers: [("Content-Encoding", "gzip")])
            reply.body = compressed  // signed as sent: compressed
            return reply
        }
        let log = VerificationFailureLog()
        let session = try fixture.signingSession([Self.host: SignedResponsePolicy(mode: mode, roots: keys.roots)], log: log) {
            $0.contentDecoding = ContentCoding.supportedByLibcurl
        }
        defer { session.shutdown() }
        let response = try await session.get(fixture.url("/v1/report").absoluteString)
        #expect(response.verification == .verified)
        #expect(response.body == Self.original)
        #expect(response.decodedContentEncodings == [.gzip])
        #expect(log.failures.isEmpty)
        // Only what the session decodes itself is asked for, whatever else libcurl could do.
        #expect(sentAcceptEncoding(fixture) == ["deflate, gzip"])
    }

    @Test func aSignedRawDeflateBodyIsDecodedToo() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        let compressed = TestCompression.compress(Self.original, as: .rawDeflate)
        fixture.serveSigned(keys) { _ in
            var reply = SignedReply(body: "", headers: [("Content-Encoding", "deflate")])
            reply.body = compressed
            return reply
        }
        let session = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)]) { $0.contentDecoding = [.deflate] }
        defer { session.shutdown() }
        let response = try await session.get(fixture.url("/v1/report").absoluteString)
        #expect(response.verification == .verified)
        #expect(response.body == Self.original)
    }

    /// The bytes were altered after signing in a way that also breaks the gzip stream: the
    /// error is the signature's, so the body was judged before anything decoded it.
    @Test func aTamperedCompressedBodyFailsSignatureVerificationBeforeDecoding() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        let (compressed, tampered) = Self.gzipWithOneByteFlipped()
        fixture.serveSigned(keys) { _ in
            var reply = SignedReply(body: "", headers: [("Content-Encoding", "gzip")])
            reply.body = tampered
            reply.signedBody = compressed  // the server signed the genuine bytes; something flipped one after
            return reply
        }
        let session = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)]) { $0.contentDecoding = [.gzip] }
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/v1/report").absoluteString) }.sessionError
        #expect(error?.code == .responseSignatureInvalid)
        #expect(error?.signatureError?.code == .bodyMismatch)
    }

    @Test func aGzipBombFromASignedHostIsStoppedAfterVerification() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        let bomb = Self.bomb
        fixture.serveSigned(keys) { _ in
            var reply = SignedReply(body: "", headers: [("Content-Encoding", "gzip")])
            reply.body = bomb
            return reply
        }
        let session = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)]) {
            $0.contentDecoding = [.gzip]
            $0.maximumResponseBodySize = 1 << 20
        }
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/v1/bomb").absoluteString) }.sessionError
        #expect(error?.code == .responseTooLarge)
        #expect(error?.reason.contains("decoded response body") == true)
        #expect(error?.curlCode == 0)  // the session's decoder stopped, not libcurl
    }

    @Test func aGarbledOrTruncatedSignedBodyFailsWithContentDecodingFailed() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        let compressed = TestCompression.compress(Self.original, as: .gzip)
        var garbled = compressed
        for index in stride(from: 12, to: garbled.count - 8, by: 7) { garbled[index] ^= 0x5A }
        let bodies = ["/garbled": garbled, "/truncated": Array(compressed.dropLast(20)), "/trailing": compressed + [1, 2, 3]]
        fixture.serveSigned(keys) { request in
            var reply = SignedReply(body: "", headers: [("Content-Encoding", "gzip")])
            reply.body = bodies[request.path] ?? []
            return reply  // signed honestly: the server sent broken data
        }
        let session = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)]) { $0.contentDecoding = [.gzip] }
        defer { session.shutdown() }
        for path in bodies.keys.sorted() {
            let error = await outcome { try await session.get(fixture.url(path).absoluteString) }.sessionError
            #expect(error?.code == .contentDecodingFailed, "\(path)")
            #expect(error?.signatureError == nil, "\(path)")
            // The URL is spelled out only now, when the session's own decoder fails.
            #expect(error?.url == fixture.url(path).absoluteString, "\(path)")
        }
    }

    /// A coding the session did not ask for and cannot decode (`br`, which libcurl knows, or
    /// `compress`, which it does not) is refused, not handed out encoded as if it were the body.
    @Test(arguments: ["br", "compress"])
    func aSignedBodyInACodingTheSessionCannotDecodeFailsClosed(coding: String) async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        fixture.serveSigned(keys) { _ in SignedReply(body: "pretend \(coding)", headers: [("Content-Encoding", coding)]) }
        let session = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)]) { $0.contentDecoding = [.gzip] }
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/v1/coded").absoluteString) }.sessionError
        #expect(error?.code == .contentDecodingFailed)
        #expect(error?.reason.contains("\"\(coding)\"") == true)
        #expect(error?.curlCode == 0)  // the session refused it, after verification; libcurl did not decode
    }

    /// Informational mode returns a body whose signature failed, so it is still decoded; when it
    /// cannot be, the session throws, and the signature failure was reported first.
    @Test func informationalModeReportsTheSignatureFailureBeforeTheDecodingError() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        let (compressed, tampered) = Self.gzipWithOneByteFlipped()
        fixture.serveSigned(keys) { _ in
            var reply = SignedReply(body: "", headers: [("Content-Encoding", "gzip")])
            reply.body = tampered
            reply.signedBody = compressed
            return reply
        }
        let log = VerificationFailureLog()
        let session = try fixture.signingSession([Self.host: .informational(roots: keys.roots)], log: log) { $0.contentDecoding = [.gzip] }
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/v1/report").absoluteString) }.sessionError
        #expect(error?.code == .contentDecodingFailed)
        #expect(log.failures.map(\.error.code) == [.bodyMismatch])
    }

    @Test func aSignedHostWithDecodingOffGetsTheBodyAsSentAndNoAcceptEncoding() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        let compressed = TestCompression.compress(Self.original, as: .gzip)
        fixture.serveSigned(keys) { _ in
            var reply = SignedReply(body: "", headers: [("Content-Encoding", "gzip")])
            reply.body = compressed
            return reply
        }
        let session = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)])
        defer { session.shutdown() }
        let response = try await session.get(fixture.url("/v1/report").absoluteString)
        #expect(response.verification == .verified)
        #expect(response.body == compressed)
        #expect(response.decodedContentEncodings.isEmpty)
        #expect(sentAcceptEncoding(fixture).isEmpty)
    }
}
