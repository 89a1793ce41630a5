import Foundation
@testable import ServerTrust
import ServerTrustLab
import ServerTrustTestSupport
import Testing

/// Which issuer embedded SCTs are verified with (issue #51, findings 4 and 6): the validated
/// path an enforcing evaluator built; the presented certificate that issued the leaf when that
/// path ends at the leaf (a pinned leaf key without default validation) or when no enforcing
/// evaluator validated; never a path only a report-only evaluator built.
@Suite struct CertificateTransparencyIssuerTests {
    static let host = "ct.example.com"
    let now = Date()
    let root: LabCA
    let intermediate: LabCA
    let logA = TestCTLog(.p256), logB = TestCTLog(.rsa2048)

    init() throws {
        root = try LabPKI.makeRoot(commonName: "CT Issuer Test Root")
        intermediate = try root.issueIntermediate(commonName: "CT Issuer Test Intermediate")
    }

    func evaluate(_ presented: [Certificate], evaluator: any ServerTrustEvaluating) throws -> TrustEvaluation {
        let since = now.addingTimeInterval(-365 * 86_400)
        let logs = try CertificateTransparencyLogs(try CTLogList(timestamp: now.addingTimeInterval(-86_400), logs: [
            logA.log(name: "Log A", operator: "Operator A", state: .usable(since)),
            logB.log(name: "Log B", operator: "Operator B", state: .usable(since)),
        ]))
        let policy = HostPolicy.custom(evaluator, certificateTransparency: .enforced())
        let manager = try ServerTrustManager(policies: [try HostPattern(Self.host): policy], certificateTransparencyLogs: logs)
        let context = TrustEvaluationContext(anchors: try root.trustAnchors(), clock: { [now] in now })
        return try manager.resolve(host: Self.host).evaluate(presented, in: context)
    }

    /// Finding 4: the pinned leaf is the anchor. OpenSSL keeps a valid presented intermediate
    /// above it, but sets an expired one aside, so the validated chain is `[leaf]`; the issuer
    /// the server sent still verifies the embedded SCTs (an expired issuer's key hash is the one
    /// the logs signed).
    @Test func aLeafPinnedWithoutDefaultValidationHasItsEmbeddedSCTsVerified() throws {
        let expired = try root.issueIntermediate(commonName: "CT Issuer Test Expired Intermediate", notAfter: now.addingTimeInterval(-60))
        let leaf = try expired.issueLeafWithEmbeddedSCTs(from: [logA, logB], dnsNames: [Self.host])
        let pinned = try PinnedKeyHashesTrustEvaluator(pins: [leaf.certificate.spkiPin], performDefaultValidation: false)
        let evaluation = try evaluate(leaf.chain, evaluator: pinned)
        #expect(evaluation.validatedChain == [leaf.certificate])
        #expect(evaluation.failure == nil, "\(String(describing: evaluation.failure))")
        #expect(evaluation.certificateTransparency?.observations.map(\.status) == [.verified, .verified])
    }

    /// A presented "issuer" that is not the one that signed the leaf (same name, another key) is
    /// never taken as the issuer, so the SCTs still fail.
    @Test func aPresentedCertificateThatDidNotIssueTheLeafIsNotItsIssuer() throws {
        let leaf = try intermediate.issueLeafWithEmbeddedSCTs(from: [logA, logB], dnsNames: [Self.host])
        let impostor = try root.issueIntermediate(commonName: "CT Issuer Test Intermediate")
        let pinned = try PinnedKeyHashesTrustEvaluator(pins: [leaf.certificate.spkiPin], performDefaultValidation: false)
        let evaluation = try evaluate([leaf.certificate, impostor.certificate], evaluator: pinned)
        #expect(evaluation.failure?.code == .certificateTransparency, "\(String(describing: evaluation.failure))")
        #expect(evaluation.certificateTransparency?.observations.map(\.status) == [.issuerUnknown, .issuerUnknown])
        // Given it anyway, its key hash is not the one the SCTs signed.
        let store = try CTLogStore(try CTLogList(timestamp: now, logs: [logA.log(name: "Log A", operator: "Operator A", state: .usable(now))]))
        let sct = try #require(try SignedCertificateTimestamp.embedded(in: leaf.certificate).first)
        #expect(store.verify([sct], leaf: leaf.certificate, issuer: impostor.certificate, at: now).map(\.status) == [.badSignature])
    }

    /// Finding 6: a report-only evaluator validated `[leaf, root]` from the anchors; the server
    /// sent the leaf alone. CT decides on what enforcement validated (nothing here) and the
    /// presented chain, so the report-only validation cannot make an enforced CT check pass.
    @Test func aReportOnlyValidationIsNotWhatCTDecidesOn() throws {
        let leaf = try root.issueLeafWithEmbeddedSCTs(from: [logA, logB], dnsNames: [Self.host])
        let reportOnly = InformationalTrustEvaluator(DefaultTrustEvaluator())
        let alone = try evaluate([leaf.certificate], evaluator: reportOnly)
        #expect(alone.validatedChain == [leaf.certificate, root.certificate])
        #expect(alone.failure?.code == .certificateTransparency, "\(String(describing: alone.failure))")
        #expect(alone.certificateTransparency?.observations.map(\.status) == [.issuerUnknown, .issuerUnknown])
        // The issuer sent beside the leaf verifies them.
        let withIssuer = try evaluate([leaf.certificate, root.certificate], evaluator: reportOnly)
        #expect(withIssuer.failure == nil, "\(String(describing: withIssuer.failure))")
    }
}
