import COpenSSL
import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// Behaviour the three pinning evaluators share, run on each of them.
@Suite struct PinningEvaluatorTests {
    let site: SitePKI

    init() throws { site = try SitePKI() }

    @Test(arguments: PinningKind.allCases)
    func aPinnedLeafIsAccepted(kind: PinningKind) throws {
        try kind.evaluator(pinning: [site.leaf.certificate]).evaluate(site.trust(), forHost: SitePKI.host)
    }

    @Test(arguments: PinningKind.allCases)
    func aPinnedIntermediateIsAccepted(kind: PinningKind) throws {
        try kind.evaluator(pinning: [site.intermediate.certificate]).evaluate(site.trust(), forHost: SitePKI.host)
    }

    @Test(arguments: PinningKind.allCases)
    func aPinnedRootIsAcceptedThoughTheServerDoesNotSendIt(kind: PinningKind) throws {
        #expect(!site.leaf.chain.contains(site.root.certificate))
        try kind.evaluator(pinning: [site.root.certificate]).evaluate(site.trust(), forHost: SitePKI.host)
    }

    @Test(arguments: PinningKind.allCases)
    func aMismatchListsTheValidatedChainAndTheConfiguredPins(kind: PinningKind) throws {
        let unrelated = try [LabPKI.makeRoot().certificate, LabPKI.makeRoot().certificate]
        let trust = try site.trust()
        let error = #expect(throws: TrustError.pinMismatch) {
            try kind.evaluator(pinning: unrelated).evaluate(trust, forHost: SitePKI.host)
        }
        let validated = [site.leaf.certificate, site.intermediate.certificate, site.root.certificate]
        #expect(error?.evaluator == kind.evaluatorName)
        #expect(error?.host == SitePKI.host)
        #expect(error?.evidence.configuredPins == unrelated.map(\.spkiPin).sorted())
        #expect(error?.evidence.chain.map(\.pin) == validated.map(\.spkiPin))
        #expect(error?.evidence.chain.map(\.subject) == ["CN=api.example.com", "CN=Genuine Issuing CA", "CN=Genuine Root CA"])
        let description = error?.description ?? ""
        for pin in unrelated.map(\.spkiPin) { #expect(description.contains("\(pin)")) }
        for certificate in validated { #expect(description.contains("\(certificate.spkiPin): \(certificate.subject)")) }
    }

    @Test(arguments: PinningKind.allCases)
    func anyOneOfSeveralPinsIsEnough(kind: PinningKind) throws {
        let backup = try LabPKI.makeRoot(commonName: "Backup").certificate
        try kind.evaluator(pinning: [backup, site.intermediate.certificate]).evaluate(site.trust(), forHost: SitePKI.host)
    }

    @Test(arguments: PinningKind.allCases)
    func anEmptyPinSetIsAnInvalidConfiguration(kind: PinningKind) {
        let error = #expect(throws: TrustError.invalidConfiguration) { try kind.evaluator(pinning: []) }
        #expect(error?.evaluator == kind.evaluatorName)
    }

    @Test(arguments: PinningKind.allCases)
    func theHostIsValidatedByDefault(kind: PinningKind) throws {
        let evaluator = try kind.evaluator(pinning: [site.intermediate.certificate])
        let error = #expect(throws: TrustError.hostMismatch) { try evaluator.evaluate(site.trust(), forHost: "www.example.com") }
        #expect(error?.evaluator == kind.evaluatorName)
    }

    @Test(arguments: PinningKind.allCases)
    func aChainThatFailsDefaultValidationIsRejectedEvenWithAMatchingPin(kind: PinningKind) throws {
        let expired = try site.intermediate.issueLeaf(dnsNames: [SitePKI.host], notBefore: .days(-30), notAfter: .days(-1))
        let error = #expect(throws: TrustError.chainValidationFailed) {
            try kind.evaluator(pinning: [site.intermediate.certificate]).evaluate(site.trust(presenting: expired.chain), forHost: SitePKI.host)
        }
        #expect(error?.evidence.verifyResult == X509_V_ERR_CERT_HAS_EXPIRED)
        #expect(error?.evaluator == kind.evaluatorName)
    }

    // MARK: Default validation off: the pinned material is the anchor

    @Test(arguments: PinningKind.allCases)
    func withoutDefaultValidationAPinnedIntermediateIsAnAnchorThoughItsRootIsNotOnlyWhenItsCertificateIsPinned(kind: PinningKind) throws {
        let trust = try site.trust(anchors: [LabPKI.makeRoot(commonName: "Unrelated Root").certificate])
        let error = #expect(throws: TrustError.chainValidationFailed) {
            try kind.evaluator(pinning: [site.intermediate.certificate]).evaluate(trust, forHost: SitePKI.host)
        }
        #expect(error?.evidence.verifyResult == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY)
        let pinsAsAnchors = try kind.evaluator(pinning: [site.intermediate.certificate], performDefaultValidation: false)
        if kind == .certificates {
            try pinsAsAnchors.evaluate(trust, forHost: SitePKI.host)
        } else {
            // A key pin knows the key, not the intermediate's fields, which only its root vouches
            // for (audit finding #3, ForgedPinnedCertificateTests).
            let error = #expect(throws: TrustError.chainValidationFailed) { try pinsAsAnchors.evaluate(trust, forHost: SitePKI.host) }
            #expect(error?.evidence.depth == 1)
            #expect(error?.evaluator == kind.evaluatorName)
        }
    }

    @Test(arguments: PinningKind.allCases)
    func withoutDefaultValidationAPinnedLeafIsAcceptedWhateverItsIssuer(kind: PinningKind) throws {
        let trust = try site.trust(anchors: [LabPKI.makeRoot(commonName: "Unrelated Root").certificate])
        try kind.evaluator(pinning: [site.leaf.certificate], performDefaultValidation: false).evaluate(trust, forHost: SitePKI.host)
    }

    @Test(arguments: PinningKind.allCases)
    func withoutDefaultValidationAPinnedSelfSignedServerCertificateIsAccepted(kind: PinningKind) throws {
        let server = try LabPKI.makeRoot(
            CertificateSpec(subject: "api.example.com", subjectKey: .ecP256(), dnsNames: [SitePKI.host]))
        let trust = PeerTrust(presentedChain: [server.certificate], anchors: try site.root.trustAnchors())
        try kind.evaluator(pinning: [server.certificate], performDefaultValidation: false).evaluate(trust, forHost: SitePKI.host)
        #expect(throws: TrustError.hostMismatch) {
            try kind.evaluator(pinning: [server.certificate], performDefaultValidation: false).evaluate(trust, forHost: "www.example.com")
        }
    }

    @Test(arguments: PinningKind.allCases)
    func withoutDefaultValidationAnExpiredPinnedCertificateIsRejected(kind: PinningKind) throws {
        let expired = try site.root.issueIntermediate(commonName: "Expired Issuing CA", notBefore: .days(-60), notAfter: .days(-1))
        let leaf = try expired.issueLeaf(dnsNames: [SitePKI.host])
        let error = #expect(throws: TrustError.chainValidationFailed) {
            try kind.evaluator(pinning: [expired.certificate], performDefaultValidation: false)
                .evaluate(site.trust(presenting: leaf.chain), forHost: SitePKI.host)
        }
        #expect(error?.evidence.verifyResult == X509_V_ERR_CERT_HAS_EXPIRED)
        #expect(error?.evidence.depth == 1)
        #expect(error?.evaluator == kind.evaluatorName)
    }

    @Test(arguments: PinningKind.allCases)
    func withoutDefaultValidationALeafNotSignedByThePinnedKeyIsRejectedThoughThePinnedCertificateIsSent(kind: PinningKind) throws {
        // An impostor CA with the pinned intermediate's name but its own key signs the leaf.
        let impostor = try LabPKI.makeRoot(commonName: "Rogue Root").issueIntermediate(commonName: "Genuine Issuing CA")
        let forged = try impostor.issueLeaf(dnsNames: [SitePKI.host])
        let trust = try site.trust(presenting: [forged.certificate, site.intermediate.certificate])
        let evaluator = try kind.evaluator(pinning: [site.intermediate.certificate], performDefaultValidation: false)
        guard let error = #expect(throws: TrustError.pinMismatch, performing: { try evaluator.evaluate(trust, forHost: SitePKI.host) })
        else { return }
        #expect(error.evaluator == kind.evaluatorName)
        #expect(!error.evidence.chain.contains { $0.pin == site.intermediate.certificate.spkiPin })
    }
}
