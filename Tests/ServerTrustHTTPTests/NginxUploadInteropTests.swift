import Foundation
import Testing
import ServerTrustTestSupport
import ServerTrust
@testable import ServerTrustHTTP

/// Streamed uploads to a real nginx, over HTTP/2 and HTTP/1.1: nginx reads the whole body
/// (`/upload`, see scripts/interop/nginx.sh) and answers with the length it received.
@Suite(.timeLimit(.minutes(5))) struct NginxUploadInteropTests {
    static let servers = [
        NginxInteropTests.servers[0],  // TLS 1.3, HTTP/2
        NginxInteropTests.servers[1],  // TLS 1.2, HTTP/1.1
    ]

    private func session(_ nginx: NginxInterop.Environment) throws -> Session {
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try TrustAnchors(contentsOfFile: nginx.root))
        configuration.resolve = nginx.resolve
        let evaluator = try PinnedKeyHashesTrustEvaluator([nginx.intermediatePin])
        return try Session(configuration: configuration, trustManager: try ServerTrustManager(evaluators: [try HostPattern(nginx.host): evaluator]))
    }

    @Test(arguments: servers)
    func a32MiBStreamOfUnknownLengthIsReceivedWhole(server: NginxInteropTests.Server) async throws {
        let nginx = try NginxInterop.environment()
        let session = try session(nginx)
        defer { session.shutdown() }
        let body = GeneratedChunks(count: 512, chunkSize: 64 << 10)
        let request = Request(method: .put, url: URL(string: nginx.url(server.portName, "/upload"))!, uploadBody: .stream(body))
        let response = try await session.data(for: request)
        #expect(response.status == 200)
        #expect(response.httpVersion == server.httpVersion)
        #expect(response.text == "received \(32 << 20) bytes by PUT\n")
        #expect(session.probe.peakBufferedUploadBytes <= UploadStream.bufferLimit + body.chunkSize)
    }

    /// Four uploads at once with one connection per host allowed, so HTTP/2 multiplexes them;
    /// each pauses and resumes on its own.
    @Test func concurrentStreamsOnOneHTTP2ConnectionAreEachReceivedWhole() async throws {
        let nginx = try NginxInterop.environment()
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try TrustAnchors(contentsOfFile: nginx.root))
        configuration.resolve = nginx.resolve
        configuration.maximumConnectionsPerHost = 1
        let session = try Session(configuration: configuration)
        defer { session.shutdown() }
        let url = URL(string: nginx.url("TLS13_ECDSA_H2_STAPLED", "/upload"))!
        _ = try await session.data(for: Request(url: url))  // the connection, so the uploads share it
        let sizes = [8 << 20, 4 << 20, 6 << 20 + 1, 3 << 20 + 7]
        let texts = try await withThrowingTaskGroup(of: (Int, String, String).self) { group in
            for size in sizes {
                group.addTask {
                    let body = GeneratedChunks(count: size / 1000, chunkSize: 1000)
                    let response = try await session.data(for: Request(method: .put, url: url, uploadBody: .stream(body)))
                    return (body.totalBytes, response.httpVersion, response.text)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(texts.count == sizes.count)
        for (size, version, text) in texts {
            #expect(version == "HTTP/2")
            #expect(text == "received \(size) bytes by PUT\n")
        }
        #expect(session.probe.peakBufferedUploadBytes <= UploadStream.bufferLimit + 1000)
    }

    @Test(arguments: servers)
    func aStreamOfKnownLengthAndAFileAreReceivedWhole(server: NginxInteropTests.Server) async throws {
        let nginx = try NginxInterop.environment()
        let session = try session(nginx)
        defer { session.shutdown() }
        let body = GeneratedChunks(count: 30, chunkSize: 100_003)
        let url = URL(string: nginx.url(server.portName, "/upload"))!
        let streamed = try await session.data(for: Request(method: .post, url: url, uploadBody: .stream(body, length: body.totalBytes)))
        #expect(streamed.httpVersion == server.httpVersion)
        #expect(streamed.text == "received \(body.totalBytes) bytes by POST\n")
        let file = try patternFile(body)
        defer { try? FileManager.default.removeItem(at: file) }
        let filed = try await session.data(for: Request(method: .patch, url: url, uploadBody: .file(file)))
        #expect(filed.text == "received \(body.totalBytes) bytes by PATCH\n")
    }
}
