import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

@Suite struct PinnedKeyHashesTrustEvaluatorTests {
    let site: SitePKI

    init() throws { site = try SitePKI() }

    @Test func pinStringsInEitherFormAreAcceptedByTheFactory() throws {
        let pin = site.intermediate.key.pin
        try PinnedKeyHashesTrustEvaluator.pinnedKeyHashes([pin.description]).evaluate(site.trust(), forHost: SitePKI.host)
        try PinnedKeyHashesTrustEvaluator.pinnedKeyHashes([pin.curlForm]).evaluate(site.trust(), forHost: SitePKI.host)
    }

    @Test func aBadPinStringFailsConstructionWithItsOwnCode() {
        #expect(throws: TrustError.unsupportedPinAlgorithm) {
            try PinnedKeyHashesTrustEvaluator(["sha1/AAAAAAAAAAAAAAAAAAAAAAAAAAA="])
        }
        let error = #expect(throws: TrustError.malformedPin) {
            try PinnedKeyHashesTrustEvaluator([site.leaf.key.pin.description, "sha256/short"])
        }
        #expect(error?.reason.contains("sha256/short") == true)
    }

    @Test func aPinSurvivesRenewalOfTheCertificateWithTheSameKey() throws {
        let evaluator = try PinnedKeyHashesTrustEvaluator(pins: [site.leaf.key.pin])
        let renewed = try site.intermediate.issueLeaf(dnsNames: [SitePKI.host], key: site.leaf.key, notAfter: .days(90))
        #expect(renewed.certificate != site.leaf.certificate)
        try evaluator.evaluate(site.trust(presenting: renewed.chain), forHost: SitePKI.host)
    }

    @Test func aNewKeyInARenewedCertificateNoLongerMatches() throws {
        let evaluator = try PinnedKeyHashesTrustEvaluator(pins: [site.leaf.key.pin])
        let rekeyed = try site.intermediate.issueLeaf(dnsNames: [SitePKI.host])
        #expect(throws: TrustError.pinMismatch) { try evaluator.evaluate(site.trust(presenting: rekeyed.chain), forHost: SitePKI.host) }
    }

    @Test func configuredPinsAreReportedOnceEachInOrder() throws {
        let pins = [site.root.key.pin, site.leaf.key.pin, site.root.key.pin]
        let stranger = try LabPKI.makeRoot().issueLeaf(dnsNames: [SitePKI.host])
        let error = #expect(throws: TrustError.pinMismatch) {
            try PinnedKeyHashesTrustEvaluator(pins: pins).evaluate(stranger.serverTrust(), forHost: SitePKI.host)
        }
        #expect(error?.evidence.configuredPins == Array(Set(pins)).sorted())
    }
}
