import Foundation
import Testing
import ServerTrust
import ServerTrustTestSupport

/// Informational and canary wrappers around any evaluator, revocation included.
@Suite struct EnforcementModeTests {
    static let unrelated = try! Pin("sha256/" + Data(repeating: 7, count: 32).base64EncodedString())

    @Test func informationalAcceptsAFailingEvaluatorAndRecordsTheFailureAsAFinding() throws {
        let site = try SitePKI()
        let trust = try site.trust()
        let evaluator = InformationalTrustEvaluator(try .pinnedKeyHashes([Self.unrelated]))
        try evaluator.evaluate(trust, forHost: SitePKI.host)
        #expect(trust.findings.count == 1)
        #expect(trust.findings.first?.mode == .informational)
        // Not logged by the evaluator: the session that reads the finding logs it.
        #expect(trust.findings.first?.isLogged == false)
        #expect(trust.findings.first?.error.code == .pinMismatch)
        #expect(trust.findings.first?.error.evaluator == "PinnedKeyHashesTrustEvaluator")
        #expect(trust.findings.first?.error.host == SitePKI.host)
    }

    @Test func informationalRecordsNothingWhenTheEvaluatorPasses() throws {
        let site = try SitePKI()
        let trust = try site.trust()
        try InformationalTrustEvaluator(try .pinnedKeyHashes([site.intermediate.certificate.spkiPin])).evaluate(trust, forHost: SitePKI.host)
        #expect(trust.findings.isEmpty)
    }

    @Test func informationalWrapsRevocationAndForwardsItsStapleRequirement() throws {
        let pki = try RevocationPKI()
        let fetcher = FakeRevocationFetcher()
        fetcher.serve(RevocationPKI.leafCRL, try pki.leafCRL(revoking: [RevokedCertificate(pki.leaf.certificate, reason: 1)]))
        let checking = pki.evaluator(.hard { $0.methods = .crl }, fetcher: fetcher)
        #expect(throws: TrustError.revoked) { try checking.evaluate(try pki.trust(), forHost: RevocationPKI.host) }

        let trust = try pki.trust()
        try InformationalTrustEvaluator(checking).evaluate(trust, forHost: RevocationPKI.host)
        #expect(trust.findings.map(\.error.code) == [.revoked])
        #expect(trust.findings.first?.error.evaluator == "RevocationTrustEvaluator")
        #expect(InformationalTrustEvaluator(RevocationTrustEvaluator(options: .ocspStapled)).usesStapledOCSPResponse)
        #expect(!InformationalTrustEvaluator(DefaultTrustEvaluator()).usesStapledOCSPResponse)
    }

    @Test func aCanaryThatWouldRejectIsReportedWhileTheEnforcedPolicyAccepts() throws {
        let site = try SitePKI()
        let trust = try site.trust()
        let canary = CanaryTrustEvaluator(
            enforced: try .pinnedKeyHashes([site.intermediate.certificate.spkiPin]),
            trial: try .pinnedKeyHashes([Self.unrelated]))
        try canary.evaluate(trust, forHost: SitePKI.host)
        #expect(trust.findings.count == 1)
        #expect(trust.findings.first?.mode == .canary)
        #expect(trust.findings.first?.error.code == .canaryDisagreement)
        #expect(trust.findings.first?.error.reason.contains("would reject") == true)
        #expect(trust.findings.first?.error.evidence.configuredPins == [Self.unrelated])
    }

    @Test func aCanaryThatWouldAcceptIsReportedAndTheEnforcedRejectionStillThrows() throws {
        let site = try SitePKI()
        let trust = try site.trust()
        let canary = CanaryTrustEvaluator(
            enforced: try .pinnedKeyHashes([Self.unrelated]),
            trial: try .pinnedKeyHashes([site.leaf.certificate.spkiPin]))
        #expect(throws: TrustError.pinMismatch) { try canary.evaluate(trust, forHost: SitePKI.host) }
        #expect(trust.findings.map(\.error.code) == [.canaryDisagreement])
        #expect(trust.findings.first?.error.reason.contains("would accept") == true)
    }

    @Test func agreeingPoliciesRecordNothing() throws {
        let site = try SitePKI()
        let both = try site.trust()
        try CanaryTrustEvaluator(enforced: .default(), trial: try .pinnedKeyHashes([site.leaf.certificate.spkiPin]))
            .evaluate(both, forHost: SitePKI.host)
        #expect(both.findings.isEmpty)
        let neither = try site.trust()
        #expect(throws: TrustError.pinMismatch) {
            try CanaryTrustEvaluator(enforced: try .pinnedKeyHashes([Self.unrelated]), trial: try .pinnedKeyHashes([PinSetTests.spare]))
                .evaluate(neither, forHost: SitePKI.host)
        }
        #expect(neither.findings.isEmpty)
    }
}
