#if NIOAdapter
import Foundation
import NIOCore
import NIOSSL
import ServerTrust
import ServerTrustLab
import ServerTrustNIO
import ServerTrustTestSupport
import Testing

/// #45 item 4 through the NIO adapter, "within what NIO exposes": swift-nio-ssl's verification
/// callback sees the peer's certificates only, so a host's Certificate Transparency requirement
/// is judged on the SCTs embedded in the leaf. Embedded SCTs from two operators are accepted;
/// a leaf without SCTs, or a server that sends its SCTs only in the TLS extension, is refused
/// under enforced CT with `notEnoughSCTs` and a reason saying the other sources were not
/// available; report-only accepts and reports.
@Suite struct CertificateTransparencyNIOTests {
    static let host = "ct.nio.servertrust.test"

    final class Fixture: @unchecked Sendable {
        let root: LabCA
        let logA = try! TestCTLog(description: "Log A", operatorName: "Operator A")
        let logB = try! TestCTLog(description: "Log B", operatorName: "Operator B")
        let logs: CertificateTransparencyLogs
        let captured = CapturedLogs()

        init() throws {
            root = try LabPKI.makeRoot(commonName: "CT NIO Test Root")
            var list = TestCTLogList()
            for log in [logA, logB] { list.add(log, state: .usable, since: Date(timeIntervalSinceNow: -100 * 86_400)) }
            logs = try CertificateTransparencyLogs(try CTLogList(json: list.json(timestamp: Date(timeIntervalSinceNow: -86_400))))
        }

        /// A verifier pinning `pin` with CT required as `ct`, logging to ``captured``.
        func verifier(pin: Pin, ct: CertificateTransparencyRequirement) throws -> ServerTrustNIOVerifier {
            let policy = HostPolicy.custom(try PinnedKeyHashesTrustEvaluator(pins: [pin]), certificateTransparency: ct)
            return try ServerTrustNIOVerifier(
                trustManager: ServerTrustManager(policies: [try HostPattern(CertificateTransparencyNIOTests.host): policy], certificateTransparencyLogs: logs),
                anchors: try root.trustAnchors(), logger: captured.logger)
        }
    }

    /// One GET through the adapter: the result, and the connection's verification.
    static func get(port: Int, verifier: ServerTrustNIOVerifier) async -> (Result<NIOHTTPResult, any Error>, HostTrustVerification?) {
        let made = Locked<HostTrustVerification?>(nil)
        let result: Result<NIOHTTPResult, any Error>
        do {
            result = .success(try await NIOHTTPClient.get("/status/200", host: host, port: port, verifier: verifier) { verification in
                made.withLock { $0 = verification }
            })
        } catch {
            result = .failure(error)
        }
        return (result, made.withLock { $0 })
    }

    @Test func embeddedSCTsFromTwoOperatorsAreAcceptedUnderEnforcedCT() async throws {
        let fixture = try Fixture()
        let leaf = try fixture.root.issueLeafWithEmbeddedSCTs(from: [fixture.logA, fixture.logB], dnsNames: [Self.host])
        let server = try LocalTLSServer(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey)
        defer { server.stop() }
        let (result, verification) = await Self.get(
            port: Int(server.port), verifier: try fixture.verifier(pin: leaf.certificate.spkiPin, ct: .enforced()))
        #expect((try? result.get())?.status == 200, "\(result)")
        let outcome = try #require(verification?.lastEvaluation?.certificateTransparency)
        #expect(outcome.isCompliant, "\(outcome)")
        #expect(outcome.observations.map(\.sct.source) == [.embedded, .embedded])
        #expect(Set(outcome.observations.map(\.status)) == [.verified])
        #expect(Set(outcome.observations.compactMap(\.log?.operatorName)) == ["Operator A", "Operator B"])
        #expect(ServerTrustNIOVerifier.certificateTransparencySources == [.embedded])
    }

    /// The refusal a CT-enforced host gets here: code, reason, and the note on what NIO cannot see.
    static func expectNotEnoughSCTs(_ result: Result<NIOHTTPResult, any Error>, _ verification: HostTrustVerification?) {
        guard case .failure(let error) = result else {
            Issue.record("accepted: \(result)")
            return
        }
        let refusal = (error as? ServerTrustNIOError)?.trustError
        #expect(refusal?.code == .certificateTransparency, "\(error)")
        #expect(refusal?.reason.contains("Certificate Transparency (notEnoughSCTs)") == true, "\(error)")
        #expect(refusal?.reason.contains("gives no TLS-extension SCTs and no stapled OCSP response") == true, "\(error)")
        #expect((error as? ServerTrustNIOError)?.evaluation?.certificateTransparency?.reason == .notEnoughSCTs)
        #expect(verification?.lastFailure?.trustError.code == .certificateTransparency)
        #expect(verification?.acceptedCount == 0)
    }

    @Test func aLeafWithoutSCTsIsRefusedUnderEnforcedCT() async throws {
        let fixture = try Fixture()
        let leaf = try fixture.root.issueLeaf(dnsNames: [Self.host])
        let server = try LocalTLSServer(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey)
        defer { server.stop() }
        let (result, verification) = await Self.get(
            port: Int(server.port), verifier: try fixture.verifier(pin: leaf.certificate.spkiPin, ct: .enforced()))
        Self.expectNotEnoughSCTs(result, verification)
        #expect(verification?.lastEvaluation?.certificateTransparency?.observations.isEmpty == true)
    }

    /// SCTs from two operators, sent only in the TLS extension — what a `Session` accepts
    /// (`CertificateTransparencySessionTests`) — never reach swift-nio-ssl's callback: refused.
    @Test func sctsSentOnlyInTheTLSExtensionAreNotSeenAndTheHostIsRefused() async throws {
        let fixture = try Fixture()
        let leaf = try fixture.root.issueLeaf(dnsNames: [Self.host])
        let scts = try [fixture.logA, fixture.logB].map { try $0.certificateSCT(for: leaf.certificate.derEncoded, at: Date(timeIntervalSinceNow: -60)) }
        let server = try OpenSSLServer.start(
            leaf: leaf.certificate.pemEncoded, chain: fixture.root.certificate.pemEncoded, key: leaf.key.pemPrivateKey, arguments: "-tls1_2",
            connections: 1, signedCertificateTimestamps: scts)
        defer { server.removeFiles() }
        let (result, verification) = await Self.get(
            port: server.port, verifier: try fixture.verifier(pin: leaf.certificate.spkiPin, ct: .enforced()))
        Self.expectNotEnoughSCTs(result, verification)
    }

    /// Report-only: accepted; the shortfall is the evaluation's CT outcome and an informational
    /// finding, logged with its reason.
    @Test func reportOnlyAcceptsAndTheOutcomeIsVisible() async throws {
        let fixture = try Fixture()
        let leaf = try fixture.root.issueLeafWithEmbeddedSCTs(from: [fixture.logA], dnsNames: [Self.host])
        let server = try LocalTLSServer(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey)
        defer { server.stop() }
        let (result, verification) = await Self.get(
            port: Int(server.port), verifier: try fixture.verifier(pin: leaf.certificate.spkiPin, ct: .reportOnly()))
        #expect((try? result.get())?.status == 200, "\(result)")
        let evaluation = try #require(verification?.lastEvaluation)
        #expect(evaluation.failure == nil)
        #expect(evaluation.certificateTransparency?.reason == .notEnoughSCTs, "\(String(describing: evaluation.certificateTransparency))")
        #expect(evaluation.certificateTransparency?.observations.map(\.sct.source) == [.embedded])
        let finding = evaluation.findings.first { $0.error.code == .certificateTransparency }
        #expect(finding?.mode == .informational, "\(evaluation.findings)")
        #expect(fixture.captured.all.contains { $0.metadata["reason"] == "certificateTransparency" }, "\(fixture.captured.all)")
        #expect(verification?.acceptedCount == 1)
    }
}
#endif
