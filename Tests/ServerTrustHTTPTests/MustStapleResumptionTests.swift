import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// Audit finding 7: a resumed TLS session brings no staple (the server sends it in full
/// handshakes only), so a must-staple host failed on every resumed connection. The guard now
/// sends such a request again on a full handshake, and the policy stops resuming sessions.
@Suite struct MustStapleResumptionTests {
    private struct Setup {
        let root: LabCA
        let intermediate: LabCA
        let leaf: LabLeaf
        let server: LocalTLSServer

        init(version: LocalTLSServer.TLSVersion, stapled: Bool) throws {
            root = try LabPKI.makeRoot(commonName: "Must-Staple Root")
            intermediate = try root.issueIntermediate(commonName: "Must-Staple Intermediate")
            leaf = try intermediate.issueLeaf(dnsNames: [SessionFixture.host], mustStaple: true)
            var configuration = LocalTLSServer.Configuration(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey)
            configuration.minimumTLSVersion = version
            configuration.maximumTLSVersion = version
            server = try LocalTLSServer(configuration)
            if stapled {
                server.setStapledOCSPResponse(
                    try OCSPResponseBuilder(signer: intermediate).adding(.good, for: leaf.certificate, issuedBy: intermediate).build())
            }
        }

        func session() throws -> Session {
            var configuration = Session.Configuration()
            configuration.anchors = .bundle(try root.trustAnchors())
            configuration.resolve = [server.resolveEntry(host: SessionFixture.host)]
            let evaluator = RevocationTrustEvaluator(options: .softFail, cache: RevocationCache())
            return try Session(configuration: configuration, trustManager: try ServerTrustManager(evaluators: [try HostPattern(SessionFixture.host): evaluator]))
        }

        /// `/close`: the server closes after the response, so the next request needs a new
        /// connection and, with the session cache on, resumes. Waits until the close is seen.
        func requestOnItsOwnConnection(_ session: Session) async -> Result<Response, any Error> {
            let result = await outcome { try await session.get(server.url("/close", host: SessionFixture.host)) }
            while server.openConnections > 0 { try? await Task.sleep(for: .milliseconds(5)) }
            try? await Task.sleep(for: .milliseconds(20))
            return result
        }
    }

    @Test(arguments: [LocalTLSServer.TLSVersion.v1_2, .v1_3])
    func mustStapleHostsKeepWorkingOnResumedSessions(version: LocalTLSServer.TLSVersion) async throws {
        let setup = try Setup(version: version, stapled: true)
        let session = try setup.session()
        defer { session.shutdown() }
        for attempt in 1...3 {
            let response = try await setup.requestOnItsOwnConnection(session).get()
            #expect(response.status == 200, "request \(attempt)")
            #expect(response.trust.revocation.first?.status == .good, "request \(attempt)")
            #expect(response.trust.revocation.first?.source == .stapledOCSP, "request \(attempt)")
        }
        // The second connection resumed, was refused without sending anything and retried on a
        // full handshake; the third did not try to resume. (The server thread records a
        // handshake a moment after the client's side of it ends.)
        let deadline = ContinuousClock.now + .seconds(5)
        while setup.server.completedHandshakes < 4 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(setup.server.resumedHandshakes == 1)
        #expect(setup.server.requestsServed == 3)
        #expect(setup.server.acceptedConnections == 4)
    }

    @Test(arguments: [LocalTLSServer.TLSVersion.v1_2, .v1_3])
    func mustStapleHostsWithoutAStapleFailEveryTime(version: LocalTLSServer.TLSVersion) async throws {
        let setup = try Setup(version: version, stapled: false)
        let session = try setup.session()
        defer { session.shutdown() }
        for attempt in 1...2 {
            let error = await setup.requestOnItsOwnConnection(session).sessionError
            #expect(error?.trustError?.code == .revocationStatusUnknown, "request \(attempt)")
            #expect(error?.trustError?.reason.contains("must-staple") == true, "request \(attempt)")
        }
        #expect(setup.server.requestsServed == 0)
    }
}
