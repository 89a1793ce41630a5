import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// Attack suite: hostile OCSP responders and CRL distribution points, reached by libcurl
/// (`CurlRevocationFetcher`) during a real handshake through `Session`. An attacker on the path
/// to the responder, or a broken responder, can send too much, send forever or send slowly;
/// each must end as a definite `unknown` naming the limit that held — never `good`, never a
/// hang past the time budget — and hard-fail must reject it.
///
/// No test measures time: the drip and stall cases pass only if the evaluator gives up and
/// says `timeout` (the responder would otherwise keep sending for minutes), and the
/// size cases only if the fetch stops at the limit (the bodies are 1 TiB).
@Suite struct HostileRevocationResponderTests {
    /// What the responder does; one per test.
    enum Behaviour: String, CaseIterable, Sendable {
        /// A body of 1 MiB, announced by Content-Length: over the 64 KiB OCSP limit.
        case oversizedBody
        /// A 1 TiB body: endless in practice.
        case endlessBody
        /// 20,000 header lines (≈ 1 MiB of headers) before an empty body.
        case endlessHeaders
        /// A valid-looking response trickled one byte every 200 ms.
        case slowDrip
        /// Headers, then nothing for 30 s.
        case stall

        /// The time budget: short where running out of it is the point; generous where a size
        /// limit must be what stops the fetch, so a slow machine cannot turn it into a timeout.
        var budget: Duration { expectedReason == .timeout ? .seconds(2) : .seconds(60) }

        var expectedReason: RevocationStatus.UnknownReason {
            switch self {
            case .oversizedBody, .endlessBody, .endlessHeaders: .responseTooLarge
            case .slowDrip, .stall: .timeout
            }
        }

        var response: LocalHTTPResponse {
            let type = [(name: "Content-Type", value: "application/ocsp-response")]
            switch self {
            case .oversizedBody:
                return LocalHTTPResponse(headers: type, body: .pattern(count: 1 << 20))
            case .endlessBody:
                return LocalHTTPResponse(headers: type, body: .pattern(count: 1 << 40), pacing: (64 << 10, .zero))
            case .endlessHeaders:
                let filler = (0..<20_000).map { (name: "X-Filler-\($0)", value: String(repeating: "h", count: 40)) }
                return LocalHTTPResponse(headers: type + filler)
            case .slowDrip:
                return LocalHTTPResponse(headers: type, body: .pattern(count: 4_000), pacing: (1, .milliseconds(200)))
            case .stall:
                return LocalHTTPResponse(headers: type, body: .pattern(count: 2), pacing: (1, .seconds(30)))
            }
        }
    }

    struct Setup {
        let root: LabCA
        let intermediate: LabCA
        let server: LocalTLSServer
        let responder: LocalHTTPServer
    }

    /// A leaf whose AIA and CRL distribution point both name `responder`, which answers every
    /// request under /ocsp and /crl as `behaviour` says.
    private func setup(_ behaviour: Behaviour) throws -> Setup {
        let root = try LabPKI.makeRoot(commonName: "Hostile Responder Root")
        let intermediate = try root.issueIntermediate(commonName: "Hostile Responder Intermediate")
        let responder = try LocalHTTPServer { request in
            guard request.path.hasPrefix("/ocsp") || request.path.hasPrefix("/crl") else { return nil }
            return behaviour.response
        }
        let leaf = try intermediate.issueLeaf(
            dnsNames: [SessionFixture.host], ocspURL: responder.url("/ocsp"), crlURL: responder.url("/crl"))
        let server = try LocalTLSServer(.init(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey))
        return Setup(root: root, intermediate: intermediate, server: server, responder: responder)
    }

    private func session(_ setup: Setup, _ options: RevocationOptions) throws -> Session {
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try setup.root.trustAnchors())
        configuration.resolve = [setup.server.resolveEntry(host: SessionFixture.host)]
        let evaluator = try CompositeTrustEvaluator([
            try PinnedKeyHashesTrustEvaluator(pins: [setup.intermediate.certificate.spkiPin]),
            RevocationTrustEvaluator(options: options, cache: RevocationCache()),
        ])
        return try Session(
            configuration: configuration,
            trustManager: try ServerTrustManager(evaluators: [try HostPattern(SessionFixture.host): evaluator]))
    }

    private static func options(
        _ methods: RevocationOptions.Methods, hard: Bool, budget: Duration = .seconds(2)
    ) -> RevocationOptions {
        RevocationOptions(methods: methods, requirePositiveResponse: hard, timeBudget: budget, maximumCRLSize: 256 << 10)
    }

    @Test(arguments: Behaviour.allCases)
    func aHostileOCSPResponderIsUnknownUnderSoftFailAndSaysWhichLimitHeld(_ behaviour: Behaviour) async throws {
        let setup = try setup(behaviour)
        let session = try session(setup, Self.options(.ocsp, hard: false, budget: behaviour.budget))
        defer { session.shutdown() }
        let response = try await session.get("https://\(SessionFixture.host):\(setup.server.port)/status/200")
        #expect(response.status == 200)
        let result = try #require(response.trust.revocation.first)
        #expect(result.status == .unknown(behaviour.expectedReason))
        #expect(result.source == .none || result.source.isOCSP)
        #expect(!result.fromCache)
        #expect(setup.responder.acceptedConnections >= 1, "the responder was asked")
        if behaviour == .endlessHeaders {
            #expect(result.attempts.contains { $0.contains("response headers over") }, "\(result.attempts)")
        } else if behaviour.expectedReason == .responseTooLarge {
            #expect(result.attempts.contains { $0.contains("body over 65536 bytes") }, "\(result.attempts)")
        }
    }

    @Test(arguments: Behaviour.allCases)
    func aHostileOCSPResponderIsRejectedUnderHardFail(_ behaviour: Behaviour) async throws {
        let setup = try setup(behaviour)
        let session = try session(setup, Self.options(.ocsp, hard: true, budget: behaviour.budget))
        defer { session.shutdown() }
        let error = await outcome { try await session.get("https://\(SessionFixture.host):\(setup.server.port)/status/200") }.sessionError
        let trustError = try #require(error?.trustError)
        #expect(trustError.code == .revocationStatusUnknown)
        #expect(trustError.evaluator == "RevocationTrustEvaluator")
        #expect("\(trustError)".contains(behaviour.expectedReason.identifier), "\(trustError)")
        #expect(setup.server.requestsServed == 0, "no request went out over the rejected connection")
    }

    @Test(arguments: [Behaviour.oversizedBody, .endlessBody, .endlessHeaders, .slowDrip])
    func aHostileCRLDistributionPointIsUnknownAndHardFailRejects(_ behaviour: Behaviour) async throws {
        let setup = try setup(behaviour)
        let soft = try session(setup, Self.options(.crl, hard: false, budget: behaviour.budget))
        defer { soft.shutdown() }
        let response = try await soft.get("https://\(SessionFixture.host):\(setup.server.port)/status/200")
        let result = try #require(response.trust.revocation.first)
        #expect(result.status == .unknown(behaviour.expectedReason))
        if behaviour == .oversizedBody || behaviour == .endlessBody {
            #expect(result.attempts.contains { $0.contains("body over 262144 bytes") }, "\(result.attempts)")
        }

        let hard = try session(setup, Self.options(.crl, hard: true, budget: behaviour.budget))
        defer { hard.shutdown() }
        let error = await outcome { try await hard.get("https://\(SessionFixture.host):\(setup.server.port)/status/200") }.sessionError
        #expect(error?.trustError?.code == .revocationStatusUnknown)
    }

    /// The time budget covers every source together: OCSP stalls, and the CRL that would follow
    /// is not started once the budget is spent (the CRL route would also stall).
    @Test func oneBudgetCoversOCSPAndThenCRL() async throws {
        let setup = try setup(.stall)
        let session = try session(setup, Self.options(.preferOCSP, hard: false, budget: .milliseconds(1500)))
        defer { session.shutdown() }
        let response = try await session.get("https://\(SessionFixture.host):\(setup.server.port)/status/200")
        #expect(response.trust.revocation.first?.status == .unknown(.timeout))
        #expect(setup.responder.acceptedConnections == 1, "the CRL fetch was not started after the OCSP one used up the budget")
    }
}
