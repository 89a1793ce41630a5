import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

@Suite struct PinnedCertificatesTrustEvaluatorTests {
    let site: SitePKI

    init() throws { site = try SitePKI() }

    @Test func theFactoryPinsCertificates() throws {
        let evaluator = try PinnedCertificatesTrustEvaluator.pinnedCertificates([site.intermediate.certificate])
        #expect(evaluator.name == "PinnedCertificatesTrustEvaluator")
        try evaluator.evaluate(site.trust(), forHost: SitePKI.host)
    }

    @Test func aRenewedCertificateWithTheSameKeyIsNotThePinnedCertificate() throws {
        let evaluator = try PinnedCertificatesTrustEvaluator(certificates: [site.leaf.certificate])
        let renewed = try site.intermediate.issueLeaf(dnsNames: [SitePKI.host], key: site.leaf.key, notAfter: .days(90))
        #expect(throws: TrustError.pinMismatch) { try evaluator.evaluate(site.trust(presenting: renewed.chain), forHost: SitePKI.host) }
    }

    @Test func withoutDefaultValidationAPinnedCertificateTheServerDoesNotSendIsStillTheAnchor() throws {
        let trust = try site.trust(
            presenting: [site.leaf.certificate], anchors: [LabPKI.makeRoot(commonName: "Unrelated Root").certificate])
        try PinnedCertificatesTrustEvaluator(certificates: [site.intermediate.certificate], performDefaultValidation: false)
            .evaluate(trust, forHost: SitePKI.host)
    }
}
