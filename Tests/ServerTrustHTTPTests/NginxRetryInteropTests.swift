import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// Retries against a real nginx whose `/drop` location answers `return 444` (closes the
/// connection — on HTTP/2, resets the stream — without a byte of response), counted in its
/// access log (`SERVERTRUST_INTEROP_DROP_LOG`).
@Suite struct NginxRetryInteropTests {
    struct Server: Sendable, CustomTestStringConvertible {
        let portName: String
        /// The curl code nginx's 444 produces on this protocol.
        let curlCode: Int
        let leafIsRSA: Bool
        var testDescription: String { portName }
    }

    static let servers = [
        Server(portName: "TLS12_ECDSA_H1_STAPLED", curlCode: droppedTLSConnectionCurlCode, leafIsRSA: false),
        Server(portName: "TLS13_RSA_H2", curlCode: 92, leafIsRSA: true),  // CURLE_HTTP2_STREAM
    ]

    /// What libcurl reports when nginx's 444 closes an HTTP/1.1 TLS connection, which it does
    /// without a close_notify alert. Before 8.14.1 libcurl's OpenSSL BIO answered `BIO_CTRL_EOF`
    /// with 0 even after the socket's end, so OpenSSL took the closed socket for a clean end of
    /// stream and nothing had arrived: CURLE_GOT_NOTHING (52, Debian 12's 7.88.1). curl commit
    /// f1e1c8b ("tls BIOs: handle BIO_CTRL_EOF correctly", first in 8.14.1) reports the end, and
    /// OpenSSL 3 fails the read with "unexpected eof while reading": CURLE_RECV_ERROR (56,
    /// Debian 13's 8.14.1). The in-process servers of `RetryTests` send close_notify: 52 on both.
    static let droppedTLSConnectionCurlCode = CurlRuntime.libcurlVersionNumber >= 0x08_0E_01 ? 56 : 52

    private func session(_ nginx: NginxInterop.Environment, pin: String, logs: CapturedLogs) throws -> Session {
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try TrustAnchors(contentsOfFile: nginx.root))
        configuration.resolve = nginx.resolve
        configuration.retryPolicy = Session.RetryPolicy(maximumRetries: 2, baseDelay: .milliseconds(10), maximumDelay: .milliseconds(50))
        configuration.logger = logs.logger
        return try Session(
            configuration: configuration, trustManager: try ServerTrustManager(evaluators: [try HostPattern(nginx.host): try PinnedKeyHashesTrustEvaluator([pin])]))
    }

    /// The requests nginx logged for `/drop?id={id}`.
    private func attemptsSeen(_ nginx: NginxInterop.Environment, id: String) throws -> Int {
        let path = try #require(nginx.values["SERVERTRUST_INTEROP_DROP_LOG"], "interop.env predates the /drop location; restart nginx.sh")
        let log = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return log.split(separator: "\n").filter { $0.contains("/drop?id=\(id) ") }.count
    }

    @Test(arguments: servers)
    func aDroppedGETIsAttemptedOncePlusTheMaximumRetries(server: Server) async throws {
        let nginx = try NginxInterop.environment()
        let logs = CapturedLogs()
        let session = try session(nginx, pin: server.leafIsRSA ? nginx.rsaLeafPin : nginx.ecdsaLeafPin, logs: logs)
        defer { session.shutdown() }
        let id = UUID().uuidString
        let error = await outcome { try await session.get(nginx.url(server.portName, "/drop?id=\(id)")) }.sessionError
        #expect(error?.code == .transferFailed)
        #expect(error?.curlCode == server.curlCode, "\(String(describing: error))")
        #expect(error?.attempts == 3)
        #expect(try attemptsSeen(nginx, id: id) == 3)
        #expect(logs.at(.notice).filter { $0.message.hasPrefix("Retrying GET") }.count == 2)
        // Every attempt was admitted under the pin: nothing was rejected along the way.
        #expect(session.counters.snapshot.failures == 0)
        #expect(session.counters.snapshot.evaluations >= 1)
    }

    @Test(arguments: servers)
    func aDroppedPOSTIsAttemptedOnce(server: Server) async throws {
        let nginx = try NginxInterop.environment()
        let logs = CapturedLogs()
        let session = try session(nginx, pin: server.leafIsRSA ? nginx.rsaLeafPin : nginx.ecdsaLeafPin, logs: logs)
        defer { session.shutdown() }
        let id = UUID().uuidString
        let error = await outcome { try await session.post(nginx.url(server.portName, "/drop?id=\(id)"), body: Array("once".utf8)) }.sessionError
        #expect(error?.code == .transferFailed)
        #expect(error?.curlCode == server.curlCode, "\(String(describing: error))")
        #expect(error?.attempts == 1)
        #expect(try attemptsSeen(nginx, id: id) == 1)
    }

    @Test func aRefusedConnectionIsAttemptedOncePlusTheMaximumRetries() async throws {
        let nginx = try NginxInterop.environment()
        let logs = CapturedLogs()
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try TrustAnchors(contentsOfFile: nginx.root))
        let refusing = try RefusingLoopbackPort()
        defer { withExtendedLifetime(refusing) {} }
        let closedPort = refusing.port
        configuration.resolve = ["\(nginx.host):\(closedPort):127.0.0.1"]
        configuration.retryPolicy = Session.RetryPolicy(maximumRetries: 2, baseDelay: .milliseconds(10), maximumDelay: .milliseconds(50))
        configuration.logger = logs.logger
        let session = try Session(configuration: configuration)
        defer { session.shutdown() }
        let error = await outcome { try await session.get("https://\(nginx.host):\(closedPort)/") }.sessionError
        #expect(error?.code == .transferFailed)
        #expect(error?.curlCode == 7)  // CURLE_COULDNT_CONNECT
        #expect(error?.attempts == 3)
        #expect(logs.at(.notice).filter { $0.message.hasPrefix("Retrying GET") }.count == 2)
    }

    @Test func aGETThatSucceedsIsAttemptedOnce() async throws {
        let nginx = try NginxInterop.environment()
        let session = try session(nginx, pin: nginx.ecdsaLeafPin, logs: CapturedLogs())
        defer { session.shutdown() }
        let response = try await session.get(nginx.url("TLS13_ECDSA_H2_STAPLED"))
        #expect(response.status == 200)
        #expect(response.attempts == 1)
    }
}
