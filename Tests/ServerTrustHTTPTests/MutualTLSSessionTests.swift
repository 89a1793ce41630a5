import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// Where a session's client identity goes, seen from an in-process server that asks every
/// client for a certificate and records each one that arrives — also in handshakes that fail
/// afterwards, so a certificate sent to a server the client then rejects would show.
@Suite struct MutualTLSSessionTests {
    static let host = "mtls.servertrust.test"
    static let otherHost = "other.servertrust.test"
    static let clientSubject = "/CN=mtls-client"

    /// A server for both host names that asks for client certificates, and a client identity.
    struct Setup {
        let root: LabCA
        let server: LocalTLSServer
        let identity: ClientIdentity

        init(tlsVersion: LocalTLSServer.TLSVersion) throws {
            root = try LabPKI.makeRoot(commonName: "mTLS Server Root")
            let leaf = try root.issueIntermediate(commonName: "mTLS Server Intermediate").issueLeaf(dnsNames: [MutualTLSSessionTests.host, MutualTLSSessionTests.otherHost])
            var configuration = LocalTLSServer.Configuration(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey)
            configuration.minimumTLSVersion = tlsVersion
            configuration.maximumTLSVersion = tlsVersion
            configuration.requestsUnverifiedClientCertificate = true
            server = try LocalTLSServer(configuration)
            let client = try LabPKI.makeRoot(commonName: "mTLS Client Root").issueLeaf(commonName: "mtls-client", extendedKeyUsage: [.clientAuth])
            identity = try ClientIdentity(certificatePEM: client.certificate.pemEncoded, privateKeyPEM: client.key.pemPrivateKey)
        }

        func session(anchors: LabCA? = nil, evaluator: (any ServerTrustEvaluating)? = nil) throws -> Session {
            var configuration = Session.Configuration()
            configuration.anchors = .bundle(try (anchors ?? root).trustAnchors())
            configuration.resolve = [server.resolveEntry(host: MutualTLSSessionTests.host), server.resolveEntry(host: MutualTLSSessionTests.otherHost)]
            let policy = evaluator.map { HostPolicy.custom($0, clientIdentity: identity) } ?? HostPolicy(clientIdentity: identity)
            let manager = try ServerTrustManager(policies: [try HostPattern(MutualTLSSessionTests.host): policy], allHostsMustBeEvaluated: false)
            return try Session(configuration: configuration, trustManager: manager)
        }
    }

    static let versions: [LocalTLSServer.TLSVersion] = [.v1_2, .v1_3]

    @Test(arguments: versions)
    func theIdentityGoesToItsHostAndNotToARedirectTargetOnTheSameServer(tlsVersion: LocalTLSServer.TLSVersion) async throws {
        let setup = try Setup(tlsVersion: tlsVersion)
        let session = try setup.session()
        defer { session.shutdown() }
        let target = setup.server.url("/status/200", host: MutualTLSSessionTests.otherHost)
        let url = setup.server.url("/redirect/302?to=" + target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!, host: MutualTLSSessionTests.host)
        let response = try await session.get(url)
        #expect(response.status == 200)
        #expect(response.hops.map(\.host) == [MutualTLSSessionTests.host, MutualTLSSessionTests.otherHost])
        #expect(setup.server.completedHandshakes == 2)
        #expect(setup.server.clientCertificateSubjects == [Self.clientSubject])
        #expect(try await session.get(target).status == 200)
        #expect(setup.server.clientCertificateSubjects == [Self.clientSubject])
    }

    enum Rejection: String, CaseIterable, CustomTestStringConvertible {
        /// An intercepting server whose CA the session does not trust.
        case untrustedChain
        /// The genuine server under pins it does not match.
        case wrongPin
        /// A staple-reading policy (evaluated in OpenSSL's status callback, not the verify
        /// callback) with no staple.
        case missingRequiredStaple
        var testDescription: String { rawValue }
    }

    @Test(arguments: versions, Rejection.allCases)
    func theIdentityIsNeverSentToAServerThePolicyRejects(tlsVersion: LocalTLSServer.TLSVersion, rejection: Rejection) async throws {
        let setup = try Setup(tlsVersion: tlsVersion)
        let session: Session
        let expected: TrustError.Code
        switch rejection {
        case .untrustedChain:
            session = try setup.session(anchors: try LabPKI.makeRoot(commonName: "Unrelated Root"))
            expected = .chainValidationFailed
        case .wrongPin:
            session = try setup.session(evaluator: try PinnedKeyHashesTrustEvaluator(pins: [SessionFixture.unrelatedPin]))
            expected = .pinMismatch
        case .missingRequiredStaple:
            session = try setup.session(evaluator: try CompositeTrustEvaluator([
                DefaultTrustEvaluator(), RevocationTrustEvaluator(options: .stapleRequired),
            ]))
            expected = .revocationStatusUnknown
        }
        defer { session.shutdown() }
        let error = await outcome { try await session.get(setup.server.url("/status/200", host: MutualTLSSessionTests.host)) }.sessionError
        #expect(error?.code == .trustEvaluationFailed)
        #expect(error?.trustError?.code == expected, "\(String(describing: error))")
        #expect(setup.server.clientCertificateSubjects == [])
        #expect(setup.server.requestsServed == 0)
    }
}

extension MutualTLSSessionTests {
    /// OpenSSL refuses to install a certificate whose key is below the security level (RSA under
    /// 2048 bits at Debian's level 2) — in every handshake, as curl error 42. The session finds
    /// out when it is created instead, naming the identity, the pattern and OpenSSL's reason.
    @Test func anIdentityOpenSSLWouldRefuseInTheHandshakeFailsSessionCreation() throws {
        let client = try LabPKI.makeRoot(commonName: "Weak Client Root")
            .issueLeaf(commonName: "weak-client", key: .rsa(bits: 1024), extendedKeyUsage: [.clientAuth])
        let weak = try ClientIdentity(certificatePEM: client.certificate.pemEncoded, privateKeyPEM: client.key.pemPrivateKey)
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try LabPKI.makeRoot().trustAnchors())
        let manager = try ServerTrustManager(policies: [try HostPattern("weak.servertrust.test"): HostPolicy(clientIdentity: weak)])
        let error = #expect(throws: TrustError.invalidConfiguration) { try Session(configuration: configuration, trustManager: manager) }
        #expect(error?.reason.contains("CN=weak-client") == true, "\(String(describing: error))")
        #expect(error?.reason.contains("weak.servertrust.test") == true)
        #expect(error?.evidence.openSSLErrors.contains { $0.contains("too small") } == true, "\(String(describing: error?.evidence.openSSLErrors))")
    }
}

extension MutualTLSSessionTests {
    /// The failure reporter posts through a session of its own, which has no client identities:
    /// even a report URI the identity's pattern covers never receives the certificate.
    @Test func aFailureReportNeverCarriesTheIdentityEvenToAHostItsPatternCovers() async throws {
        let setup = try Setup(tlsVersion: .v1_3)
        let resolve = [setup.server.resolveEntry(host: Self.host), setup.server.resolveEntry(host: Self.otherHost)]
        var reporting = TrustFailureReporter.Configuration()
        reporting.reportURIs = [URL(string: setup.server.url("/echo", host: Self.otherHost))!]
        reporting.anchors = .bundle(try setup.root.trustAnchors())
        reporting.resolve = resolve
        let reporter = try TrustFailureReporter(reporting)
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try setup.root.trustAnchors())
        configuration.resolve = resolve
        configuration.failureReporter = reporter
        let manager = try ServerTrustManager(policies: [
            try HostPattern("**.servertrust.test"): HostPolicy(clientIdentity: setup.identity),
            try HostPattern(Self.host): .custom(try PinnedKeyHashesTrustEvaluator(pins: [SessionFixture.unrelatedPin]), clientIdentity: setup.identity),
        ])
        let session = try Session(configuration: configuration, trustManager: manager)
        defer { session.shutdown() }
        let error = await outcome { try await session.get(setup.server.url("/status/200", host: Self.host)) }.sessionError
        #expect(error?.trustError?.code == .pinMismatch)
        await reporter.flush()
        #expect(reporter.counters.snapshot.reportsSent == 1)
        #expect(setup.server.recentRequests.map(\.target) == ["/echo"])
        #expect(setup.server.clientCertificateSubjects == [])
    }
}
