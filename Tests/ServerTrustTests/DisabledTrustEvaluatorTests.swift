import Foundation
import ServerTrustTestSupport
import Testing
@testable import ServerTrust

@Suite struct DisabledTrustEvaluatorTests {
    @Test func testsRunInADebugBuild() {
        #expect(DisabledTrustEvaluator.isDebugBuild)
    }

    @Test func inADebugBuildAnythingIsAccepted() throws {
        let stranger = try TestPKI.makeRoot(commonName: "Stranger").issueLeaf(
            dnsNames: ["elsewhere.example"], notBefore: .days(-30), notAfter: .days(-1))
        let trust = ServerTrust(presentedChain: stranger.chain, anchors: try TestPKI.makeRoot().trustAnchors())
        let evaluator = DisabledTrustEvaluator()
        #expect(evaluator.isActive)
        try evaluator.evaluate(trust, forHost: "api.example.com")
        try evaluator.evaluate(ServerTrust(presentedChain: [], anchors: trust.anchors), forHost: "")
    }

    @Test func theUnsafeReleaseFlagAlsoAccepts() throws {
        let evaluator = DisabledTrustEvaluator(unsafeAcceptAnyCertificateInReleaseBuilds: true)
        #expect(evaluator.isActive)
        let leaf = try TestPKI.makeRoot().issueLeaf(dnsNames: ["a.example"])
        try evaluator.evaluate(leaf.serverTrust(), forHost: "b.example")
    }

    /// A release build cannot be run from the tests; what decides the refusal there is
    /// `isDebugBuild`: without the unsafe flag the evaluator is active exactly in debug builds.
    @Test func outsideTheUnsafeFlagActivityIsGovernedByTheBuildKind() {
        #expect(DisabledTrustEvaluator().isActive == DisabledTrustEvaluator.isDebugBuild)
        #expect(DisabledTrustEvaluator(unsafeAcceptAnyCertificateInReleaseBuilds: true).isActive)
    }

    @Test func itIsNamedForReports() {
        #expect(DisabledTrustEvaluator().name == "DisabledTrustEvaluator")
    }
}
