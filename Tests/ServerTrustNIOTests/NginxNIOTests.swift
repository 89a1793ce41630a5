#if NIOAdapter
import Foundation
import NIOSSL
import ServerTrust
import ServerTrustNIO
import ServerTrustTestSupport
import Testing

/// A SwiftNIO HTTP/1.1 client through `NIOSSLClientHandler` and ServerTrustNIO against nginx
/// (scripts/interop/nginx.sh) and, for the impostor, an in-process server whose CA the client
/// also trusts.
@Suite struct NginxNIOTests {
    private func nginxAnchors(_ nginx: NginxInterop.Environment, plus extra: [Certificate] = []) throws -> TrustAnchors {
        try TrustAnchors(Certificate.certificates(contentsOfFile: nginx.root) + extra)
    }

    private func verifier(
        _ nginx: NginxInterop.Environment, _ evaluators: [String: any ServerTrustEvaluating], anchors: TrustAnchors? = nil
    ) throws -> ServerTrustNIOVerifier {
        try ServerTrustNIOVerifier(
            trustManager: ServerTrustManager(evaluators: Dictionary(uniqueKeysWithValues: try evaluators.map { (try HostPattern($0.key), $0.value) })),
            anchors: anchors ?? nginxAnchors(nginx))
    }

    @Test(arguments: [("TLS13_ECDSA_H2_STAPLED", false), ("TLS12_RSA_H1", true)])
    func thePinnedGenuineServerIsAcceptedAndItsValidatedChainHandedToNIOSSL(portName: String, leafIsRSA: Bool) async throws {
        let nginx = try NginxInterop.environment()
        let leafPin = leafIsRSA ? nginx.rsaLeafPin : nginx.ecdsaLeafPin
        let verifier = try verifier(nginx, [nginx.host: try PinnedKeyHashesTrustEvaluator([leafPin])])
        let result = try await NIOHTTPClient.get(host: nginx.host, port: nginx.port(portName), verifier: verifier)
        #expect(result.status == 200)
        #expect(result.body == "interop \(nginx.port(portName))\n")
        #expect(result.validatedChainPins.count == 3)
        #expect(result.validatedChainPins.first == leafPin)
        #expect(result.validatedChainPins.contains(nginx.intermediatePin))
    }

    @Test func aContextWithSwiftNIOSSLsOwnHostnameCheckStillAcceptsTheGenuineServer() async throws {
        let nginx = try NginxInterop.environment()
        let verifier = try verifier(nginx, [nginx.host: try PinnedKeyHashesTrustEvaluator([nginx.intermediatePin])])
        let result = try await NIOHTTPClient.get(
            host: nginx.host, port: nginx.port("TLS13_RSA_H2"), verifier: verifier,
            context: try NIOHTTPClient.context(.fullVerification))
        #expect(result.status == 200)
        #expect(result.validatedChainPins[1] == nginx.intermediatePin)
    }

    @Test func wrongPinsRejectTheGenuineServerWithThePinMismatchVisibleInThePipeline() async throws {
        let nginx = try NginxInterop.environment()
        let verifier = try verifier(nginx, [nginx.host: try PinnedKeyHashesTrustEvaluator([nginx.rsaLeafPin])])
        let error = await thrownError { try await NIOHTTPClient.get(host: nginx.host, port: nginx.port("TLS13_ECDSA_H2_STAPLED"), verifier: verifier) }
        let trustFailure = try #require(error as? ServerTrustNIOError)
        #expect(trustFailure.trustError.code == .pinMismatch)
        #expect(trustFailure.evaluator == "PinnedKeyHashesTrustEvaluator")
        #expect(trustFailure.pattern?.description == nginx.host)
        #expect(trustFailure.trustError.evidence.configuredPins.map(\.description) == [nginx.rsaLeafPin])
        #expect(trustFailure.trustError.evidence.chain.first?.pin.description == nginx.ecdsaLeafPin)
        #expect(trustFailure.underlying != nil)
    }

    /// The impostor's CA is one of the client's anchors, so default validation passes (the
    /// control) and only the pin, which names nginx's intermediate, refuses it.
    @Test func anImpostorFromACATheClientTrustsIsRejectedByThePin() async throws {
        let nginx = try NginxInterop.environment()
        let impostorPKI = try GenuineAndImpostor.Impostor(host: nginx.host)
        let (impostorCA, impostor) = (impostorPKI.root, impostorPKI.leaf)
        let server = try LocalTLSServer(chain: impostor.chain, privateKeyPEM: impostor.key.pemPrivateKey)
        defer { server.stop() }
        let anchors = try nginxAnchors(nginx, plus: [impostorCA.certificate])

        let trusting = try verifier(nginx, [nginx.host: DefaultTrustEvaluator()], anchors: anchors)
        let accepted = try await NIOHTTPClient.get("/status/200", host: nginx.host, port: server.port, verifier: trusting)
        #expect(accepted.status == 200)
        #expect(accepted.validatedChainPins == [impostor.certificate.spkiPin.description, impostorCA.certificate.spkiPin.description])

        let pinned = try verifier(nginx, ["**.servertrust.test": try PinnedKeyHashesTrustEvaluator([nginx.intermediatePin])], anchors: anchors)
        let error = await thrownError { try await NIOHTTPClient.get("/status/200", host: nginx.host, port: server.port, verifier: pinned) }
        let trustFailure = try #require(error as? ServerTrustNIOError)
        #expect(trustFailure.trustError.code == .pinMismatch)
        #expect(trustFailure.pattern?.description == "**.servertrust.test")
        #expect(trustFailure.host == nginx.host)
        #expect(trustFailure.trustError.evidence.chain.map(\.pin) == [impostor.certificate.spkiPin, impostorCA.certificate.spkiPin])
        #expect(server.requestsServed == 1)
    }

    /// nginx's genuine, pinned chain presented for a name its leaf does not carry.
    @Test func theGenuineChainIsRejectedForAHostItsLeafDoesNotName() async throws {
        let nginx = try NginxInterop.environment()
        let verifier = try verifier(nginx, ["**.servertrust.test": try PinnedKeyHashesTrustEvaluator([nginx.intermediatePin])])
        let error = await thrownError {
            try await NIOHTTPClient.get(host: "other.servertrust.test", port: nginx.port("TLS12_ECDSA_H1_STAPLED"), verifier: verifier)
        }
        let trustFailure = try #require(error as? ServerTrustNIOError)
        #expect(trustFailure.trustError.code == .hostMismatch)
        #expect(trustFailure.host == "other.servertrust.test")
        #expect(trustFailure.evaluator == "PinnedKeyHashesTrustEvaluator")
    }

    @Test func aHostIsMatchedInItsNormalisedFormAndSentAsSNIOnce() async throws {
        let nginx = try NginxInterop.environment()
        let verifier = try verifier(nginx, [nginx.host: try PinnedKeyHashesTrustEvaluator([nginx.intermediatePin])])
        let verification = try verifier.verification(forHost: nginx.host.uppercased() + ".")
        #expect(verification.host.name == nginx.host)
        #expect(verification.serverHostname == nginx.host)
        #expect(verification.pattern?.description == nginx.host)
        let result = try await NIOHTTPClient.get(host: nginx.host.uppercased() + ".", port: nginx.port("TLS13_RSA_H2"), verifier: verifier)
        #expect(result.status == 200)
    }
}

#endif
