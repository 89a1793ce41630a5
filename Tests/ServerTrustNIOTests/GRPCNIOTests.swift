#if NIOAdapter
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import NIOCore
import ServerTrust
import ServerTrustNIO
import ServerTrustTestSupport
import Testing

/// A grpc-swift 2 client over grpc-swift-nio-transport's TLS, verified by ServerTrustNIO through
/// the transport's `customVerificationCallback`, against a local gRPC server.
@Suite struct GRPCNIOTests {
    static let host = "grpc.servertrust.test"

    private func verifier(_ pki: GenuineAndImpostor, _ evaluator: any ServerTrustEvaluating) throws -> ServerTrustNIOVerifier {
        try ServerTrustNIOVerifier(trustManager: ServerTrustManager(evaluators: [try HostPattern(Self.host): evaluator]), anchors: pki.anchors)
    }

    /// Runs a server presenting `leaf`, and one unary call from a client verified by `verification`.
    private func greet(serving leaf: LabLeaf, verification: HostTrustVerification) async throws -> String {
        let server = HTTP2ServerTransport.Posix(
            address: .ipv4(host: "127.0.0.1", port: 0),
            transportSecurity: .tls(
                certificateChain: leaf.chain.map { .bytes($0.derEncoded, format: .der) },
                privateKey: .bytes(Array(leaf.key.pemPrivateKey.utf8), format: .pem)))
        return try await withGRPCServer(transport: server, services: [Greeter()]) { grpcServer in
            defer { grpcServer.beginGracefulShutdown() }
            let port = try #require(try await server.listeningAddress.ipv4?.port)
            let client = try HTTP2ClientTransport.Posix(
                target: .ipv4(address: "127.0.0.1", port: port),
                transportSecurity: .tls { tls in
                    tls.serverCertificateVerification = .noHostnameVerification
                    tls.customVerificationCallback = verification.callback
                },
                config: .defaults { config in
                    config.http2.authority = verification.serverHostname
                    config.channelDebuggingCallbacks.onCreateTCPConnection = { channel in verification.addGuardHandler(to: channel) }
                })
            return try await withGRPCClient(transport: client) { grpcClient in
                try await grpcClient.unary(
                    request: ClientRequest(message: "nio"), descriptor: Greeter.method, serializer: UTF8Serializer(),
                    deserializer: UTF8Deserializer(), options: .noWait
                ) { try $0.message }
            }
        }
    }

    @Test func thePinnedServerAnswersTheCall() async throws {
        let pki = try GenuineAndImpostor(host: Self.host)
        let verification = try verifier(pki, try PinnedKeyHashesTrustEvaluator([pki.pin.description]))
            .verification(forHost: Self.host)
        #expect(try await greet(serving: pki.genuine, verification: verification) == "hello nio")
        #expect(verification.acceptedCount >= 1)
        #expect(verification.lastFailure == nil)
    }

    /// The impostor chains to an anchor, so default validation accepts it (the control); the
    /// pin refuses it, and the call's error carries the trust failure.
    @Test func anImpostorFromATrustedCAFailsTheCallWithThePinMismatchInItsError() async throws {
        let pki = try GenuineAndImpostor(host: Self.host)
        let trusting = try verifier(pki, DefaultTrustEvaluator()).verification(forHost: Self.host)
        #expect(try await greet(serving: pki.impostor.leaf, verification: trusting) == "hello nio")

        let pin = pki.pin.description
        let verification = try verifier(pki, try PinnedKeyHashesTrustEvaluator([pin])).verification(forHost: Self.host)
        let error = await thrownError { try await greet(serving: pki.impostor.leaf, verification: verification) }
        let rpcError = try #require(error as? RPCError)
        #expect(rpcError.code == .unavailable)
        let trustFailure = try #require(Self.causes(of: rpcError).lazy.compactMap { $0 as? ServerTrustNIOError }.first)
        #expect(trustFailure.trustError.code == .pinMismatch)
        #expect(trustFailure.evaluator == "PinnedKeyHashesTrustEvaluator")
        #expect(trustFailure.pattern?.description == Self.host)
        #expect(trustFailure.trustError.evidence.configuredPins.map(\.description) == [pin])
        #expect(trustFailure.trustError.evidence.chain.first?.pin == pki.impostor.leaf.certificate.spkiPin)
        #expect(verification.acceptedCount == 0)
        #expect(verification.lastFailure?.trustError.code == .pinMismatch)
    }

    /// An error and the errors it was caused by, outermost first.
    static func causes(of error: any Error) -> [any Error] {
        var chain: [any Error] = [error]
        while chain.count < 10, let next = (chain.last as? RPCError)?.cause ?? (chain.last as? RuntimeError)?.cause {
            chain.append(next)
        }
        return chain
    }
}

extension CallOptions {
    /// Fail at once when the connection fails, instead of waiting for it to become ready.
    static var noWait: CallOptions {
        var options = CallOptions.defaults
        options.waitForReady = false
        options.timeout = .seconds(20)
        return options
    }
}

/// A one-method service over UTF-8 strings: no protobuf, no generated code.
struct Greeter: RegistrableRPCService {
    static let method = MethodDescriptor(fullyQualifiedService: "servertrust.test.Greeter", method: "Greet")

    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        router.registerHandler(forMethod: Self.method, deserializer: UTF8Deserializer(), serializer: UTF8Serializer()) { request, _ in
            let single = try await ServerRequest(stream: request)
            return StreamingServerResponse(single: ServerResponse(message: "hello \(single.message)"))
        }
    }
}

struct UTF8Serializer: MessageSerializer {
    func serialize<Bytes: GRPCContiguousBytes>(_ message: String) throws -> Bytes { Bytes(Array(message.utf8)) }
}

struct UTF8Deserializer: MessageDeserializer {
    func deserialize<Bytes: GRPCContiguousBytes>(_ bytes: Bytes) throws -> String {
        bytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }
}
#endif
