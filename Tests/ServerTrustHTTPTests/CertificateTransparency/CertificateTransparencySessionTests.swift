import Foundation
import ServerTrust
import ServerTrustLab
import ServerTrustTestSupport
import Testing
import ServerTrustHTTP

/// #45 "done when", through `Session`: a host with CT enforced beside its pins is refused when
/// its SCTs do not satisfy the policy and accepted when they do — embedded, by TLS extension
/// (the session asks for SCTs) — on every request of the session; report-only never refuses.
@Suite struct CertificateTransparencySessionTests {
    static let host = "ct.servertrust.test"

    final class Fixture: @unchecked Sendable {
        let root: LabCA
        let logA = try! TestCTLog(description: "Log A", operatorName: "Operator A")
        let logA2 = try! TestCTLog(description: "Log A2", operatorName: "Operator A")
        let logB = try! TestCTLog(description: "Log B", operatorName: "Operator B")
        let unlisted = try! TestCTLog(description: "Unlisted", operatorName: "Operator C")
        let logs: CertificateTransparencyLogs

        init() throws {
            root = try LabPKI.makeRoot(commonName: "CT Session Test Root")
            var list = TestCTLogList()
            for log in [logA, logA2, logB] { list.add(log, state: .usable, since: Date(timeIntervalSinceNow: -100 * 86_400)) }
            logs = try CertificateTransparencyLogs(try CTLogList(json: list.json(timestamp: Date(timeIntervalSinceNow: -86_400))))
        }

        func session(port: Int, pin: Pin, ct: CertificateTransparencyRequirement) throws -> Session {
            var configuration = Session.Configuration()
            configuration.anchors = .bundle(try root.trustAnchors())
            configuration.resolve = ["\(CertificateTransparencySessionTests.host):\(port):127.0.0.1"]
            configuration.requestTimeout = .seconds(300)
            let policy = HostPolicy.custom(try PinnedKeyHashesTrustEvaluator(pins: [pin]), certificateTransparency: ct)
            return try Session(
                configuration: configuration,
                trustManager: ServerTrustManager(policies: [try HostPattern(CertificateTransparencySessionTests.host): policy], certificateTransparencyLogs: logs))
        }
    }

    /// Two requests on one session (the second on the kept-alive connection): each is judged.
    static func outcomes(_ session: Session, port: Int) async -> [Result<Response, any Error>] {
        var results: [Result<Response, any Error>] = []
        for _ in 0..<2 {
            do { results.append(.success(try await session.get("https://\(host):\(port)/"))) } catch { results.append(.failure(error)) }
        }
        return results
    }

    static func refusal(_ result: Result<Response, any Error>) -> TrustError? {
        if case .failure(let error) = result { return (error as? SessionError)?.trustError ?? TrustError(.openSSLFailure, "\(error)") }
        return nil
    }

    @Test(arguments: [
        ("two operators", ["A", "B"], nil),
        ("one operator", ["A", "A2"], "notEnoughOperators"),
        ("one SCT", ["A"], "notEnoughSCTs"),
        ("an unlisted log", ["A", "Unlisted"], "unknownLog"),
    ] as [(String, [String], String?)])
    func embeddedSCTsAreJudgedOnEveryRequest(name: String, logNames: [String], reason: String?) async throws {
        let fixture = try Fixture()
        let byName = ["A": fixture.logA, "A2": fixture.logA2, "B": fixture.logB, "Unlisted": fixture.unlisted]
        let leaf = try fixture.root.issueLeafWithEmbeddedSCTs(from: logNames.map { byName[$0]! }, dnsNames: [Self.host])
        let server = try LocalTLSServer(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey)
        defer { server.stop() }
        let session = try fixture.session(port: Int(server.port), pin: leaf.certificate.spkiPin, ct: .enforced())
        defer { session.shutdown() }
        for result in await Self.outcomes(session, port: Int(server.port)) {
            let refusal = Self.refusal(result)
            if let reason {
                #expect(refusal?.code == .certificateTransparency, "\(name): \(String(describing: refusal))")
                #expect(refusal?.reason.contains("(\(reason))") == true, "\(name): \(String(describing: refusal))")
            } else {
                #expect(refusal == nil, "\(name): \(String(describing: refusal))")
            }
        }
    }

    /// Report-only: never refused; the shortfall is an informational finding in the report.
    @Test func reportOnlyNeverRefusesAndReportsTheOutcome() async throws {
        let fixture = try Fixture()
        let leaf = try fixture.root.issueLeafWithEmbeddedSCTs(from: [fixture.logA], dnsNames: [Self.host])
        let server = try LocalTLSServer(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey)
        defer { server.stop() }
        let session = try fixture.session(port: Int(server.port), pin: leaf.certificate.spkiPin, ct: .reportOnly())
        defer { session.shutdown() }
        for result in await Self.outcomes(session, port: Int(server.port)) {
            guard case .success(let response) = result else {
                Issue.record("report-only refused: \(result)")
                continue
            }
            let finding = response.trust.findings.first { $0.error.code == .certificateTransparency }
            #expect(finding?.mode == .informational, "\(response.trust.findings)")
            #expect(finding?.error.reason.contains("(notEnoughSCTs)") == true, "\(String(describing: finding))")
        }
    }

    /// SCTs only in the TLS extension (`openssl s_server -serverinfo`): the session asks for
    /// them because the host requires CT; two operators' SCTs accepted, one refused.
    @Test(arguments: [true, false])
    func tlsExtensionSCTsAreAskedForAndJudged(twoOperators: Bool) async throws {
        let fixture = try Fixture()
        let leaf = try fixture.root.issueLeaf(dnsNames: [Self.host])
        let logs = twoOperators ? [fixture.logA, fixture.logB] : [fixture.logA, fixture.logA2]
        let scts = try logs.map { try $0.certificateSCT(for: leaf.certificate.derEncoded, at: Date(timeIntervalSinceNow: -60)) }
        let server = try OpenSSLServer.start(
            leaf: leaf.certificate.pemEncoded, chain: fixture.root.certificate.pemEncoded, key: leaf.key.pemPrivateKey, arguments: "-tls1_2", connections: 1,
            signedCertificateTimestamps: scts)
        defer { server.removeFiles() }
        let session = try fixture.session(port: Int(server.port), pin: leaf.certificate.spkiPin, ct: .enforced())
        defer { session.shutdown() }
        let refusal: TrustError?
        do { _ = try await session.get("https://\(Self.host):\(server.port)/"); refusal = nil } catch { refusal = (error as? SessionError)?.trustError ?? TrustError(.openSSLFailure, "\(error)") }
        if twoOperators {
            #expect(refusal == nil, "\(String(describing: refusal))")
        } else {
            #expect(refusal?.code == .certificateTransparency && refusal?.reason.contains("(notEnoughOperators)") == true, "\(String(describing: refusal))")
        }
    }
}
