#if NIOAdapter
import Foundation
import NIOCore
import NIOEmbedded
import NIOPosix
import NIOSSL
import NIOTLS
import ServerTrust
import ServerTrustHTTP
import ServerTrustNIO
import ServerTrustTestSupport
import Testing

/// Every way the adapter can be asked to verify nothing, or to verify what it cannot, fails closed.
@Suite struct FailClosedTests {
    private func anchors(_ nginx: NginxInterop.Environment) throws -> TrustAnchors { try TrustAnchors(contentsOfFile: nginx.root) }

    @Test func aHostNoPatternMatchesIsRefusedAndNoHandlerIsAdded() throws {
        let nginx = try NginxInterop.environment()
        let verifier = try ServerTrustNIOVerifier(
            trustManager: ServerTrustManager(evaluators: [try HostPattern(nginx.host): try PinnedKeyHashesTrustEvaluator([nginx.intermediatePin])]),
            anchors: anchors(nginx))
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish() }
        let error = #expect(throws: ServerTrustNIOError.self) {
            try verifier.addClientHandlers(to: channel.pipeline.syncOperations, context: try NIOHTTPClient.context(), host: "unpinned.example")
        }
        #expect(error?.trustError.code == .noEvaluatorForHost)
        #expect(error?.host == "unpinned.example")
        #expect(error?.evaluator == nil)
        #expect(throws: ChannelPipelineError.notFound) { try channel.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self) }
    }

    @Test(arguments: ["", "bad host.example", "a..servertrust.test", "bücher.example"])
    func aMalformedHostIsRefusedEvenWhenUnmatchedHostsAreAllowed(host: String) throws {
        let nginx = try NginxInterop.environment()
        let verifier = try ServerTrustNIOVerifier(
            trustManager: ServerTrustManager(evaluators: [try HostPattern(nginx.host): DefaultTrustEvaluator()], allHostsMustBeEvaluated: false),
            anchors: anchors(nginx))
        let error = #expect(throws: ServerTrustNIOError.self) { try verifier.verification(forHost: host) }
        #expect(error?.trustError.code == .noEvaluatorForHost)
    }

    /// As in `Session`: no match and `allHostsMustBeEvaluated == false` means default validation.
    @Test func anUnmatchedHostGetsDefaultValidationWhenTheManagerAllowsIt() async throws {
        let nginx = try NginxInterop.environment()
        let verifier = try ServerTrustNIOVerifier(
            trustManager: ServerTrustManager(
                evaluators: [try HostPattern("pinned.example"): try PinnedKeyHashesTrustEvaluator([nginx.rsaLeafPin])], allHostsMustBeEvaluated: false),
            anchors: anchors(nginx))
        let verification = try verifier.verification(forHost: nginx.host)
        #expect(verification.pattern == nil)
        #expect(verification.evaluator is DefaultTrustEvaluator)
        let result = try await NIOHTTPClient.get(host: nginx.host, port: nginx.port("TLS13_ECDSA_H2_STAPLED"), verifier: verifier)
        #expect(result.status == 200)
        let error = await thrownError {
            try await NIOHTTPClient.get(host: "wrong.servertrust.test", port: nginx.port("TLS13_ECDSA_H2_STAPLED"), verifier: verifier)
        }
        #expect((error as? ServerTrustNIOError)?.trustError.code == .hostMismatch)
        #expect((error as? ServerTrustNIOError)?.evaluator == "DefaultTrustEvaluator")
    }

    /// swift-nio-ssl's callback does not name the negotiated group: a post-quantum requirement
    /// is refused at set-up, naming why (it could only ever refuse or be ignored later). On
    /// OpenSSL below 3.5 the manager itself refuses the requirement, naming the version.
    @Test func aPostQuantumRequirementIsRefusedAtSetUp() throws {
        let nginx = try NginxInterop.environment()
        let policy = HostPolicy(keyExchange: .postQuantum)
        guard KeyExchangeRequirement.isAvailable else {
            #expect(throws: TrustError.invalidConfiguration) { try ServerTrustManager(policies: [try HostPattern(nginx.host): policy]) }
            return
        }
        let verifier = try ServerTrustNIOVerifier(trustManager: ServerTrustManager(policies: [try HostPattern(nginx.host): policy]), anchors: anchors(nginx))
        let error = #expect(throws: ServerTrustNIOError.self) { try verifier.verification(forHost: nginx.host) }
        #expect(error?.trustError.code == .invalidConfiguration)
        #expect(error?.trustError.reason.contains("does not say which group was negotiated") == true)
    }

    /// A host policy setting ServerTrustNIO cannot apply (it verifies the server only) is
    /// refused at set-up, naming the setting, instead of being ignored (#44).
    @Test func aHostPolicySettingTheAdapterCannotHonourIsRefusedAtSetUp() throws {
        let nginx = try NginxInterop.environment()
        let leaf = try LabPKI.makeRoot().issueLeaf(commonName: "client", extendedKeyUsage: [.clientAuth])
        let identity = try ClientIdentity(certificatePEM: leaf.certificate.pemEncoded, privateKeyPEM: leaf.key.pemPrivateKey)
        let keys = try SigningKeys()
        let cases: [(HostPolicy, String)] = [
            (HostPolicy(clientIdentity: identity), "HostPolicy.clientIdentity"),
            (HostPolicy(signedResponses: .enforced(roots: keys.roots)), "HostPolicy.signedResponses"),
            (HostPolicy(reportURIs: [URL(string: "https://reports.example/")!]), "HostPolicy.reportURIs"),
        ]
        for (policy, setting) in cases {
            let verifier = try ServerTrustNIOVerifier(trustManager: ServerTrustManager(policies: [try HostPattern(nginx.host): policy]), anchors: anchors(nginx))
            let channel = EmbeddedChannel()
            defer { _ = try? channel.finish() }
            let error = #expect(throws: ServerTrustNIOError.self) {
                try verifier.addClientHandlers(to: channel.pipeline.syncOperations, context: try NIOHTTPClient.context(), host: nginx.host)
            }
            #expect(error?.trustError.code == .invalidConfiguration)
            #expect(error?.trustError.reason.contains(setting) == true)
            #expect(error?.pattern?.description == nginx.host)
            #expect(error?.evaluation == nil)
            #expect(throws: ChannelPipelineError.notFound) { try channel.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self) }
        }
        // A disabled signed-response policy checks nothing, so there is nothing to refuse.
        let disabled = HostPolicy(signedResponses: .disabled)
        let verifier = try ServerTrustNIOVerifier(trustManager: ServerTrustManager(policies: [try HostPattern(nginx.host): disabled]), anchors: anchors(nginx))
        #expect(try verifier.verification(forHost: nginx.host).pattern?.description == nginx.host)
    }

    /// A refused evaluation's error carries the core's evaluation, not a restatement of it.
    @Test func aRefusedEvaluationCarriesTheCoreEvaluation() async throws {
        let nginx = try NginxInterop.environment()
        let verifier = try ServerTrustNIOVerifier(
            trustManager: ServerTrustManager(evaluators: [try HostPattern(nginx.host): try PinnedKeyHashesTrustEvaluator(["sha256/" + Data(repeating: 7, count: 32).base64EncodedString()])]),
            anchors: anchors(nginx))
        let error = await thrownError { try await NIOHTTPClient.get(host: nginx.host, port: nginx.port("TLS13_ECDSA_H2_STAPLED"), verifier: verifier) }
        let refusal = try #require(error as? ServerTrustNIOError)
        let evaluation = try #require(refusal.evaluation)
        #expect(refusal.trustError.code == .pinMismatch)
        #expect(evaluation.failure?.code == .pinMismatch)
        #expect(evaluation.host == nginx.host && refusal.host == nginx.host)
        #expect(evaluation.matchedPattern?.description == nginx.host && refusal.pattern?.description == nginx.host)
        #expect(refusal.evaluator == "PinnedKeyHashesTrustEvaluator")
        #expect(!evaluation.trust.presentedChain.isEmpty)
    }

    @Test func aContextThatVerifiesNothingIsRefused() throws {
        let nginx = try NginxInterop.environment()
        let verifier = try ServerTrustNIOVerifier(
            trustManager: ServerTrustManager(evaluators: [try HostPattern(nginx.host): DefaultTrustEvaluator()]), anchors: anchors(nginx))
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish() }
        for verification in [CertificateVerification.none, .optionalVerification] {
            let error = #expect(throws: ServerTrustNIOError.self) {
                try verifier.addClientHandlers(
                    to: channel.pipeline.syncOperations, context: try NIOHTTPClient.context(verification), host: nginx.host)
            }
            #expect(error?.trustError.code == .invalidConfiguration)
        }
        #expect(throws: ChannelPipelineError.notFound) { try channel.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self) }
    }

    /// The guard's backstop: a `NIOSSLClientHandler` that never calls the callback (here, one
    /// without it and a context that verifies nothing) completes its handshake, and the guard
    /// closes the channel with the configuration error instead of passing on any response.
    @Test func aHandshakeThatCompletedWithoutAnEvaluationIsClosedByTheGuard() async throws {
        let nginx = try NginxInterop.environment()
        let verifier = try ServerTrustNIOVerifier(
            trustManager: ServerTrustManager(evaluators: [try HostPattern(nginx.host): DefaultTrustEvaluator()]), anchors: anchors(nginx))
        let verification = try verifier.verification(forHost: nginx.host)
        let context = try NIOHTTPClient.context(.none)
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let outcome = eventLoop.makePromise(of: Void.self)
        let channel = try await ClientBootstrap(group: eventLoop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let tls = try NIOSSLClientHandler(context: context, serverHostname: nginx.host)
                    try channel.pipeline.syncOperations.addHandlers([tls, verification.makeGuardHandler(), ErrorCatcher(outcome)])
                }
            }
            .connect(host: "127.0.0.1", port: nginx.port("TLS13_RSA_H2")).get()
        let error = await thrownError { try await outcome.futureResult.get() }
        let trustFailure = try #require(error as? ServerTrustNIOError)
        #expect(trustFailure.trustError.code == .invalidConfiguration)
        #expect(verification.acceptedCount == 0)
        try await channel.closeFuture.get()
    }

    @Test func aStapleOnlyPolicyIsRefusedUnlessTheCallerChoosesToEvaluateWithoutAStaple() async throws {
        let nginx = try NginxInterop.environment()
        func verifier(_ options: RevocationOptions, _ handling: StapledOCSPHandling) throws -> ServerTrustNIOVerifier {
            let evaluator = try CompositeTrustEvaluator([
                try PinnedKeyHashesTrustEvaluator([nginx.intermediatePin]), RevocationTrustEvaluator(options: options),
            ])
            return try ServerTrustNIOVerifier(
                trustManager: ServerTrustManager(evaluators: [try HostPattern(nginx.host): evaluator]), anchors: anchors(nginx), stapledOCSPHandling: handling)
        }
        for options in [RevocationOptions.ocspStapled, .stapleRequired] {
            let error = #expect(throws: ServerTrustNIOError.self) { try verifier(options, .failClosed).verification(forHost: nginx.host) }
            #expect(error?.trustError.code == .invalidConfiguration)
            #expect(error?.evaluator == "CompositeTrustEvaluator(PinnedKeyHashesTrustEvaluator, RevocationTrustEvaluator)")
        }
        // nginx staples, but swift-nio-ssl hands over no staple: soft-fail accepts, staple-required refuses.
        let port = nginx.port("TLS13_ECDSA_H2_STAPLED")
        let accepted = try await NIOHTTPClient.get(host: nginx.host, port: port, verifier: try verifier(.ocspStapled, .evaluateWithoutStaple))
        #expect(accepted.status == 200)
        let error = await thrownError {
            try await NIOHTTPClient.get(host: nginx.host, port: port, verifier: try verifier(.stapleRequired, .evaluateWithoutStaple))
        }
        #expect((error as? ServerTrustNIOError)?.trustError.code == .revocationStatusUnknown)
    }

    /// Live revocation works through the adapter with the caller's fetcher, off the event loop.
    @Test func liveOCSPThroughTheCallersFetcherAcceptsGoodAndRejectsRevoked() async throws {
        let nginx = try NginxInterop.environment()
        let evaluator = try CompositeTrustEvaluator([
            try PinnedKeyHashesTrustEvaluator([nginx.intermediatePin]), RevocationTrustEvaluator(options: .softFail, cache: RevocationCache()),
        ])
        let verifier = try ServerTrustNIOVerifier(
            trustManager: ServerTrustManager(evaluators: [try HostPattern(nginx.host): evaluator]), anchors: anchors(nginx),
            revocationFetcher: CurlRevocationFetcher())
        let good = try await NIOHTTPClient.get(host: nginx.host, port: nginx.port("TLS13_LIVE_OCSP_GOOD"), verifier: verifier)
        #expect(good.status == 200)
        let error = await thrownError { try await NIOHTTPClient.get(host: nginx.host, port: nginx.port("TLS12_LIVE_OCSP_REVOKED"), verifier: verifier) }
        let trustFailure = try #require(error as? ServerTrustNIOError)
        #expect(trustFailure.trustError.code == .revoked)
    }

    @Test func anIPAddressHostIsEvaluatedAgainstIPSANsAndSentWithoutSNI() async throws {
        let root = try LabPKI.makeRoot()
        let leaf = try root.issueLeaf(ipAddresses: ["127.0.0.1"])
        let server = try LocalTLSServer(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey)
        defer { server.stop() }
        let verifier = try ServerTrustNIOVerifier(
            trustManager: ServerTrustManager(evaluators: [try HostPattern("127.0.0.1"): try PinnedKeyHashesTrustEvaluator([leaf.certificate.spkiPin.description])]),
            anchors: try root.trustAnchors())
        #expect(try verifier.verification(forHost: "[::ffff:127.0.0.1]").serverHostname == nil)
        let result = try await NIOHTTPClient.get("/status/200", host: "127.0.0.1", port: server.port, verifier: verifier)
        #expect(result.status == 200)
        #expect(result.validatedChainPins.first == leaf.certificate.spkiPin.description)
    }
}

/// Completes its promise with the first error the pipeline reports, or on close.
private final class ErrorCatcher: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let promise: EventLoopPromise<Void>
    init(_ promise: EventLoopPromise<Void>) { self.promise = promise }
    func errorCaught(context: ChannelHandlerContext, error: any Error) { promise.fail(error) }
    func channelInactive(context: ChannelHandlerContext) { promise.succeed(()) }
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event { promise.succeed(()) }
    }
}
#endif
