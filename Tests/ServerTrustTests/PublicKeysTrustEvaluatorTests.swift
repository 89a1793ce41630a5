import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

@Suite struct PublicKeysTrustEvaluatorTests {
    let site: SitePKI

    init() throws { site = try SitePKI() }

    @Test func theFactoryPinsKeys() throws {
        let evaluator = try PublicKeysTrustEvaluator.publicKeys([site.intermediate.key.publicKey])
        #expect(evaluator.name == "PublicKeysTrustEvaluator")
        try evaluator.evaluate(site.trust(), forHost: SitePKI.host)
    }

    @Test func aPinnedKeySurvivesRenewalOfTheCertificate() throws {
        let evaluator = try PublicKeysTrustEvaluator(keys: [site.leaf.key.publicKey])
        let renewed = try site.intermediate.issueLeaf(dnsNames: [SitePKI.host], key: site.leaf.key, notAfter: .days(90))
        try evaluator.evaluate(site.trust(presenting: renewed.chain), forHost: SitePKI.host)
    }

    @Test func keysOfEveryAlgorithmArePinnable() throws {
        for key in [LabKey.ecP384(), LabKey.rsa(bits: 2048), LabKey.ed25519()] {
            let leaf = try site.intermediate.issueLeaf(dnsNames: [SitePKI.host], key: key)
            try PublicKeysTrustEvaluator(keys: [key.publicKey]).evaluate(site.trust(presenting: leaf.chain), forHost: SitePKI.host)
        }
    }

    @Test func theConfiguredPinsAreThePinsOfTheKeys() throws {
        let keys = [LabKey.ecP256().publicKey, LabKey.ed25519().publicKey]
        let error = #expect(throws: TrustError.pinMismatch) {
            try PublicKeysTrustEvaluator(keys: keys).evaluate(site.trust(), forHost: SitePKI.host)
        }
        #expect(error?.evidence.configuredPins == keys.map(\.pin).sorted())
    }
}
