#if NIOAdapter
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import NIOCore
import NIOEmbedded
import NIOSSL
import ServerTrust
import ServerTrustNIO
import ServerTrustTestSupport
import Synchronization
import Testing

/// Third review, finding 1: with `.noHostnameVerification`, nothing but ServerTrust checks the
/// host, and an evaluator that checks none used to let a certificate a trusted CA issued for the
/// attacker's own domain serve the victim's host. The impostor here holds a leaf for
/// `evil.test` from the lab CA the client trusts; the client connects for `api.test` with a
/// bearer token. Every evaluator below accepts that chain on its own (asserted), so only the
/// policy's host check stands between the token and the impostor.
@Suite struct PolicyHostCheckTests {
    static let host = "api.test"
    static let attackerHost = "evil.test"
    static let token = "Bearer third-review-finding-1"

    /// Evaluators that do not check the host themselves.
    enum HostBlindEvaluator: String, CaseIterable, CustomTestStringConvertible {
        case standaloneRevocation
        case canaryAroundRevocation
        case customAcceptingEverything

        var testDescription: String { rawValue }

        /// The evaluator (`leaf` is the certificate the test serves).
        func make(pinning leaf: Certificate) throws -> any ServerTrustEvaluating {
            switch self {
            case .standaloneRevocation:
                RevocationTrustEvaluator(options: .softFail, cache: RevocationCache())
            case .canaryAroundRevocation:
                CanaryTrustEvaluator(enforced: RevocationTrustEvaluator(options: .softFail, cache: RevocationCache()), trial: DefaultTrustEvaluator())
            case .customAcceptingEverything:
                AcceptsEverything()
            }
        }
    }

    /// A custom evaluator that trusts every server.
    struct AcceptsEverything: ServerTrustEvaluating {
        func evaluate(_ trust: PeerTrust, forHost host: String) throws {}
    }

    /// The lab CA, the impostor's leaf for `evil.test` and the genuine one for `api.test`.
    struct Lab {
        let root: LabCA
        let impostor: LabLeaf
        let genuine: LabLeaf

        init() throws {
            root = try LabPKI.makeRoot(commonName: "Finding 1 Lab CA")
            impostor = try root.issueLeaf(dnsNames: [PolicyHostCheckTests.attackerHost])
            genuine = try root.issueLeaf(dnsNames: [PolicyHostCheckTests.host])
        }

        func verifier(_ evaluator: any ServerTrustEvaluating) throws -> ServerTrustNIOVerifier {
            try ServerTrustNIOVerifier(
                trustManager: ServerTrustManager(evaluators: [try HostPattern(PolicyHostCheckTests.host): evaluator]), anchors: root.trustAnchors())
        }

        /// The evaluator on its own accepts the impostor for the victim's host: the refusal
        /// asserted afterwards can only be the policy's.
        func expectEvaluatorAloneAcceptsTheImpostor(_ evaluator: any ServerTrustEvaluating) throws {
            let trust = PeerTrust(presentedChain: [impostor.certificate], anchors: try root.trustAnchors())
            try evaluator.evaluate(trust, forHost: PolicyHostCheckTests.host)
        }
    }

    private static func expectHostMismatch(_ failure: ServerTrustNIOError?) {
        #expect(failure?.trustError.code == .hostMismatch)
        #expect(failure?.host == host)
        #expect(failure?.trustError.host == host)
        #expect(failure?.trustError.reason.contains(attackerHost) == true)
    }

    // MARK: NIOSSLClientHandler

    @Test(arguments: HostBlindEvaluator.allCases)
    func nioRefusesACertificateForAnotherHostWhateverTheEvaluator(_ kind: HostBlindEvaluator) async throws {
        let lab = try Lab()
        let evaluator = try kind.make(pinning: lab.impostor.certificate)
        try lab.expectEvaluatorAloneAcceptsTheImpostor(evaluator)
        let impostor = try LocalTLSServer(chain: [lab.impostor.certificate], privateKeyPEM: lab.impostor.key.pemPrivateKey)
        defer { impostor.stop() }

        let error = await thrownError {
            try await NIOHTTPClient.get(
                "/secret", host: Self.host, port: impostor.port, verifier: try lab.verifier(evaluator),
                headers: [("Authorization", Self.token)])
        }
        Self.expectHostMismatch(error as? ServerTrustNIOError)
        #expect(impostor.recentRequests.isEmpty)
        #expect(impostor.requestsServed == 0)

        // The control: the same evaluator and client reach the genuine server.
        let genuine = try LocalTLSServer(chain: [lab.genuine.certificate], privateKeyPEM: lab.genuine.key.pemPrivateKey)
        defer { genuine.stop() }
        let genuineEvaluator = try kind.make(pinning: lab.genuine.certificate)
        let result = try await NIOHTTPClient.get(
            "/status/200", host: Self.host, port: genuine.port, verifier: try lab.verifier(genuineEvaluator),
            headers: [("Authorization", Self.token)])
        #expect(result.status == 200)
    }

    // MARK: grpc-swift

    @Test(arguments: HostBlindEvaluator.allCases)
    func grpcRefusesACertificateForAnotherHostWhateverTheEvaluator(_ kind: HostBlindEvaluator) async throws {
        let lab = try Lab()
        let evaluator = try kind.make(pinning: lab.impostor.certificate)
        try lab.expectEvaluatorAloneAcceptsTheImpostor(evaluator)
        let verification = try lab.verifier(evaluator).verification(forHost: Self.host)
        let received = CallRecorder()

        let error = await thrownError { try await call(serving: lab.impostor, verification: verification, recorder: received) }
        let rpcError = try #require(error as? RPCError)
        #expect(rpcError.code == .unavailable)
        Self.expectHostMismatch(GRPCNIOTests.causes(of: rpcError).lazy.compactMap { $0 as? ServerTrustNIOError }.first)
        Self.expectHostMismatch(verification.lastFailure)
        #expect(verification.acceptedCount == 0)
        #expect(received.authorizations.isEmpty)

        // The control: the same evaluator reaches the genuine server, which sees the token.
        let genuineVerification = try lab.verifier(try kind.make(pinning: lab.genuine.certificate)).verification(forHost: Self.host)
        let genuineReceived = CallRecorder()
        #expect(try await call(serving: lab.genuine, verification: genuineVerification, recorder: genuineReceived) == "hello nio")
        #expect(genuineReceived.authorizations == [Self.token])
    }

    /// Runs a gRPC server presenting `leaf` and makes one unary call carrying the bearer token,
    /// configured as the article shows.
    private func call(serving leaf: LabLeaf, verification: HostTrustVerification, recorder: CallRecorder) async throws -> String {
        let server = HTTP2ServerTransport.Posix(
            address: .ipv4(host: "127.0.0.1", port: 0),
            transportSecurity: .tls(
                certificateChain: [.bytes(leaf.certificate.derEncoded, format: .der)],
                privateKey: .bytes(Array(leaf.key.pemPrivateKey.utf8), format: .pem)))
        return try await withGRPCServer(transport: server, services: [RecordingGreeter(recorder: recorder)]) { grpcServer in
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
                    request: ClientRequest(message: "nio", metadata: ["authorization": "\(Self.token)"]),
                    descriptor: Greeter.method, serializer: UTF8Serializer(), deserializer: UTF8Deserializer(), options: .noWait
                ) { try $0.message }
            }
        }
    }

    // MARK: The TLS 1.2 floor (third review, finding 2)

    @Test(arguments: [(TLSVersion.tlsv1, "TLS 1.0"), (.tlsv11, "TLS 1.1")])
    func nioRefusesAContextWhoseMinimumIsBelowTLS12AndNamesTheProtocol(_ version: TLSVersion, _ name: String) throws {
        let lab = try Lab()
        let verifier = try lab.verifier(DefaultTrustEvaluator())
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish() }
        let error = #expect(throws: ServerTrustNIOError.self) {
            try verifier.addClientHandlers(
                to: channel.pipeline.syncOperations, context: try NIOHTTPClient.context(minimumTLSVersion: version), host: Self.host)
        }
        #expect(error?.trustError.code == .invalidConfiguration)
        #expect(error?.host == Self.host)
        #expect(error?.trustError.reason.contains("minimumTLSVersion is \(name)") == true)
        #expect(throws: ChannelPipelineError.notFound) { try channel.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self) }
    }

    /// swift-nio-ssl's own default is TLS 1.0: a context made with it untouched is refused.
    @Test func nioRefusesSwiftNIOSSLsDefaultClientConfigurationButAcceptsTLS12AndTLS13() throws {
        let lab = try Lab()
        let verifier = try lab.verifier(DefaultTrustEvaluator())
        var defaults = TLSConfiguration.makeClientConfiguration()
        defaults.certificateVerification = .noHostnameVerification
        let refusing = EmbeddedChannel()
        defer { _ = try? refusing.finish() }
        let error = #expect(throws: ServerTrustNIOError.self) {
            try verifier.addClientHandlers(
                to: refusing.pipeline.syncOperations, context: try NIOSSLContext(configuration: defaults), host: Self.host)
        }
        #expect(error?.trustError.reason.contains("TLS 1.0") == true)

        for version in [TLSVersion.tlsv12, .tlsv13] {
            let channel = EmbeddedChannel()
            defer { _ = try? channel.finish() }
            try verifier.addClientHandlers(
                to: channel.pipeline.syncOperations, context: try NIOHTTPClient.context(minimumTLSVersion: version), host: Self.host)
            #expect((try? channel.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self)) != nil)
        }
    }
}

/// The `authorization` metadata of every call a ``RecordingGreeter`` received.
final class CallRecorder: Sendable {
    private let received = Mutex<[String]>([])
    var authorizations: [String] { received.withLock { $0 } }
    func record(_ authorization: String) { received.withLock { $0.append(authorization) } }
}

/// ``Greeter``, recording the metadata of each call it receives.
struct RecordingGreeter: RegistrableRPCService {
    let recorder: CallRecorder

    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        router.registerHandler(forMethod: Greeter.method, deserializer: UTF8Deserializer(), serializer: UTF8Serializer()) { request, _ in
            recorder.record(request.metadata[stringValues: "authorization"].joined(separator: ","))
            let single = try await ServerRequest(stream: request)
            return StreamingServerResponse(single: ServerResponse(message: "hello \(single.message)"))
        }
    }
}
#endif
