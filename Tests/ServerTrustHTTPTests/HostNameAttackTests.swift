import Foundation
import HTTPTypes
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// Host-name tricks over a live TLS connection. Every server here holds a certificate from the
/// root the client trusts, so the chain is fine: only the name check stands between the client
/// and the impostor. Each test has a control that is accepted, so a failure cannot come from
/// the set-up, and each asserts `hostMismatch` (or the policy's own verdict), not just "failed".
@Suite struct HostNameAttackTests {
    private let root: LabCA

    init() throws { root = try LabPKI.makeRoot(commonName: "Host Name Attack Root") }

    private func server(dnsNames: [String] = [], ipAddresses: [String] = [], commonName: String? = nil) throws -> LocalTLSServer {
        let leaf = try root.issueLeaf(dnsNames: dnsNames, ipAddresses: ipAddresses, commonName: commonName)
        return try LocalTLSServer(chain: [leaf.certificate], privateKeyPEM: leaf.key.pemPrivateKey)
    }

    private func session(_ server: LocalTLSServer, hosts: [String], evaluators: [String: any ServerTrustEvaluating]? = nil) throws -> Session {
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try root.trustAnchors())
        configuration.resolve = hosts.map { server.resolveEntry(host: $0) }
        let evaluators = evaluators ?? Dictionary(uniqueKeysWithValues: hosts.map { ($0, DefaultTrustEvaluator() as any ServerTrustEvaluating) })
        let manager = try ServerTrustManager(evaluators: Dictionary(uniqueKeysWithValues: try evaluators.map { (try HostPattern($0.key), $0.value) }))
        return try Session(configuration: configuration, trustManager: manager)
    }

    private func fetch(_ session: Session, _ host: String, _ server: LocalTLSServer) async -> Result<Response, any Error> {
        await outcome { try await session.get("https://\(host):\(server.port)/status/200") }
    }

    /// `api.servertrust.test\0.attacker.test`: a C string comparison stops at the NUL and sees
    /// the victim's name. The certificate is accepted for neither name.
    @Test func aSubjectAltNameWithAnEmbeddedNULMatchesNoHost() async throws {
        let victim = "api.servertrust.test"
        let hostile = try server(dnsNames: ["\(victim)\0.attacker.test"], commonName: "attacker.test")
        let session = try session(hostile, hosts: [victim, "attacker.test"])
        defer { session.shutdown() }
        #expect(await fetch(session, victim, hostile).sessionError?.trustError?.code == .hostMismatch)
        #expect(await fetch(session, "attacker.test", hostile).sessionError?.trustError?.code == .hostMismatch)

        let genuine = try server(dnsNames: [victim])
        let control = try self.session(genuine, hosts: [victim])
        defer { control.shutdown() }
        #expect(try await fetch(control, victim, genuine).get().status == 200)
    }

    /// A look-alike registered as an IDN (`pаypal` with a Cyrillic "а", xn--pypal-4ve) and one
    /// written as raw UTF-8 in the SAN: neither is the ASCII host the client asked for.
    @Test(arguments: ["xn--pypal-4ve.servertrust.test", "p\u{430}ypal.servertrust.test", "paypa1.servertrust.test"])
    func aLookAlikeNameIsNotTheHost(lookAlike: String) async throws {
        let host = "paypal.servertrust.test"
        let hostile = try server(dnsNames: [lookAlike], commonName: host)  // the CN is never consulted
        let session = try session(hostile, hosts: [host])
        defer { session.shutdown() }
        let error = await fetch(session, host, hostile).sessionError?.trustError
        #expect(error?.code == .hostMismatch)
        #expect(error?.evaluator == "DefaultTrustEvaluator")
    }

    /// `host.` is the same host as `host`: the certificate matches, and — what matters — the
    /// host's policy applies to it, so a trailing dot cannot step around a pin.
    @Test func aTrailingDotNeitherBreaksTheMatchNorEscapesThePolicy() async throws {
        let host = "api.servertrust.test"
        let genuine = try server(dnsNames: [host])
        var plainConfiguration = Session.Configuration()
        plainConfiguration.anchors = .bundle(try root.trustAnchors())
        plainConfiguration.resolve = [genuine.resolveEntry(host: host), genuine.resolveEntry(host: "\(host).")]
        let plain = try Session(configuration: plainConfiguration, trustManager: try ServerTrustManager(evaluators: [try HostPattern(host): DefaultTrustEvaluator()]))
        defer { plain.shutdown() }
        #expect(try await fetch(plain, "\(host).", genuine).get().status == 200)

        let otherKey = LabKey.ecP256().pin
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try root.trustAnchors())
        configuration.resolve = [genuine.resolveEntry(host: host), genuine.resolveEntry(host: "\(host).")]
        let pinned = try Session(configuration: configuration, trustManager: try ServerTrustManager(evaluators: [
            try HostPattern(host): try PinnedKeyHashesTrustEvaluator(pins: [otherKey]),
        ]))
        defer { pinned.shutdown() }
        let error = await fetch(pinned, "\(host).", genuine).sessionError?.trustError
        #expect(error?.code == .pinMismatch)
        #expect(error?.evaluator == "PinnedKeyHashesTrustEvaluator")
    }

    /// An IP address written as a DNS name in the SAN (or the CN) is not an iPAddress entry.
    @Test func anIPAddressWrittenAsADNSNameDoesNotMatchTheAddress() async throws {
        let hostile = try server(dnsNames: ["127.0.0.1"], commonName: "127.0.0.1")
        let session = try session(hostile, hosts: ["127.0.0.1"])
        defer { session.shutdown() }
        #expect(await fetch(session, "127.0.0.1", hostile).sessionError?.trustError?.code == .hostMismatch)

        let genuine = try server(ipAddresses: ["127.0.0.1"])
        let control = try self.session(genuine, hosts: ["127.0.0.1"])
        defer { control.shutdown() }
        #expect(try await fetch(control, "127.0.0.1", genuine).get().status == 200)
    }

    struct WildcardCase: Sendable, CustomTestStringConvertible {
        let certificateName: String
        let host: String
        let accepted: Bool
        var testDescription: String { "\(certificateName) for \(host): \(accepted ? "accepted" : "refused")" }
    }

    static let wildcardCases = [
        WildcardCase(certificateName: "*.servertrust.test", host: "api.servertrust.test", accepted: true),
        WildcardCase(certificateName: "*.servertrust.test", host: "a.b.servertrust.test", accepted: false),  // one label only
        WildcardCase(certificateName: "*.servertrust.test", host: "servertrust.test", accepted: false),  // not the apex
        WildcardCase(certificateName: "*.test", host: "servertrust.test", accepted: false),  // a TLD wildcard
        WildcardCase(certificateName: "*", host: "servertrust.test", accepted: false),
        WildcardCase(certificateName: "a*.servertrust.test", host: "api.servertrust.test", accepted: false),  // partial
        WildcardCase(certificateName: "api.*.test", host: "api.servertrust.test", accepted: false),  // not leftmost
        WildcardCase(certificateName: "*.*.servertrust.test", host: "a.b.servertrust.test", accepted: false),
        WildcardCase(certificateName: "*.xn--pypal-4ve.test", host: "api.xn--pypal-4ve.test", accepted: true),
        WildcardCase(certificateName: "xn--*.servertrust.test", host: "xn--bcher-kva.servertrust.test", accepted: false),  // inside an A-label
    ]

    @Test(arguments: wildcardCases)
    func wildcardsMatchOneWholeLeftmostLabelOnly(_ wildcard: WildcardCase) async throws {
        let server = try server(dnsNames: [wildcard.certificateName])
        let session = try session(server, hosts: [wildcard.host])
        defer { session.shutdown() }
        let result = await fetch(session, wildcard.host, server)
        if wildcard.accepted {
            #expect(try result.get().status == 200)
        } else {
            #expect(result.sessionError?.trustError?.code == .hostMismatch)
        }
    }

    /// Evaluators that check no host themselves (third review, finding 1).
    enum HostBlindEvaluator: String, CaseIterable, CustomTestStringConvertible {
        case standaloneRevocation, canaryAroundRevocation, customAcceptingEverything

        var testDescription: String { rawValue }

        func make(pinning leaf: Certificate) throws -> any ServerTrustEvaluating {
            switch self {
            case .standaloneRevocation: RevocationTrustEvaluator(options: .softFail, cache: RevocationCache())
            case .canaryAroundRevocation:
                CanaryTrustEvaluator(enforced: RevocationTrustEvaluator(options: .softFail, cache: RevocationCache()), trial: DefaultTrustEvaluator())
            case .customAcceptingEverything: AcceptsEverything()
            }
        }

        struct AcceptsEverything: ServerTrustEvaluating {
            func evaluate(_ trust: PeerTrust, forHost host: String) throws {}
        }
    }

    /// The policy's host check, not only libcurl's `VERIFYHOST`, refuses a certificate a trusted
    /// CA issued for the attacker's own domain, whatever the evaluator: the failure is the
    /// policy's typed `hostMismatch`, and the token never reaches the impostor.
    @Test(arguments: HostBlindEvaluator.allCases)
    func aSessionRefusesACertificateForAnotherHostWhateverTheEvaluator(_ kind: HostBlindEvaluator) async throws {
        let host = "api.servertrust.test"
        let impostorLeaf = try root.issueLeaf(dnsNames: ["evil.servertrust.test"])
        let impostor = try LocalTLSServer(chain: [impostorLeaf.certificate], privateKeyPEM: impostorLeaf.key.pemPrivateKey)
        defer { impostor.stop() }
        let evaluator = try kind.make(pinning: impostorLeaf.certificate)
        try evaluator.evaluate(PeerTrust(presentedChain: [impostorLeaf.certificate], anchors: try root.trustAnchors()), forHost: host)
        let session = try session(impostor, hosts: [host], evaluators: [host: evaluator])
        defer { session.shutdown() }
        var headers = HTTPFields()
        headers[.authorization] = "Bearer third-review-finding-1"
        let result = await outcome { try await session.get("https://\(host):\(impostor.port)/secret", headers: headers) }
        let error = result.sessionError?.trustError
        #expect(error?.code == .hostMismatch)
        #expect(error?.host == host)
        #expect(impostor.recentRequests.isEmpty)

        let genuineLeaf = try root.issueLeaf(dnsNames: [host])
        let genuine = try LocalTLSServer(chain: [genuineLeaf.certificate], privateKeyPEM: genuineLeaf.key.pemPrivateKey)
        defer { genuine.stop() }
        let control = try self.session(genuine, hosts: [host], evaluators: [host: try kind.make(pinning: genuineLeaf.certificate)])
        defer { control.shutdown() }
        #expect(try await fetch(control, host, genuine).get().status == 200)
    }
}
