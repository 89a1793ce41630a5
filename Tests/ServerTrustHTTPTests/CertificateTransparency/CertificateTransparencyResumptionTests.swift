import Foundation
import ServerTrust
import ServerTrustLab
import ServerTrustTestSupport
import Testing
import ServerTrustHTTP

/// Issue #51, finding 3: a leaf embedding one SCT, made compliant at the full handshake by the
/// SCTs its staple carries. A resumed TLS 1.2 session brings no staple, so its embedded SCT
/// alone falls short: the connection guard retries on a full handshake instead of refusing, and
/// that full handshake is judged on everything the server sends.
@Suite struct CertificateTransparencyResumptionTests {
    static let host = CertificateTransparencySessionTests.host
    typealias Fixture = CertificateTransparencySessionTests.Fixture
    typealias Staple = CertificateTransparencyStapleTests

    /// A server whose leaf embeds log A's SCT and staples SCTs from logs A and B.
    static func server(_ fixture: Fixture) throws -> (LocalTLSServer, Pin) {
        let leaf = try fixture.root.issueLeafWithEmbeddedSCTs(from: [fixture.logA], dnsNames: [host])
        let scts = try [fixture.logA, fixture.logB].map { try $0.certificateSCT(for: leaf.certificate.derEncoded, at: Date(timeIntervalSinceNow: -60)) }
        let staple = try fixture.root.makeOCSPResponseDER(.good, for: leaf.certificate, signedCertificateTimestamps: scts)
        return (try Staple.server(leaf.chain, leaf.key, version: .v1_2, staple: staple), leaf.certificate.spkiPin)
    }

    /// The server of ``server(_:)``, pinned by its key with CT enforced, after a first request
    /// accepted on a full handshake whose connection the server closes (the next one resumes).
    static func acceptedOnAFullHandshake(_ fixture: Fixture) async throws -> (LocalTLSServer, Session) {
        let (server, pin) = try Self.server(fixture)
        let session: Session
        do {
            session = try Staple.session(fixture, server: server, evaluator: try PinnedKeyHashesTrustEvaluator(pins: [pin]), ct: .enforced())
        } catch {
            server.stop()
            throw error
        }
        let first = await Staple.get(session, server, "/close")
        #expect(Staple.refusal(first) == nil, "full: \(first)")
        return (server, session)
    }

    @Test func aResumedSessionWhoseEmbeddedSCTsFallShortIsRetriedOnAFullHandshake() async throws {
        let fixture = try Fixture()
        let (server, session) = try await Self.acceptedOnAFullHandshake(fixture)
        defer { server.stop() }
        defer { session.shutdown() }
        let second = await Staple.get(session, server)
        #expect(server.resumedHandshakes == 1, "\(server.statistics)")
        #expect(Staple.refusal(second) == nil, "resumed: \(second)")
        let outcome = try? second.get().trust.evaluation?.certificateTransparency
        #expect(outcome?.isCompliant == true, "\(String(describing: outcome))")
        #expect(outcome?.observations.map(\.sct.source) == [.embedded, .ocspStaple, .ocspStaple], "\(String(describing: outcome))")
        #expect(server.requestsServed == 2)
    }

    /// The retry's full handshake is judged like any other: with log B gone from the list, the
    /// staple no longer makes up the shortfall, and the server is refused on it.
    @Test func theFullHandshakeOfTheRetryStillRefusesANonCompliantServer() async throws {
        let fixture = try Fixture()
        let (server, session) = try await Self.acceptedOnAFullHandshake(fixture)
        defer { server.stop() }
        defer { session.shutdown() }
        var list = TestCTLogList()
        for log in [fixture.logA, fixture.logA2] { list.add(log, state: .usable, since: Date(timeIntervalSinceNow: -100 * 86_400)) }
        try fixture.logs.replace(with: try CTLogList(json: list.json(timestamp: Date(timeIntervalSinceNow: -86_400))))
        let second = await Staple.get(session, server)
        #expect(server.resumedHandshakes == 1, "\(server.statistics)")
        let refusal = Staple.refusal(second)
        #expect(refusal?.code == .certificateTransparency, "\(String(describing: refusal))")
        #expect(refusal?.reason.contains("(unknownLog)") == true, "\(String(describing: refusal))")
        // Refused on the retry's full handshake, which carried the staple.
        #expect(refusal?.reason.contains("ocspStaple SCT") == true, "\(String(describing: refusal))")
        #expect(server.requestsServed == 1)
    }
}
