import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// An attacker holding a CA the client trusts (a corporate proxy, a mis-issued intermediate)
/// serves its own chain and adds the genuine pinned certificate to what it sends. Pins must be
/// matched against the path that validation actually built, so each attack ends in
/// `.pinMismatch`, and the chain the error shows is not the one holding the pinned certificate.
@Suite struct ChainCleaningAttackTests {
    let genuine: SitePKI
    let rogueRoot: LabCA
    let anchors: [Certificate]

    init() throws {
        genuine = try SitePKI()
        rogueRoot = try LabPKI.makeRoot(commonName: "Rogue Root CA")
        // The rogue root is trusted too: that is the whole point of pinning.
        anchors = [genuine.root.certificate, rogueRoot.certificate]
    }

    private var pinned: Certificate { genuine.intermediate.certificate }

    static let cases = PinningKind.allCases.flatMap { kind in [true, false].map { (kind, $0) } }

    /// Runs `presented` through an evaluator pinning the genuine intermediate and returns the error.
    private func attack(_ presented: [Certificate], kind: PinningKind, defaultValidation: Bool) throws -> TrustError? {
        let evaluator = try kind.evaluator(pinning: [pinned], performDefaultValidation: defaultValidation)
        let trust = try genuine.trust(presenting: presented, anchors: anchors)
        guard let error = #expect(throws: TrustError.pinMismatch, performing: { try evaluator.evaluate(trust, forHost: SitePKI.host) })
        else { return nil }
        #expect(error.evaluator == kind.evaluatorName)
        #expect(error.evidence.configuredPins == [pinned.spkiPin])
        #expect(!error.evidence.chain.isEmpty)
        #expect(!error.evidence.chain.contains { $0.pin == pinned.spkiPin }, "the evidence shows the unverified pinned certificate")
        return error
    }

    @Test(arguments: cases)
    func theGenuinePinnedCertificateAppendedAfterARogueChainIsIgnored(kind: PinningKind, defaultValidation: Bool) throws {
        let rogueIntermediate = try rogueRoot.issueIntermediate(commonName: "Rogue Issuing CA")
        let rogueLeaf = try rogueIntermediate.issueLeaf(dnsNames: [SitePKI.host])
        let error = try attack(rogueLeaf.chain + [pinned], kind: kind, defaultValidation: defaultValidation)
        if defaultValidation {
            let path = [rogueLeaf.certificate, rogueIntermediate.certificate, rogueRoot.certificate]
            #expect(error?.evidence.chain.map(\.pin) == path.map(\.spkiPin))
        }
    }

    @Test(arguments: cases)
    func aPinnedIntermediateSentBesideASameNameIntermediateFromAnotherTrustedRootIsIgnored(
        kind: PinningKind, defaultValidation: Bool
    ) throws {
        let twin = try rogueRoot.issueIntermediate(commonName: "Genuine Issuing CA")
        #expect(twin.certificate.subject == pinned.subject)
        let rogueLeaf = try twin.issueLeaf(dnsNames: [SitePKI.host])
        // The pinned one first, where a lookup by name alone would pick it.
        let error = try attack([rogueLeaf.certificate, pinned, twin.certificate], kind: kind, defaultValidation: defaultValidation)
        if defaultValidation {
            let path = [rogueLeaf.certificate, twin.certificate, rogueRoot.certificate]
            #expect(error?.evidence.chain.map(\.pin) == path.map(\.spkiPin))
        }
    }

    @Test(arguments: cases)
    func aPinnedCertificateSentButNotOnTheVerifiedPathIsIgnored(kind: PinningKind, defaultValidation: Bool) throws {
        let rogueLeaf = try rogueRoot.issueLeaf(dnsNames: [SitePKI.host])
        let error = try attack([rogueLeaf.certificate, pinned], kind: kind, defaultValidation: defaultValidation)
        if defaultValidation {
            #expect(error?.evidence.chain.map(\.pin) == [rogueLeaf.certificate.spkiPin, rogueRoot.certificate.spkiPin])
        }
    }

    @Test(arguments: PinningKind.allCases)
    func pinsAreCheckedAgainstTheValidatedChainNotThePresentedOne(kind: PinningKind) throws {
        let rogueLeaf = try rogueRoot.issueLeaf(dnsNames: [SitePKI.host])
        let trust = try genuine.trust(presenting: [rogueLeaf.certificate, pinned], anchors: anchors)
        #expect(trust.presentedChain.contains(pinned))
        #expect(try !trust.validatedChain().contains(pinned))
        #expect(throws: TrustError.pinMismatch) {
            try kind.evaluator(pinning: [pinned]).evaluate(trust, forHost: SitePKI.host)
        }
    }

    @Test(arguments: PinningKind.allCases)
    func theGenuineChainStillPassesTheSamePolicy(kind: PinningKind) throws {
        // Without default validation a key pin cannot vouch for the pinned intermediate's own
        // fields, so only a pinned certificate anchors there (ForgedPinnedCertificateTests).
        for defaultValidation in kind == .certificates ? [true, false] : [true] {
            try kind.evaluator(pinning: [pinned], performDefaultValidation: defaultValidation)
                .evaluate(genuine.trust(anchors: anchors), forHost: SitePKI.host)
        }
    }
}
