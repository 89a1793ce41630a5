#if NIOAdapter
import Foundation
import NIOCore
import NIOEmbedded
import NIOPosix
import NIOSSL
import ServerTrust
import ServerTrustNIO
import ServerTrustTestSupport
import Testing

/// Issue #33: a NIO (and so grpc-swift) connection is evaluated through the one entry point
/// every client path uses, so it is counted in `TrustCounters` and logged as a `Session`'s
/// evaluations are (debug for each, error for each failure, with the same metadata), and a
/// host policy's TLS floor is checked against the context.
@Suite struct NIOCountersAndLogsTests {
    static let host = "nio.servertrust.test"

    @Test func everyNIOEvaluationIsCountedAndEveryFailureLoggedWithItsMetadata() async throws {
        let root = try LabPKI.makeRoot(commonName: "NIO Counters Root")
        let leaf = try root.issueLeaf(dnsNames: [Self.host])
        let server = try LocalTLSServer(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey)
        defer { server.stop() }
        let counters = TrustCounters()
        let logs = CapturedLogs()
        func verifier(_ pin: Pin) throws -> ServerTrustNIOVerifier {
            try ServerTrustNIOVerifier(
                trustManager: ServerTrustManager(evaluators: [try HostPattern(Self.host): try PinnedKeyHashesTrustEvaluator(pins: [pin])]),
                anchors: try root.trustAnchors(), counters: counters, logger: logs.logger)
        }

        let accepted = try await NIOHTTPClient.get("/status/200", host: Self.host, port: server.port, verifier: verifier(leaf.certificate.spkiPin))
        #expect(accepted.status == 200)
        #expect(counters.snapshot.evaluations == 1)
        #expect(counters.snapshot.failures == 0)
        #expect(logs.at(.debug).first?.metadata["host"] == "\(Self.host)")
        #expect(logs.at(.debug).first?.metadata["result"] == "verified")

        let wrong = try Pin("sha256/" + Data(repeating: 9, count: 32).base64EncodedString())
        do {
            _ = try await NIOHTTPClient.get("/status/200", host: Self.host, port: server.port, verifier: verifier(wrong))
            Issue.record("the wrong pin was accepted")
        } catch {
            #expect((error as? ServerTrustNIOError)?.trustError.code == .pinMismatch, "\(error)")
        }
        #expect(counters.snapshot.evaluations == 2)
        #expect(counters.snapshot.failuresByReason == ["pinMismatch": 1])
        #expect(logs.at(.error).count == 1)
        #expect(logs.at(.error).first?.metadata == [
            "host": "\(Self.host)", "evaluator": "PinnedKeyHashesTrustEvaluator", "reason": "pinMismatch", "mode": "enforced",
        ])
    }

    @Test func aHostPolicyRequiringTLS13RefusesAContextThatAllowsTLS12() throws {
        let verifier = try ServerTrustNIOVerifier(
            trustManager: ServerTrustManager(policies: [try HostPattern(Self.host): HostPolicy(minimumTLSVersion: .tls13)]),
            anchors: try LabPKI.makeRoot().trustAnchors())
        let refusing = EmbeddedChannel()
        defer { _ = try? refusing.finish() }
        let error = #expect(throws: ServerTrustNIOError.self) {
            try verifier.addClientHandlers(
                to: refusing.pipeline.syncOperations, context: try NIOHTTPClient.context(minimumTLSVersion: .tlsv12), host: Self.host)
        }
        #expect(error?.trustError.code == .tlsVersionBelowPolicy)
        #expect(error?.trustError.reason.contains("requires TLS 1.3") == true)
        #expect(throws: ChannelPipelineError.notFound) { try refusing.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self) }

        let accepting = EmbeddedChannel()
        defer { _ = try? accepting.finish() }
        try verifier.addClientHandlers(
            to: accepting.pipeline.syncOperations, context: try NIOHTTPClient.context(minimumTLSVersion: .tlsv13), host: Self.host)
        #expect((try? accepting.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self)) != nil)
    }

    /// Fail closed: a verification made without the context check (its callback given to a
    /// transport by hand, as grpc-swift's customVerificationCallback is) cannot confirm a TLS 1.3
    /// floor, so it refuses every server for that host.
    @Test func aTLS13FloorThatNoContextCheckConfirmedRefusesEveryServer() async throws {
        let root = try LabPKI.makeRoot(commonName: "NIO Floor Root")
        let leaf = try root.issueLeaf(dnsNames: [Self.host])
        let verifier = try ServerTrustNIOVerifier(
            trustManager: ServerTrustManager(policies: [try HostPattern(Self.host): HostPolicy(minimumTLSVersion: .tls13)]),
            anchors: try root.trustAnchors())
        let byHand = try verifier.verification(forHost: Self.host)
        let promise = MultiThreadedEventLoopGroup.singleton.next().makePromise(of: NIOSSLVerificationResultWithMetadata.self)
        byHand.callback([try NIOSSLCertificate(bytes: leaf.certificate.derEncoded, format: .der)], promise)
        do {
            _ = try await promise.futureResult.get()
            Issue.record("an unconfirmed TLS 1.3 floor was accepted")
        } catch {
            #expect((error as? ServerTrustNIOError)?.trustError.code == .tlsVersionBelowPolicy, "\(error)")
        }
        #expect(byHand.lastFailure?.trustError.reason.contains("cannot confirm the negotiated protocol") == true)
        #expect(byHand.refusedCount == 1)

        // Through addClientHandlers with a TLS 1.3 context, the same server is accepted.
        let server = try LocalTLSServer(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey)
        defer { server.stop() }
        let accepted = try await NIOHTTPClient.get(
            "/status/200", host: Self.host, port: server.port, verifier: verifier, context: try NIOHTTPClient.context(minimumTLSVersion: .tlsv13))
        #expect(accepted.status == 200)
    }
}
#endif
