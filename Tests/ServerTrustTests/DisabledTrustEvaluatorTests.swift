import Foundation
import ServerTrustTestSupport
import Testing
@testable import ServerTrust

@Suite struct DisabledTrustEvaluatorTests {
    private func strangerTrust() throws -> PeerTrust {
        let stranger = try LabPKI.makeRoot(commonName: "Stranger").issueLeaf(
            dnsNames: ["elsewhere.example"], notBefore: .days(-30), notAfter: .days(-1))
        return PeerTrust(presentedChain: stranger.chain, anchors: try LabPKI.makeRoot().trustAnchors())
    }

    @Test func testsRunInADebugBuild() {
        #expect(DisabledTrustEvaluator.isDebugBuild)
    }

    /// Second audit, finding 7: the library's own `DEBUG` flag is set by a plain `swift build`,
    /// so a server image built that way accepted any certificate. Without the explicit opt-in
    /// the evaluator refuses in every build.
    @Test func finding7WithoutTheUnsafeOptInNothingIsAcceptedEvenInADebugBuild() throws {
        let evaluator = DisabledTrustEvaluator()
        #expect(!evaluator.isActive)
        let error = #expect(throws: TrustError.invalidConfiguration) { try evaluator.evaluate(try strangerTrust(), forHost: "api.example.com") }
        #expect(error?.evaluator == "DisabledTrustEvaluator")
        #expect(error?.reason.contains("unsafeAcceptAnyCertificate: true") == true)
    }

    @Test func withTheOptInADebugBuildAcceptsAnythingAndLogsEachAcceptanceAtErrorLevel() throws {
        let logs = CapturedLogs()
        let evaluator = DisabledTrustEvaluator(unsafeAcceptAnyCertificate: true, logger: logs.logger)
        #expect(evaluator.isActive)
        try evaluator.evaluate(try strangerTrust(), forHost: "api.example.com")
        try evaluator.evaluate(PeerTrust(presentedChain: [], anchors: try LabPKI.makeRoot().trustAnchors()), forHost: "")
        #expect(logs.all.count == 2)
        #expect(logs.all.allSatisfy { $0.level == .error })
        #expect(logs.all.first?.metadata["host"] == "api.example.com")
        #expect(logs.all.first?.metadata["evaluator"] == "DisabledTrustEvaluator")
        #expect(logs.all.first?.message.hasPrefix("DisabledTrustEvaluator accepted api.example.com without any check") == true)
    }

    @Test func theUnsafeReleaseFlagAlsoAccepts() throws {
        let evaluator = DisabledTrustEvaluator(unsafeAcceptAnyCertificateInReleaseBuilds: true)
        #expect(evaluator.isActive)
        let leaf = try LabPKI.makeRoot().issueLeaf(dnsNames: ["a.example"])
        try evaluator.evaluate(leaf.serverTrust(), forHost: "b.example")
    }

    /// A release build cannot be run from the tests; what decides the refusal there is
    /// `isDebugBuild`: with only the debug opt-in the evaluator is active exactly in debug builds.
    @Test func theDebugOptInIsGovernedByTheBuildKind() {
        #expect(DisabledTrustEvaluator(unsafeAcceptAnyCertificate: true).isActive == DisabledTrustEvaluator.isDebugBuild)
        #expect(DisabledTrustEvaluator(unsafeAcceptAnyCertificateInReleaseBuilds: true).isActive)
        #expect(!DisabledTrustEvaluator().isActive)
    }

    @Test func itIsNamedForReports() {
        #expect(DisabledTrustEvaluator().name == "DisabledTrustEvaluator")
    }
}
