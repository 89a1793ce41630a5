import Foundation
import Testing
import ServerTrustTestSupport
import ServerTrust
@testable import ServerTrustHTTP

/// Interop against a real nginx: TLS 1.2 and 1.3, ECDSA and RSA leaves, HTTP/2.
@Suite struct NginxInteropTests {
    struct Server: Sendable, CustomTestStringConvertible {
        let portName: String
        let tlsVersion: String
        let httpVersion: String
        let leafIsRSA: Bool
        var testDescription: String { portName }
    }

    static let servers = [
        Server(portName: "TLS13_ECDSA_H2_STAPLED", tlsVersion: "1.3", httpVersion: "HTTP/2", leafIsRSA: false),
        Server(portName: "TLS12_ECDSA_H1_STAPLED", tlsVersion: "1.2", httpVersion: "HTTP/1.1", leafIsRSA: false),
        Server(portName: "TLS13_RSA_H2", tlsVersion: "1.3", httpVersion: "HTTP/2", leafIsRSA: true),
        Server(portName: "TLS12_RSA_H1", tlsVersion: "1.2", httpVersion: "HTTP/1.1", leafIsRSA: true),
    ]

    private func session(_ nginx: NginxInterop.Environment, pins: [String], configure: (inout Session.Configuration) -> Void = { _ in }) throws -> Session {
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try TrustAnchors(contentsOfFile: nginx.root))
        configuration.resolve = nginx.resolve
        configure(&configuration)
        let evaluator: any ServerTrustEvaluating = pins.isEmpty ? DefaultTrustEvaluator() : try PinnedKeyHashesTrustEvaluator(pins)
        return try Session(configuration: configuration, trustManager: try ServerTrustManager(evaluators: [try HostPattern(nginx.host): evaluator]))
    }

    @Test(arguments: servers)
    func pinnedRequestsSucceedWithTheExpectedProtocol(server: Server) async throws {
        let nginx = try NginxInterop.environment()
        let leafPin = server.leafIsRSA ? nginx.rsaLeafPin : nginx.ecdsaLeafPin
        let session = try session(nginx, pins: [leafPin])
        defer { session.shutdown() }
        let response = try await session.get(nginx.url(server.portName))
        #expect(response.status == 200)
        #expect(response.text == "interop \(nginx.port(server.portName))\n")
        #expect(response.httpVersion == server.httpVersion)
        #expect(response.trust.validatedChain.first?.pin.description == leafPin)
        #expect(response.trust.validatedChain.count == 3)
    }

    @Test(arguments: servers)
    func wrongPinsAreRejectedInTheHandshake(server: Server) async throws {
        let nginx = try NginxInterop.environment()
        let otherLeafPin = server.leafIsRSA ? nginx.ecdsaLeafPin : nginx.rsaLeafPin
        let session = try session(nginx, pins: [otherLeafPin])
        defer { session.shutdown() }
        let error = await outcome { try await session.get(nginx.url(server.portName)) }.sessionError
        #expect(error?.trustError?.code == .pinMismatch)
        #expect(error?.curlCode == 60)
    }

    /// (d) An HTTP/2 stream multiplexed onto a connection opened under other pins. With the
    /// guard removed (testing hook) the wrong pins ride the open connection unevaluated.
    @Test(arguments: [false, true])
    func wrongPinsOnAMultiplexedHTTP2StreamAreRejected(guardRemoved: Bool) async throws {
        let nginx = try NginxInterop.environment()
        let session = try session(nginx, pins: []) {
            $0.maximumConnectionsPerHost = 1
            $0.unsafeDisableConnectionGuard = guardRemoved
        }
        defer { session.shutdown() }
        let right = try PinnedKeyHashesTrustEvaluator([nginx.intermediatePin])
        let wrong = try PinnedKeyHashesTrustEvaluator(pins: [try Pin("sha256/" + Data(repeating: 9, count: 32).base64EncodedString())])
        let url = URL(string: nginx.url("TLS13_ECDSA_H2_STAPLED"))!
        let first = try await session.data(for: Request(url: url, trustEvaluator: right))
        #expect(first.httpVersion == "HTTP/2")
        let results = await withTaskGroup(of: (Bool, Result<Response, any Error>).self) { group in
            for index in 0..<8 {
                let isWrong = index % 2 == 1
                group.addTask { (isWrong, await outcome { try await session.data(for: Request(url: url, trustEvaluator: isWrong ? wrong : right)) }) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        for (isWrong, result) in results {
            if isWrong && !guardRemoved {
                #expect(result.sessionError?.trustError?.code == .pinMismatch)
            } else {
                #expect(try result.get().httpVersion == "HTTP/2")
            }
        }
    }

    @Test func aRedirectOnNginxIsFollowedUnderThePolicy() async throws {
        let nginx = try NginxInterop.environment()
        let session = try session(nginx, pins: [nginx.intermediatePin])
        defer { session.shutdown() }
        let response = try await session.get(nginx.url("TLS13_RSA_H2", "/redirect"))
        #expect(response.hops.count == 2)
        #expect(response.text == "interop \(nginx.port("TLS13_ECDSA_H2_STAPLED"))\n")
    }
}
