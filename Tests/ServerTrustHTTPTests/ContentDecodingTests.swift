import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// `Configuration.contentDecoding` against a `LocalTLSServer` whose handler sends bodies
/// compressed with zlib: libcurl decodes for an unsigned host; a signed-response host's body is
/// verified and handed over as received, never decoded (third security review, finding 3).
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
        #expect(session.probe.easyHandlesMade == 1)
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

    // MARK: Third security review, finding 3: a signed host's body is never decoded

    /// v1 signatures cover the body bytes but not `Content-Encoding`: whatever coding the
    /// response names, a signature-checked host's body is handed over exactly as signed and
    /// received, nothing is asked for, and the coding is reported, in both modes.
    @Test(arguments: [SignedResponsePolicy.Mode.enforced, .informational], ["gzip", "deflate", "br", "compress"])
    func finding3ASignedHostsBodyIsHandedOverAsSignedWhateverContentEncodingSays(mode: SignedResponsePolicy.Mode, coding: String) async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        let sent = coding == "deflate" ? TestCompression.compress(Self.original, as: .rawDeflate) : TestCompression.compress(Self.original, as: .gzip)
        fixture.serveSigned(keys) { _ in
            var reply = SignedReply(body: "", headers: [("Content-Encoding", coding)])
            reply.body = sent
            return reply
        }
        let log = VerificationFailureLog()
        let session = try fixture.signingSession([Self.host: SignedResponsePolicy(mode: mode, roots: keys.roots)], log: log) {
            $0.contentDecoding = ContentCoding.supportedByLibcurl
        }
        defer { session.shutdown() }
        let response = try await session.get(fixture.url("/v1/report").absoluteString)
        #expect(response.verification == .verified)
        #expect(response.body == sent)
        #expect(response.decodedContentEncodings.isEmpty)
        #expect(response.undecodedContentEncodings == [coding])
        #expect(log.failures.isEmpty)
        #expect(sentAcceptEncoding(fixture).isEmpty)
    }

    /// The review's reproduction: the server signs gzip bytes it sends unlabelled (a `.gz` file,
    /// `Content-Type: application/gzip`); an intermediary adds `Content-Encoding: gzip`. The
    /// signature verifies either way (it does not cover the label), so the application must get
    /// the signed bytes, not their inflated content marked `verified`.
    @Test func finding3AContentEncodingLabelAddedOnThePathIsNotActedOn() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        let archive = TestCompression.compress(Self.original, as: .gzip)
        fixture.serveSigned(keys) { request in
            var headers = [("Content-Type", "application/gzip")]
            if request.path == "/v1/labelled" { headers.append(("Content-Encoding", "gzip")) }  // added on the path
            var reply = SignedReply(body: "", headers: headers)
            reply.body = archive
            return reply
        }
        let session = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)]) { $0.contentDecoding = [.gzip] }
        defer { session.shutdown() }
        for path in ["/v1/unlabelled", "/v1/labelled"] {
            let response = try await session.get(fixture.url(path).absoluteString)
            #expect(response.verification == .verified, "\(path)")
            #expect(response.body == archive, "\(path): the body must be the signed bytes, not \(response.body.count) other bytes")
            #expect(response.decodedContentEncodings.isEmpty, "\(path)")
        }
        #expect(try await session.get(fixture.url("/v1/labelled").absoluteString).undecodedContentEncodings == ["gzip"])
    }

    /// Nothing is inflated for a signed host, so a gzip bomb it sends is handed over as the
    /// 64 KiB it is.
    @Test func finding3AGzipBombFromASignedHostIsNeverInflated() async throws {
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
        let response = try await session.get(fixture.url("/v1/bomb").absoluteString)
        #expect(response.verification == .verified)
        #expect(response.body == bomb)
    }

    /// The bytes were altered after signing: the signature check fails on the bytes as received.
    @Test func aTamperedCompressedBodyFailsSignatureVerification() async throws {
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

    /// Informational mode returns a body whose signature failed: the bytes as received, with
    /// the failure reported and nothing decoded.
    @Test func informationalModeReportsTheSignatureFailureAndHandsOverTheBytesAsReceived() async throws {
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
        let response = try await session.get(fixture.url("/v1/report").absoluteString)
        #expect(response.body == tampered)
        guard case .failed(let failure) = response.verification else {
            Issue.record("expected a failed verification, got \(response.verification)")
            return
        }
        #expect(failure.code == .bodyMismatch)
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
