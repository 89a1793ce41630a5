import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// Response decompression against nginx's own gzip filter (`gzip on` for `/compressed/`), over
/// HTTP/1.1 and HTTP/2.
@Suite struct NginxCompressionInteropTests {
    static let portNames = ["TLS13_ECDSA_H2_STAPLED", "TLS12_RSA_H1"]

    private func session(_ nginx: NginxInterop.Environment, decoding: [ContentCoding]) throws -> Session {
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try TrustAnchors(contentsOfFile: nginx.root))
        configuration.resolve = nginx.resolve
        configuration.contentDecoding = decoding
        return try Session(configuration: configuration)
    }

    @Test(arguments: portNames)
    func withDecodingOnNginxSendsGzipAndTheBodyEqualsTheFile(portName: String) async throws {
        let nginx = try NginxInterop.environment()
        let file = try #require(FileManager.default.contents(atPath: nginx.compressibleFile))
        let session = try session(nginx, decoding: [.gzip, .deflate])
        defer { session.shutdown() }
        let response = try await session.get(nginx.url(portName, "/compressed/interop.txt"))
        #expect(response.status == 200)
        #expect(response.header("Content-Encoding") == "gzip")
        #expect(response.decodedContentEncodings == [.gzip])
        #expect(response.body == Array(file))
    }

    @Test(arguments: portNames)
    func withDecodingOffNginxSendsTheFileAsItIs(portName: String) async throws {
        let nginx = try NginxInterop.environment()
        let file = try #require(FileManager.default.contents(atPath: nginx.compressibleFile))
        let session = try session(nginx, decoding: [])
        defer { session.shutdown() }
        let response = try await session.get(nginx.url(portName, "/compressed/interop.txt"))
        #expect(response.status == 200)
        #expect(response.header("Content-Encoding") == nil)
        #expect(response.decodedContentEncodings.isEmpty)
        #expect(response.body == Array(file))
    }

    /// Streaming gets libcurl's decoded chunks from nginx too.
    @Test func aStreamFromNginxIsDecoded() async throws {
        let nginx = try NginxInterop.environment()
        let file = try #require(FileManager.default.contents(atPath: nginx.compressibleFile))
        let session = try session(nginx, decoding: [.gzip])
        defer { session.shutdown() }
        let response = try await session.stream(Request(url: URL(string: nginx.url("TLS13_ECDSA_H2_STAPLED", "/compressed/interop.txt"))!))
        #expect(response.header("Content-Encoding") == "gzip")
        #expect(try await response.body.collect(upTo: 1 << 20) == Array(file))
    }
}
