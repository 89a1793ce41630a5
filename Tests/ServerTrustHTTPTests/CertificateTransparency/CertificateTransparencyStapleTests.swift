import Foundation
import ServerTrust
import ServerTrustLab
import ServerTrustTestSupport
import Testing
@testable import ServerTrustHTTP

/// #45 item 4 through `Session`, the cases beside `CertificateTransparencySessionTests`: SCTs
/// delivered in the stapled OCSP response, CT beside pins and stapled revocation, a resumed TLS
/// session, and the compliant outcome as `response.trust.evaluation?.certificateTransparency`.
@Suite struct CertificateTransparencyStapleTests {
    static let host = CertificateTransparencySessionTests.host
    typealias Fixture = CertificateTransparencySessionTests.Fixture

    /// A server for `chain` (leaf first) at one TLS version, stapling `staple`.
    static func server(_ chain: [Certificate], _ key: LabKey, version: LocalTLSServer.TLSVersion, staple: [UInt8]?) throws -> LocalTLSServer {
        var configuration = LocalTLSServer.Configuration(chain: chain, privateKeyPEM: key.pemPrivateKey)
        configuration.minimumTLSVersion = version
        configuration.maximumTLSVersion = version
        configuration.stapledOCSPResponse = staple
        return try LocalTLSServer(configuration)
    }

    /// A session for ``host`` on `server` whose host policy is `evaluator` with CT required as `ct`.
    static func session(
        _ fixture: Fixture, server: LocalTLSServer, evaluator: any ServerTrustEvaluating, ct: CertificateTransparencyRequirement,
        configure: (inout Session.Configuration) -> Void = { _ in }
    ) throws -> Session {
        var configuration = Session.Configuration()
        configure(&configuration)
        configuration.anchors = .bundle(try fixture.root.trustAnchors())
        configuration.resolve = [server.resolveEntry(host: host)]
        configuration.requestTimeout = .seconds(300)
        return try Session(
            configuration: configuration,
            trustManager: ServerTrustManager(
                policies: [try HostPattern(host): HostPolicy.custom(evaluator, certificateTransparency: ct)], certificateTransparencyLogs: fixture.logs))
    }

    static func get(_ session: Session, _ server: LocalTLSServer, _ path: String = "/status/200") async -> Result<Response, any Error> {
        await outcome { try await session.get(server.url(path, host: host)) }
    }

    static func refusal(_ result: Result<Response, any Error>) -> TrustError? { CertificateTransparencySessionTests.refusal(result) }

    // MARK: SCTs in the stapled OCSP response

    /// A leaf with no SCT of its own, whose staple carries SCTs over it: two operators accepted,
    /// one refused — at both versions (TLS 1.2 sends the staple after the chain).
    @Test(arguments: [LocalTLSServer.TLSVersion.v1_2, .v1_3], [true, false])
    func stapledSCTsAreJudged(version: LocalTLSServer.TLSVersion, twoOperators: Bool) async throws {
        let fixture = try Fixture()
        let leaf = try fixture.root.issueLeaf(dnsNames: [Self.host])
        let logs = twoOperators ? [fixture.logA, fixture.logB] : [fixture.logA, fixture.logA2]
        let scts = try logs.map { try $0.certificateSCT(for: leaf.certificate.derEncoded, at: Date(timeIntervalSinceNow: -60)) }
        let staple = try fixture.root.makeOCSPResponseDER(.good, for: leaf.certificate, signedCertificateTimestamps: scts)
        let server = try Self.server(leaf.chain, leaf.key, version: version, staple: staple)
        defer { server.stop() }
        let session = try Self.session(
            fixture, server: server, evaluator: try PinnedKeyHashesTrustEvaluator(pins: [leaf.certificate.spkiPin]), ct: .enforced())
        defer { session.shutdown() }
        let result = await Self.get(session, server)
        let refusal = Self.refusal(result)
        if twoOperators {
            #expect(refusal == nil, "\(version): \(String(describing: refusal))")
            let outcome = try? result.get().trust.evaluation?.certificateTransparency
            #expect(outcome?.isCompliant == true, "\(String(describing: outcome))")
            #expect(outcome?.observations.map(\.sct.source) == [.ocspStaple, .ocspStaple])
        } else {
            #expect(refusal?.code == .certificateTransparency, "\(version): \(String(describing: refusal))")
            #expect(refusal?.reason.contains("(notEnoughOperators)") == true, "\(version): \(String(describing: refusal))")
            #expect(server.requestsServed == 0)
        }
    }

    // MARK: CT beside pins and revocation

    enum Beside: String, CaseIterable, CustomStringConvertible {
        /// A "good" staple, SCTs from two operators: accepted.
        case goodStapleCompliantSCTs
        /// A "revoked" staple, SCTs from two operators: refused for revocation.
        case revokedStapleCompliantSCTs
        /// A "good" staple, one SCT: refused for CT.
        case goodStapleOneSCT
        var description: String { rawValue }
    }

    /// Pins, stapled revocation (`stapleRequired`) and enforced CT on one host: each refuses for
    /// its own reason, and the evaluation shows all three.
    @Test(arguments: Beside.allCases)
    func ctBesidePinsAndStapledRevocation(_ beside: Beside) async throws {
        let fixture = try Fixture()
        let leaf = try fixture.root.issueLeafWithEmbeddedSCTs(
            from: beside == .goodStapleOneSCT ? [fixture.logA] : [fixture.logA, fixture.logB], dnsNames: [Self.host])
        let status: OCSPResponseBuilder.CertificateStatus =
            beside == .revokedStapleCompliantSCTs ? .revoked(reason: .keyCompromise, date: Date(timeIntervalSinceNow: -600)) : .good
        let staple = try fixture.root.makeOCSPResponseDER(status, for: leaf.certificate)
        let server = try Self.server(leaf.chain, leaf.key, version: .v1_3, staple: staple)
        defer { server.stop() }
        let evaluator = try CompositeTrustEvaluator([
            try PinnedKeyHashesTrustEvaluator(pins: [leaf.certificate.spkiPin]),
            RevocationTrustEvaluator(options: .stapleRequired, cache: RevocationCache()),
        ])
        let session = try Self.session(fixture, server: server, evaluator: evaluator, ct: .enforced())
        defer { session.shutdown() }
        let result = await Self.get(session, server)
        let refusal = Self.refusal(result)
        switch beside {
        case .goodStapleCompliantSCTs:
            #expect(refusal == nil, "\(String(describing: refusal))")
            let trust = try? result.get().trust
            #expect(trust?.revocation.first?.status == .good)
            #expect(trust?.revocation.first?.source == .stapledOCSP)
            #expect(trust?.evaluation?.certificateTransparency?.isCompliant == true)
            #expect(trust?.evaluation?.pinMatches.isEmpty == false)
        case .revokedStapleCompliantSCTs:
            #expect(refusal?.code == .revoked, "\(String(describing: refusal))")
        case .goodStapleOneSCT:
            #expect(refusal?.code == .certificateTransparency, "\(String(describing: refusal))")
            #expect(refusal?.reason.contains("(notEnoughSCTs)") == true, "\(String(describing: refusal))")
        }
        if beside != .goodStapleCompliantSCTs { #expect(server.requestsServed == 0) }
    }

    // MARK: A resumed TLS session

    /// The second connection resumes the first's TLS 1.2 session (no chain evaluation in the
    /// handshake): the connection guard evaluates it, CT included, so its response still
    /// carries the CT outcome.
    @Test func aResumedSessionStillCarriesTheCTOutcome() async throws {
        let fixture = try Fixture()
        let leaf = try fixture.root.issueLeafWithEmbeddedSCTs(from: [fixture.logA, fixture.logB], dnsNames: [Self.host])
        let server = try Self.server(leaf.chain, leaf.key, version: .v1_2, staple: nil)
        defer { server.stop() }
        let session = try Self.session(
            fixture, server: server, evaluator: try PinnedKeyHashesTrustEvaluator(pins: [leaf.certificate.spkiPin]), ct: .enforced())
        defer { session.shutdown() }
        let first = await Self.get(session, server, "/close")
        let second = await Self.get(session, server)
        #expect(server.resumedHandshakes == 1, "\(server.statistics)")
        for (name, result) in [("full", first), ("resumed", second)] {
            let outcome = try? result.get().trust.evaluation?.certificateTransparency
            #expect(outcome?.isCompliant == true, "\(name): \(result)")
            #expect(outcome?.observations.count == 2, "\(name): \(String(describing: outcome))")
        }
    }

    /// A resumed session is judged by CT all the same: the same policy accepted the full
    /// handshake, and refuses the resumption once its log list is stale under `failClosed`
    /// (the evaluation clock moved 80 days on; the TLS session is still fresh).
    @Test func aResumedSessionIsStillRefusedByCT() async throws {
        let fixture = try Fixture()
        let leaf = try fixture.root.issueLeafWithEmbeddedSCTs(from: [fixture.logA, fixture.logB], dnsNames: [Self.host])
        let server = try Self.server(leaf.chain, leaf.key, version: .v1_2, staple: nil)
        defer { server.stop() }
        let now = Locked(Date())
        let session = try Self.session(
            fixture, server: server, evaluator: try PinnedKeyHashesTrustEvaluator(pins: [leaf.certificate.spkiPin]),
            ct: .enforced(staleLogList: .failClosed)
        ) { configuration in
            configuration.clock = { now.withLock { $0 } }
        }
        defer { session.shutdown() }
        let first = await Self.get(session, server, "/close")
        #expect((try? first.get().trust.evaluation?.certificateTransparency?.isCompliant) == true, "\(first)")
        now.withLock { $0 += 80 * 86_400 }
        let second = await Self.get(session, server)
        #expect(server.resumedHandshakes == 1, "\(server.statistics)")
        let refusal = Self.refusal(second)
        #expect(refusal?.code == .certificateTransparency, "\(String(describing: refusal))")
        #expect(refusal?.reason.contains("(staleLogList)") == true, "\(String(describing: refusal))")
        #expect(server.requestsServed == 1)
    }

    /// SCTs that came in the staple of the full handshake: the second connection resumes the
    /// TLS 1.2 session, which brings no staple, and the leaf embeds none, so the connection
    /// guard retries it on a full handshake (`ConnectionGuard.refusalBeforeEvaluating`).
    @Test func aResumedSessionOfAHostWhoseSCTsAreStapled() async throws {
        let fixture = try Fixture()
        let leaf = try fixture.root.issueLeaf(dnsNames: [Self.host])
        let scts = try [fixture.logA, fixture.logB].map { try $0.certificateSCT(for: leaf.certificate.derEncoded, at: Date(timeIntervalSinceNow: -60)) }
        let staple = try fixture.root.makeOCSPResponseDER(.good, for: leaf.certificate, signedCertificateTimestamps: scts)
        let server = try Self.server(leaf.chain, leaf.key, version: .v1_2, staple: staple)
        defer { server.stop() }
        let session = try Self.session(
            fixture, server: server, evaluator: try PinnedKeyHashesTrustEvaluator(pins: [leaf.certificate.spkiPin]), ct: .enforced())
        defer { session.shutdown() }
        let first = await Self.get(session, server, "/close")
        #expect(Self.refusal(first) == nil, "full: \(first)")
        #expect((try? first.get().trust.evaluation?.certificateTransparency?.observations.map(\.sct.source)) == [.ocspStaple, .ocspStaple])
        let second = await Self.get(session, server)
        // The resumed session brings no staple: refused for a full handshake, which does.
        #expect(Self.refusal(second) == nil, "resumed: \(second)")
        #expect((try? second.get().trust.evaluation?.certificateTransparency?.isCompliant) == true, "\(second)")
    }

    // MARK: The compliant outcome

    /// What a compliant response shows: each SCT's log, operator, source and verdict.
    @Test func theCompliantOutcomeIsInTheResponse() async throws {
        let fixture = try Fixture()
        let leaf = try fixture.root.issueLeafWithEmbeddedSCTs(from: [fixture.logA, fixture.logB], dnsNames: [Self.host])
        let server = try LocalTLSServer(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey)
        defer { server.stop() }
        let session = try Self.session(
            fixture, server: server, evaluator: try PinnedKeyHashesTrustEvaluator(pins: [leaf.certificate.spkiPin]), ct: .enforced())
        defer { session.shutdown() }
        let response = try await session.get(server.url("/status/200", host: Self.host))
        let outcome = try #require(response.trust.evaluation?.certificateTransparency)
        #expect(outcome.isCompliant)
        #expect(outcome.reason == nil)
        let seen = outcome.observations.map { [$0.log?.name ?? "-", $0.log?.operatorName ?? "-", $0.sct.source.rawValue, $0.status.rawValue] }
        #expect(seen.sorted { $0[0] < $1[0] } == [
            ["Log A", "Operator A", "embedded", "verified"],
            ["Log B", "Operator B", "embedded", "verified"],
        ])
        #expect(response.trust.findings.allSatisfy { $0.error.code != .certificateTransparency })
    }
}
