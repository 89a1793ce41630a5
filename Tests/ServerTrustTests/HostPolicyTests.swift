import Foundation
import Logging
import ServerTrust
import ServerTrustTestSupport
import Testing

/// Issue #33: one table of `HostPolicy` values built by one loop, one resolution per host, and
/// one evaluation entry point (`ResolvedHostPolicy.evaluate`) that checks the host and the TLS
/// floor, wraps foreign errors once, and counts and logs for every client path.
@Suite struct HostPolicyTests {
    static let host = "api.servertrust.test"

    private struct Thrown: Error, CustomStringConvertible {
        var description: String { "a database lookup failed" }
    }

    /// A custom evaluator that fails with an error of its own type.
    private struct ForeignErrorEvaluator: ServerTrustEvaluating {
        func evaluate(_: PeerTrust, forHost: String) throws { throw Thrown() }
    }

    /// A custom evaluator that checks nothing, the host included.
    private struct AcceptsAnything: ServerTrustEvaluating {
        func evaluate(_: PeerTrust, forHost: String) throws {}
    }

    private struct Fixture {
        let root: LabCA
        let chain: [Certificate]
        let context: TrustEvaluationContext
        let counters = TrustCounters()
        let logs = CapturedLogs()

        init(host: String = HostPolicyTests.host) throws {
            root = try LabPKI.makeRoot()
            let leaf = try root.issueLeaf(dnsNames: [host])
            chain = [leaf.certificate]
            context = TrustEvaluationContext(anchors: try root.trustAnchors(), counters: counters, logger: logs.logger)
        }
    }

    private func resolved(_ policy: HostPolicy, host: String = HostPolicyTests.host) throws -> ResolvedHostPolicy {
        try ServerTrustManager(policies: [try HostPattern(host): policy]).resolve(host: host)
    }

    // MARK: The entry point

    @Test func anAcceptedEvaluationIsCountedAndLoggedAtDebugWithItsPattern() throws {
        let fixture = try Fixture()
        let evaluation = try resolved(HostPolicy()).evaluate(fixture.chain, in: fixture.context)
        #expect(evaluation.isTrusted)
        #expect(evaluation.matchedPattern?.description == Self.host)
        #expect(evaluation.validatedChain.count == 2)
        #expect(fixture.counters.snapshot.evaluations == 1)
        #expect(fixture.counters.snapshot.failures == 0)
        #expect(fixture.logs.at(.debug).first?.metadata["result"] == "verified")
        #expect(fixture.logs.at(.error).isEmpty)
    }

    @Test func aNegotiatedVersionBelowTheHostsFloorIsRefusedWhateverTheEvaluator() throws {
        let fixture = try Fixture()
        let policy = try resolved(HostPolicy(minimumTLSVersion: .tls13))
        let refused = policy.evaluate(fixture.chain, handshake: HandshakeEvidence(protocolVersion: .tls12), in: fixture.context)
        #expect(refused.failure?.code == .tlsVersionBelowPolicy)
        #expect(refused.failure?.reason.contains("negotiated TLS 1.2, and its policy requires TLS 1.3") == true)
        #expect(fixture.counters.snapshot.failuresByReason == ["tlsVersionBelowPolicy": 1])
        #expect(fixture.logs.at(.error).first?.metadata["reason"] == "tlsVersionBelowPolicy")
        let accepted = policy.evaluate(fixture.chain, handshake: HandshakeEvidence(protocolVersion: .tls13), in: fixture.context)
        #expect(accepted.isTrusted)
    }

    @Test func aCustomEvaluatorsOwnErrorIsWrappedOnceAsATrustErrorNamingIt() throws {
        let fixture = try Fixture()
        let evaluation = try resolved(HostPolicy.custom(ForeignErrorEvaluator())).evaluate(fixture.chain, in: fixture.context)
        #expect(evaluation.failure?.code == .openSSLFailure)
        #expect(evaluation.failure?.evaluator == "ForeignErrorEvaluator")
        #expect(evaluation.failure?.reason.contains("a database lookup failed") == true)
        #expect(fixture.counters.snapshot.failuresByReason == ["openSSLFailure": 1])
    }

    @Test func theHostIsCheckedAgainstTheLeafAfterAnEvaluatorThatChecksNoHost() throws {
        let fixture = try Fixture(host: "other.servertrust.test")
        let evaluation = try resolved(HostPolicy.custom(AcceptsAnything())).evaluate(fixture.chain, in: fixture.context)
        #expect(evaluation.failure?.code == .hostMismatch)
    }

    @Test func theHandshakeEvidenceReachesTheEvaluatorsTrust() throws {
        let fixture = try Fixture()
        let evidence = HandshakeEvidence(
            stapledOCSPResponse: [1, 2], signedCertificateTimestamps: [[3]], protocolVersion: .tls13, cipherSuite: "TLS_AES_128_GCM_SHA256",
            keyExchangeGroup: "X25519", applicationProtocol: "h2")
        let evaluation = try resolved(HostPolicy()).evaluate(fixture.chain, handshake: evidence, in: fixture.context)
        #expect(evaluation.trust.handshake == evidence)
        #expect(evaluation.trust.stapledOCSPResponse == [1, 2])
    }

    // MARK: One table, one resolution

    @Test func anUnmatchedHostResolvesToDefaultValidationOnlyWhenAllowed() throws {
        let lenient = try ServerTrustManager(policies: [try HostPattern(Self.host): HostPolicy()], allHostsMustBeEvaluated: false)
        let resolved = try lenient.resolve(host: "Elsewhere.Test.")
        #expect(resolved.pattern == nil)
        #expect(resolved.host.name == "elsewhere.test")
        #expect(resolved.evaluator is DefaultTrustEvaluator)
        #expect(resolved.policy.minimumTLSVersion == .tls12)
        let strict = try ServerTrustManager(policies: [try HostPattern(Self.host): HostPolicy()])
        #expect(throws: TrustError.noEvaluatorForHost) { try strict.resolve(host: "elsewhere.test") }
    }

    @Test func theResolutionCarriesEverySettingOfTheMostSpecificPattern() throws {
        let manager = try ServerTrustManager(policies: [
            try HostPattern("**.servertrust.test"): HostPolicy(minimumTLSVersion: .tls13),
            try HostPattern(Self.host): HostPolicy(reportURIs: [URL(string: "https://reports.servertrust.test/")!]),
        ])
        let exact = try manager.resolve(host: "API.servertrust.test")
        #expect(exact.pattern?.description == Self.host)
        #expect(exact.policy.minimumTLSVersion == .tls12)
        #expect(exact.policy.reportURIs.count == 1)
        let wide = try manager.resolve(host: "v2.api.servertrust.test")
        #expect(wide.pattern?.description == "**.servertrust.test")
        #expect(wide.policy.minimumTLSVersion == .tls13)
        #expect(wide.policy.reportURIs.isEmpty)
    }

    @Test func anInvalidPatternIsNamedAndASecondSpellingIsTheSameKey() throws {
        let error = #expect(throws: TrustError.invalidHostPattern) { try HostPattern("**.com") }
        let reason = error?.reason ?? ""
        #expect(reason.hasPrefix(#"Host pattern "**.com""#))
        #expect(try HostPattern("API.servertrust.test.") == HostPattern("api.servertrust.test"))
    }

    // MARK: The policy file maps onto HostPolicy

    @Test func aPolicyFileHostCarriesItsTLSFloorAndSignedResponses() throws {
        let keys = try SigningKeys()
        let root = keys.roots[0].key.base64
        let file = try TrustPolicyFile(data: Array("""
            {"version": 1, "hosts": {
              "api.servertrust.test": {"minimumTLSVersion": "1.3", "signedResponses": {"mode": "enforced", "roots": ["\(root)"], "freshnessSeconds": 120}},
              "**.servertrust.test": {}
            }}
            """.utf8))
        let api = try file.manager.resolve(host: "api.servertrust.test")
        #expect(api.policy.minimumTLSVersion == .tls13)
        #expect(api.policy.signedResponses?.mode == .enforced)
        #expect(api.policy.signedResponses?.freshnessWindow == .seconds(120))
        let other = try file.manager.resolve(host: "cdn.servertrust.test")
        #expect(other.policy.minimumTLSVersion == .tls12)
        #expect(other.policy.signedResponses == nil)
    }

    @Test(arguments: [
        (#"{"minimumTLSVersion": "1.1"}"#, #"policy.json:1: hosts["a.servertrust.test"].minimumTLSVersion: "#),
        (#"{"signedResponses": {"mode": "enforced"}}"#, #"policy.json:1: hosts["a.servertrust.test"].signedResponses: "roots" must name at least one key"#),
        (#"{"signedResponses": {"mode": "enforced", "roots": ["bm90IGEga2V5"]}}"#, #"policy.json:1: hosts["a.servertrust.test"].signedResponses.roots[0]: not a signed-response root key"#),
    ])
    func aBadHostPolicyFieldIsNamed(host: String, message: String) {
        let error = #expect(throws: TrustError.invalidPolicyFile) {
            try TrustPolicyFile(data: Array(#"{"version": 1, "hosts": {"a.servertrust.test": \#(host)}}"#.utf8))
        }
        #expect(error?.reason.hasPrefix(message) == true, "\(String(describing: error?.reason))")
    }
}
