import COpenSSL
import Foundation
import Testing
import ServerTrust
import ServerTrustTestSupport

/// Informational and canary wrappers around any evaluator, revocation included.
@Suite struct EnforcementModeTests {
    static var unrelated: Pin { get throws { try Pin("sha256/" + Data(repeating: 7, count: 32).base64EncodedString()) } }

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
        #expect(try trust.findings.first?.error.evidence.configuredPins == [Self.unrelated])
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

/// Audit finding #4: only enforced validation counts. A chain that a report-only evaluator (an
/// informational one, or a canary's trial) validated — possibly against other anchors — must
/// never stand in for validation an enforcing evaluator relies on.
@Suite struct ReportOnlyValidationTests {
    /// A trust whose own anchors are a stranger's root, so the leaf validates only against the
    /// candidate CAs a report-only evaluator trials.
    static func strangerTrust(_ pki: RevocationPKI) throws -> PeerTrust {
        let stranger = try LabPKI.makeRoot(commonName: "Stranger Root")
        return PeerTrust(presentedChain: pki.leaf.chain, anchors: try TrustAnchors([stranger.certificate]))
    }

    @Test func reportOnlyValidationIsNeverReusedByAnEnforcingEvaluator() throws {
        let pki = try RevocationPKI()
        let candidateCAs = try pki.root.trustAnchors()
        let policy = try CompositeTrustEvaluator([
            .informational(.default(anchors: candidateCAs)),
            pki.evaluator(.hard(), fetcher: try pki.goodFetcher()),
        ])
        let trust = try Self.strangerTrust(pki)
        let error = #expect(throws: TrustError.chainValidationFailed) { try policy.evaluate(trust, forHost: RevocationPKI.host) }
        #expect(error?.evaluator == "RevocationTrustEvaluator")
        #expect(error?.evidence.verifyResult == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY)
        #expect(trust.revocationResults == nil)
        // The report-only evaluator itself passed: what it validated is still there for reports.
        #expect(trust.findings.isEmpty)
        #expect(trust.validatedChainIfComputed?.last == pki.root.certificate)
    }

    @Test func aCanaryTrialsValidationIsNeverReusedByTheEnforcedEvaluator() throws {
        let pki = try RevocationPKI()
        let canary = CanaryTrustEvaluator(
            enforced: pki.evaluator(.hard(), fetcher: try pki.goodFetcher()),
            trial: .default(anchors: try pki.root.trustAnchors()))
        let trust = try Self.strangerTrust(pki)
        let error = #expect(throws: TrustError.chainValidationFailed) { try canary.evaluate(trust, forHost: RevocationPKI.host) }
        #expect(error?.evaluator == "RevocationTrustEvaluator")
        #expect(error?.evidence.verifyResult == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY)
        #expect(trust.revocationResults == nil)
        #expect(trust.findings.map(\.error.code) == [.canaryDisagreement])
        #expect(trust.findings.first?.error.reason.contains("would accept") == true)
    }

    @Test func aReportOnlyRevocationCheckStillChecksTheChainItsReportOnlySiblingValidated() throws {
        let pki = try RevocationPKI()
        let fetcher = FakeRevocationFetcher()
        fetcher.serve(RevocationPKI.leafOCSP, try pki.leafOCSP(.revoked(reason: .keyCompromise, date: .days(-1))))
        let trial = try CompositeTrustEvaluator([
            .default(anchors: try pki.root.trustAnchors()), pki.evaluator(.hard { $0.methods = .ocsp }, fetcher: fetcher),
        ])
        let trust = try Self.strangerTrust(pki)
        try InformationalTrustEvaluator(trial).evaluate(trust, forHost: RevocationPKI.host)
        #expect(trust.findings.map(\.error.code) == [.revoked])
        #expect(trust.findings.first?.error.evaluator == "RevocationTrustEvaluator")
    }

    @Test func aChainAnEnforcingEvaluatorValidatedAgainstItsOwnAnchorsIsStillAdopted() throws {
        let pki = try RevocationPKI()
        let policy = try CompositeTrustEvaluator([
            .default(anchors: try pki.root.trustAnchors()), pki.evaluator(.hard(), fetcher: try pki.goodFetcher()),
        ])
        let trust = try Self.strangerTrust(pki)
        try policy.evaluate(trust, forHost: RevocationPKI.host)
        #expect(trust.revocationResults?.map(\.status) == [.good])
    }

    @Test func aChainValidatedByBothAReportOnlyAndAnEnforcingEvaluatorCounts() throws {
        let pki = try RevocationPKI()
        let candidateCAs = try pki.root.trustAnchors()
        let policy = try CompositeTrustEvaluator([
            .informational(.default(anchors: candidateCAs)), .default(anchors: candidateCAs),
            pki.evaluator(.hard(), fetcher: try pki.goodFetcher()),
        ])
        let trust = try Self.strangerTrust(pki)
        try policy.evaluate(trust, forHost: RevocationPKI.host)
        #expect(trust.revocationResults?.map(\.status) == [.good])
    }
}
