import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// Revocation through a real Session: stapled OCSP over TLS 1.2 and 1.3, live OCSP fetched by
/// libcurl from a local responder, soft- and hard-fail.
@Suite struct SessionRevocationTests {
    final class Setup: Sendable {
        let root: LabCA
        let intermediate: LabCA
        let leaf: LabLeaf
        let server: LocalTLSServer
        let responder: LocalHTTPServer
        /// What the responder answers; nil = HTTP 503.
        let responses = Locked<[UInt8]?>(nil)
        let queries = Locked<Int>(0)

        init(root: LabCA, intermediate: LabCA, leaf: LabLeaf, server: LocalTLSServer, responder: LocalHTTPServer) {
            self.root = root
            self.intermediate = intermediate
            self.leaf = leaf
            self.server = server
            self.responder = responder
        }
    }

    /// A leaf whose AIA names a local OCSP responder that answers with `answer`.
    private func setup(version: LocalTLSServer.TLSVersion = .v1_3) throws -> Setup {
        let root = try LabPKI.makeRoot(commonName: "Revocation Root")
        let intermediate = try root.issueIntermediate(commonName: "Revocation Intermediate")
        let responder = try LocalHTTPServer()
        let leaf = try intermediate.issueLeaf(dnsNames: [SessionFixture.host], ocspURL: responder.url("/ocsp"))
        var configuration = LocalTLSServer.Configuration(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey)
        configuration.minimumTLSVersion = version
        configuration.maximumTLSVersion = version
        let server = try LocalTLSServer(configuration)
        let setup = Setup(root: root, intermediate: intermediate, leaf: leaf, server: server, responder: responder)
        responder.setHandler { [setup] request in
            guard request.path.hasPrefix("/ocsp") else { return nil }
            setup.queries.withLock { $0 += 1 }
            guard let body = setup.responses.withLock({ $0 }) else { return .text("responder down\n", status: 503) }
            return LocalHTTPResponse(headers: [("Content-Type", "application/ocsp-response")], body: .bytes(body))
        }
        return setup
    }

    private func answer(_ setup: Setup, _ status: OCSPResponseBuilder.CertificateStatus) throws -> [UInt8] {
        try OCSPResponseBuilder(signer: setup.intermediate).adding(status, for: setup.leaf.certificate, issuedBy: setup.intermediate).build()
    }

    private func session(_ setup: Setup, _ options: RevocationOptions, cache: RevocationCache = RevocationCache()) throws -> Session {
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try setup.root.trustAnchors())
        configuration.resolve = [setup.server.resolveEntry(host: SessionFixture.host)]
        let evaluator = try CompositeTrustEvaluator([
            try PinnedKeyHashesTrustEvaluator(pins: [setup.intermediate.certificate.spkiPin]),
            RevocationTrustEvaluator(options: options, cache: cache),
        ])
        return try Session(configuration: configuration, trustManager: try ServerTrustManager(evaluators: [try HostPattern(SessionFixture.host): evaluator]))
    }

    private var url: String { "https://\(SessionFixture.host)" }

    @Test(arguments: [LocalTLSServer.TLSVersion.v1_2, .v1_3])
    func aGoodStapleIsVerifiedWithoutTouchingTheNetwork(version: LocalTLSServer.TLSVersion) async throws {
        let setup = try setup(version: version)
        setup.server.setStapledOCSPResponse(try answer(setup, .good))
        let session = try session(setup, .stapleRequired)
        defer { session.shutdown() }
        let response = try await session.get("\(url):\(setup.server.port)/status/200")
        #expect(response.status == 200)
        #expect(response.trust.revocation.map(\.status) == [.good])
        #expect(response.trust.revocation.first?.source == .stapledOCSP)
        #expect(setup.queries.withLock { $0 } == 0)
    }

    @Test(arguments: [LocalTLSServer.TLSVersion.v1_2, .v1_3])
    func aRevokedStapleRejectsEvenUnderSoftFail(version: LocalTLSServer.TLSVersion) async throws {
        let setup = try setup(version: version)
        setup.server.setStapledOCSPResponse(try answer(setup, .revoked(reason: .keyCompromise, date: Date(timeIntervalSinceNow: -600))))
        let session = try session(setup, .ocspStapled)
        defer { session.shutdown() }
        let error = await outcome { try await session.get("\(url):\(setup.server.port)/status/200") }.sessionError
        #expect(error?.trustError?.code == .revoked)
        #expect(error?.trustError?.evaluator == "RevocationTrustEvaluator")
        #expect(setup.server.requestsServed == 0)
    }

    @Test func liveOCSPIsFetchedByCurlAndCachedUntilNextUpdate() async throws {
        let setup = try setup()
        setup.responses.withLock { $0 = try? answer(setup, .good) }
        let session = try session(setup, .hardFail)
        defer { session.shutdown() }
        let first = try await session.get("\(url):\(setup.server.port)/close")
        #expect(first.trust.revocation.first?.status == .good)
        #expect(first.trust.revocation.first?.source == .ocsp(setup.responder.url("/ocsp")))
        _ = try await session.get("\(url):\(setup.server.port)/close")
        #expect(setup.queries.withLock { $0 } == 1)  // the second handshake used the cache
        #expect(setup.server.acceptedConnections == 2)
    }

    @Test func aResponderThatIsDownIsUnknownNeverGood() async throws {
        let setup = try setup()
        let soft = try session(setup, .softFail)
        defer { soft.shutdown() }
        let accepted = try await soft.get("\(url):\(setup.server.port)/status/200")
        let status = try #require(accepted.trust.revocation.first?.status)
        #expect(status != .good)
        if case .unknown = status {} else { Issue.record("expected unknown, got \(status)") }

        let hard = try session(setup, .hardFail)
        defer { hard.shutdown() }
        let error = await outcome { try await hard.get("\(url):\(setup.server.port)/status/200") }.sessionError
        #expect(error?.trustError?.code == .revocationStatusUnknown)
    }

    @Test func aLiveRevokedAnswerRejects() async throws {
        let setup = try setup()
        setup.responses.withLock { $0 = try? answer(setup, .revoked(reason: nil, date: Date(timeIntervalSinceNow: -60))) }
        let session = try session(setup, .softFail)
        defer { session.shutdown() }
        let error = await outcome { try await session.get("\(url):\(setup.server.port)/status/200") }.sessionError
        #expect(error?.trustError?.code == .revoked)
    }

    // MARK: - Third security review, finding 5

    /// A leaf with `validity` seconds of life (counted as RFC 5280 does) and only the revocation
    /// sources named, served by a local responder that answers `/crl` with `crl` when set.
    private func shortLivedSetup(
        validity: TimeInterval, crlPath: Bool = false, crl: (@Sendable (LabCA, Certificate) throws -> [UInt8])? = nil
    ) throws -> (setup: Setup, crlURL: String?) {
        let root = try LabPKI.makeRoot(commonName: "Short-lived Root")
        let intermediate = try root.issueIntermediate(commonName: "Short-lived Intermediate")
        let responder = try LocalHTTPServer()
        let crlURL = crlPath ? responder.url("/crl") : nil
        let notBefore = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 3600).rounded(.down))
        let leaf = try intermediate.issueLeaf(
            dnsNames: [SessionFixture.host], notBefore: notBefore, notAfter: notBefore.addingTimeInterval(validity - 1), crlURL: crlURL)
        let server = try LocalTLSServer(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey)
        let setup = Setup(root: root, intermediate: intermediate, leaf: leaf, server: server, responder: responder)
        let body = try crl?(intermediate, leaf.certificate)
        responder.setHandler { [setup] request in
            guard request.path.hasPrefix("/crl"), let body else { return nil }
            setup.queries.withLock { $0 += 1 }
            return LocalHTTPResponse(headers: [("Content-Type", "application/pkix-crl")], body: .bytes(body))
        }
        return (setup, crlURL)
    }

    /// Let's Encrypt's 6-day certificates carry no CRL distribution point and no OCSP URL by
    /// design: a hard-fail policy accepts them, the trust report shows why, and nothing is fetched.
    @Test func finding5AShortLivedLeafWithoutRevocationSourcesPassesHardFail() async throws {
        let (setup, _) = try shortLivedSetup(validity: 6 * 86_400)
        let session = try session(setup, .hardFail)
        defer { session.shutdown() }
        let response = try await session.get("\(url):\(setup.server.port)/status/200")
        #expect(response.status == 200)
        let leaf = try #require(response.trust.revocation.first)
        #expect(leaf.status == .unknown(.shortLivedCertificate))
        #expect(leaf.explanation.contains("short-lived (valid for 6 days, at most 7 days)"), "\(leaf.explanation)")
        #expect(setup.queries.withLock { $0 } == 0)
    }

    /// The threshold is configurable, and off means every leaf is checked: the same 6-day leaf
    /// is then refused by hard-fail, for having nowhere to ask.
    @Test func finding5WithoutTheShortLivedExemptionHardFailRefusesTheSameLeaf() async throws {
        let (setup, _) = try shortLivedSetup(validity: 6 * 86_400)
        var options = RevocationOptions.hardFail
        options.shortLivedCertificateValidity = nil
        let session = try session(setup, options)
        defer { session.shutdown() }
        let error = await outcome { try await session.get("\(url):\(setup.server.port)/status/200") }.sessionError
        #expect(error?.trustError?.code == .revocationStatusUnknown)
        #expect(error?.rejectedTrust?.revocation.first?.status == .unknown(.noResponderURL))
        #expect(setup.server.requestsServed == 0)
    }

    /// A leaf valid for one second more than the limit is not short-lived (RFC 5280 counts both
    /// ends: notAfter − notBefore + 1 s ≤ 604,800 s).
    @Test(arguments: [(604_800.0, true), (604_801.0, false)])
    func finding5TheSevenDayLimitIsCountedAsRFC5280CountsIt(validity: TimeInterval, exempt: Bool) async throws {
        let (setup, _) = try shortLivedSetup(validity: validity)
        let session = try session(setup, .hardFail)
        defer { session.shutdown() }
        let result = await outcome { try await session.get("\(url):\(setup.server.port)/status/200") }
        if exempt {
            #expect(try result.get().trust.revocation.first?.status == .unknown(.shortLivedCertificate))
        } else {
            #expect(result.sessionError?.trustError?.code == .revocationStatusUnknown)
        }
    }

    /// A CRL-based rejection names the revocation and the CRL on its first line, not libcurl's
    /// "invalid status response" (the status callback, where a staple-aware evaluation runs,
    /// fails the handshake with curl 35).
    @Test func finding5ACRLRejectionNamesTheRevocationAndTheCRLOnItsFirstLine() async throws {
        let (setup, crlURL) = try shortLivedSetup(validity: 30 * 86_400, crlPath: true) { ca, leaf in
            try ca.makeCRLDER(revoked: [RevokedCertificate(leaf, reason: 1)])
        }
        let session = try session(setup, .softFail)
        defer { session.shutdown() }
        let error = try #require(await outcome { try await session.get("\(url):\(setup.server.port)/status/200") }.sessionError)
        #expect(error.trustError?.code == .revoked)
        #expect(error.curlCode == 35)
        let firstLine = try #require(String(describing: error).split(separator: "\n").first.map(String.init))
        #expect(firstLine.contains("is revoked"), "\(error)")
        #expect(firstLine.contains("keyCompromise"), "\(error)")
        #expect(firstLine.contains("according to the CRL \(try #require(crlURL))"), "\(error)")
        #expect(!firstLine.contains("curl"), "\(error)")
        #expect(String(describing: error).contains("(curl 35: "), "libcurl's code stays in the message, after the reason: \(error)")
    }
}
