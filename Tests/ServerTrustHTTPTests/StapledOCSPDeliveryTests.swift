import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// The staple reaches evaluators that read it, in TLS 1.2 (where it arrives after the chain, so
/// the evaluation runs in the status callback) as in TLS 1.3.
@Suite struct StapledOCSPDeliveryTests {
    /// Records the staple it was shown; rejects when `requireStaple` and there is none.
    final class StapleRecorder: ServerTrustEvaluating {
        let requireStaple: Bool
        let seen = Locked<[[UInt8]?]>([])
        init(requireStaple: Bool) { self.requireStaple = requireStaple }
        var usesStapledOCSPResponse: Bool { true }
        func evaluate(_ trust: PeerTrust, forHost host: String) throws {
            seen.withLock { $0.append(trust.stapledOCSPResponse) }
            try DefaultTrustEvaluator().evaluate(trust, forHost: host)
            if requireStaple && trust.stapledOCSPResponse == nil {
                throw TrustError(.revocationStatusUnknown, "No stapled OCSP response.", evaluator: name, host: host)
            }
        }
    }

    static let staple: [UInt8] = Array("not parsed by this evaluator, only carried".utf8)

    @Test(arguments: [LocalTLSServer.TLSVersion.v1_2, .v1_3])
    func theStapleReachesTheEvaluator(version: LocalTLSServer.TLSVersion) async throws {
        let fixture = try SessionFixture(minimumTLSVersion: version, maximumTLSVersion: version)
        fixture.server.setStapledOCSPResponse(Self.staple)
        let recorder = StapleRecorder(requireStaple: true)
        let session = try fixture.session([SessionFixture.host: recorder])
        defer { session.shutdown() }
        let response = try await session.get(fixture.url("/status/200").absoluteString)
        #expect(response.status == 200)
        #expect(recorder.seen.withLock { $0 } == [Self.staple])  // evaluated once, with the staple
        #expect(response.trust.validatedChain.count == 3)
    }

    @Test(arguments: [LocalTLSServer.TLSVersion.v1_2, .v1_3])
    func aRejectionForAMissingStapleFailsTheHandshake(version: LocalTLSServer.TLSVersion) async throws {
        let fixture = try SessionFixture(minimumTLSVersion: version, maximumTLSVersion: version)
        let recorder = StapleRecorder(requireStaple: true)
        let session = try fixture.session([SessionFixture.host: recorder])
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/status/200").absoluteString) }.sessionError
        #expect(error?.trustError?.code == .revocationStatusUnknown)
        #expect(error?.curlCode == 35)  // CURLE_SSL_CONNECT_ERROR: rejected in the status callback
        #expect(fixture.server.requestsServed == 0)
    }

    @Test func aResumedSessionIsEvaluatedByTheGuardWithoutAStaple() async throws {
        let fixture = try SessionFixture(maximumTLSVersion: .v1_2)
        fixture.server.setStapledOCSPResponse(Self.staple)
        let recorder = StapleRecorder(requireStaple: false)
        let session = try fixture.session([SessionFixture.host: recorder])
        defer { session.shutdown() }
        _ = try await session.get(fixture.url("/close").absoluteString)
        _ = try await session.get(fixture.url("/status/200").absoluteString)
        #expect(fixture.server.resumedHandshakes == 1)
        // Full handshake: evaluated with the staple. Resumed: no staple is sent again, and the
        // guard evaluated the cached peer chain.
        #expect(recorder.seen.withLock { $0 } == [Self.staple, nil])
    }

    @Test(arguments: ["TLS13_ECDSA_H2_STAPLED", "TLS12_ECDSA_H1_STAPLED"])
    func nginxStaplesAreDelivered(port: String) async throws {
        let nginx = try NginxInterop.environment()
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try TrustAnchors(contentsOfFile: nginx.root))
        configuration.resolve = nginx.resolve
        let recorder = StapleRecorder(requireStaple: true)
        let session = try Session(configuration: configuration, trustManager: try ServerTrustManager(evaluators: [try HostPattern(nginx.host): recorder]))
        defer { session.shutdown() }
        _ = try await session.get(nginx.url(port))
        let staple = try #require(recorder.seen.withLock { $0.first } ?? nil)
        let parsed = try OCSPResponse(derEncoded: staple)  // nginx served what `openssl ocsp` made
        #expect(parsed.responseStatus == .successful)
    }
}
