import COpenSSL
import Foundation
@testable import ServerTrust
import ServerTrustTestSupport
import Testing

/// Issue #42, finding 4: a pin on a CA key keeps matching when the trust store changes. With
/// the root and its intermediate both anchors, OpenSSL's path stops at the intermediate
/// (partial-chain anchors, `X509_V_FLAG_PARTIAL_CHAIN`, always on); the path is extended upward
/// through the anchors that issued its top — never through a certificate the server sent — and
/// the report names the certificate that matched.
@Suite struct CAKeyPinTests {
    /// Which of the site's CA certificates are anchors.
    enum AnchorSet: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// The root alone: OpenSSL's path ends at the self-signed root (no partial-chain anchor).
        case root
        /// The root and the intermediate: the path ends at the intermediate, a partial-chain anchor.
        case rootAndIntermediate
        /// The same, listed the other way round.
        case intermediateAndRoot

        var testDescription: String { rawValue }

        func certificates(_ site: SitePKI) -> [Certificate] {
            switch self {
            case .root: [site.root.certificate]
            case .rootAndIntermediate: [site.root.certificate, site.intermediate.certificate]
            case .intermediateAndRoot: [site.intermediate.certificate, site.root.certificate]
            }
        }

        /// How many certificates OpenSSL's own path holds.
        var validatedCount: Int { self == .root ? 3 : 2 }
    }

    /// The certificate of the site a pin is on.
    enum Pinned: String, CaseIterable, Sendable {
        case root, intermediate, leaf

        func certificate(_ site: SitePKI) -> Certificate {
            switch self {
            case .root: site.root.certificate
            case .intermediate: site.intermediate.certificate
            case .leaf: site.leaf.certificate
            }
        }

        var depth: Int {
            switch self {
            case .root: 2
            case .intermediate: 1
            case .leaf: 0
            }
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let anchors: AnchorSet
        let pinned: Pinned
        var testDescription: String { "pin on the \(pinned.rawValue), anchors \(anchors.rawValue)" }

        static let all = AnchorSet.allCases.flatMap { anchors in Pinned.allCases.map { Case(anchors: anchors, pinned: $0) } }
    }

    let site: SitePKI

    init() throws { site = try SitePKI() }

    @Test(arguments: Case.all, PinningKind.allCases)
    func aPinOnTheRootTheIntermediateOrTheLeafMatchesWhetherOrNotTheAnchorsHoldTheIntermediate(_ test: Case, kind: PinningKind) throws {
        let trust = try site.trust(anchors: test.anchors.certificates(site))
        try kind.evaluator(pinning: [test.pinned.certificate(site)]).evaluate(trust, forHost: SitePKI.host)
        #expect(try trust.validatedChain() == [site.leaf.certificate, site.intermediate.certificate, site.root.certificate])
        #expect(try trust.validatedPath().validatedCount == test.anchors.validatedCount)
        let match = try #require(trust.pinMatches.first)
        #expect(trust.pinMatches.count == 1)
        #expect(match.evaluator == kind.evaluatorName)
        #expect(match.certificate == test.pinned.certificate(site))
        #expect(match.depth == test.pinned.depth)
        #expect(match.isAnchorExtension == (test.pinned == .root && test.anchors != .root))
    }

    @Test(arguments: AnchorSet.allCases, PinningKind.allCases)
    func anUnknownPinIsRefusedWhateverTheAnchors(_ anchors: AnchorSet, kind: PinningKind) throws {
        let trust = try site.trust(anchors: anchors.certificates(site))
        let error = #expect(throws: TrustError.pinMismatch) {
            try kind.evaluator(pinning: [LabPKI.makeRoot().certificate]).evaluate(trust, forHost: SitePKI.host)
        }
        #expect(error?.evidence.chain.map(\.subject) == ["CN=api.example.com", "CN=Genuine Issuing CA", "CN=Genuine Root CA"])
        #expect(error?.reason.contains(anchors == .root ? "(3 certificates)" : "(3 certificates, the last an anchor above the validated path)") == true)
        #expect(trust.pinMatches.isEmpty)
    }

    @Test(arguments: PinningKind.allCases)
    func theIntermediateAloneAsAnchorMatchesPinsOnItAndTheLeafButNotOnTheRoot(kind: PinningKind) throws {
        for pinned in Pinned.allCases {
            let trust = try site.trust(anchors: [site.intermediate.certificate])
            let evaluator = try kind.evaluator(pinning: [pinned.certificate(site)])
            if pinned == .root {
                #expect(throws: TrustError.pinMismatch) { try evaluator.evaluate(trust, forHost: SitePKI.host) }
            } else {
                try evaluator.evaluate(trust, forHost: SitePKI.host)
            }
            #expect(try trust.validatedChain() == [site.leaf.certificate, site.intermediate.certificate])
        }
    }

    @Test(arguments: PinningKind.allCases)
    func theGenuineRootTheServerSendsIsNotAddedWhenItIsNoAnchor(kind: PinningKind) throws {
        let presented = site.leaf.chain + [site.root.certificate]
        let trust = try site.trust(presenting: presented, anchors: [site.intermediate.certificate])
        let error = #expect(throws: TrustError.pinMismatch) {
            try kind.evaluator(pinning: [site.root.certificate]).evaluate(trust, forHost: SitePKI.host)
        }
        #expect(error?.evidence.chain.count == 2)
    }

    @Test(arguments: [AnchorSet.rootAndIntermediate], PinningKind.allCases)
    func aRootTheServerSendsWithTheIssuersNameAndAnotherKeyNeverMatches(_ anchors: AnchorSet, kind: PinningKind) throws {
        // Self-signed, and issued by another root: the genuine root's name, another key.
        let bogus = try LabPKI.makeRoot(commonName: "Genuine Root CA")
        let crossSignedBogus = try LabPKI.makeRoot(commonName: "Attacker Root").crossSign(bogus)
        for sent in [bogus.certificate, crossSignedBogus.certificate] {
            for anchorSet in [anchors.certificates(site), [site.intermediate.certificate]] {
                let trust = try site.trust(presenting: site.leaf.chain + [sent], anchors: anchorSet)
                #expect(throws: TrustError.pinMismatch) {
                    try kind.evaluator(pinning: [sent]).evaluate(trust, forHost: SitePKI.host)
                }
                #expect(try !trust.validatedChain().contains(sent))
            }
        }
    }

    @Test func anAnchorWithTheIssuersNameButAnotherKeyIsNotAppended() throws {
        // No key identifiers, so names alone make it a candidate issuer: only the signature
        // check tells it did not sign the intermediate.
        let impostor = try LabPKI.makeRoot(
            CertificateSpec(
                subject: LabName(commonName: "Genuine Root CA"), subjectKey: .ecP256(), notBefore: .days(-1), notAfter: .days(365),
                isCA: true, extendedKeyUsage: [], includeKeyIdentifiers: false))
        #expect(X509_check_issued(impostor.certificate.x509, site.intermediate.certificate.x509) == X509_V_OK)
        let trust = try site.trust(anchors: [site.intermediate.certificate, impostor.certificate])
        #expect(throws: TrustError.pinMismatch) {
            try PinnedKeyHashesTrustEvaluator(pins: [impostor.certificate.spkiPin]).evaluate(trust, forHost: SitePKI.host)
        }
        #expect(try trust.validatedChain() == [site.leaf.certificate, site.intermediate.certificate])
    }

    @Test func aRootUnderWhichThePathWouldNotValidateIsNotAppended() throws {
        // pathlen:0 forbids the root an intermediate CA below it: it vouches for no leaf of it.
        let root = try LabPKI.makeRoot(commonName: "Constrained Root", pathLength: 0)
        let intermediate = try root.issueIntermediate(commonName: "Issuing CA")
        let leaf = try intermediate.issueLeaf(dnsNames: [SitePKI.host])
        let trust = PeerTrust(presentedChain: leaf.chain, anchors: try TrustAnchors([root.certificate, intermediate.certificate]))
        #expect(throws: TrustError.pinMismatch) {
            try PinnedKeyHashesTrustEvaluator(pins: [root.certificate.spkiPin]).evaluate(trust, forHost: SitePKI.host)
        }
        #expect(try trust.validatedChain() == [leaf.certificate, intermediate.certificate])
    }

    @Test func anExpiredRootIsNotAppended() throws {
        let root = try LabPKI.makeRoot(commonName: "Old Root", notBefore: .days(-400), notAfter: .days(-1))
        let intermediate = try root.issueIntermediate(commonName: "Issuing CA", notBefore: .days(-300))
        let leaf = try intermediate.issueLeaf(dnsNames: [SitePKI.host])
        let trust = PeerTrust(presentedChain: leaf.chain, anchors: try TrustAnchors([root.certificate, intermediate.certificate]))
        #expect(throws: TrustError.pinMismatch) {
            try PinnedKeyHashesTrustEvaluator(pins: [root.certificate.spkiPin]).evaluate(trust, forHost: SitePKI.host)
        }
    }

    @Test func thePathIsExtendedThroughEveryAnchorUpToTheRoot() throws {
        let lower = try site.intermediate.issueIntermediate(commonName: "Lower Issuing CA")
        let leaf = try lower.issueLeaf(dnsNames: [SitePKI.host])
        let trust = PeerTrust(
            presentedChain: leaf.chain,
            anchors: try TrustAnchors([lower.certificate, site.intermediate.certificate, site.root.certificate]))
        try PinnedKeyHashesTrustEvaluator(pins: [site.root.certificate.spkiPin]).evaluate(trust, forHost: SitePKI.host)
        #expect(try trust.validatedChain() == [leaf.certificate, lower.certificate, site.intermediate.certificate, site.root.certificate])
        #expect(trust.pinMatches.map(\.depth) == [3])
        #expect(trust.pinMatches.map(\.isAnchorExtension) == [true])
    }

    @Test func aCachedValidationKeepsTheAnchorsAbove() throws {
        let anchors = try TrustAnchors([site.root.certificate, site.intermediate.certificate])
        let pins = try PinnedKeyHashesTrustEvaluator(pins: [site.root.certificate.spkiPin])
        for _ in 0..<2 {
            let trust = PeerTrust(presentedChain: site.leaf.chain, anchors: anchors)
            try pins.evaluate(trust, forHost: SitePKI.host)
            #expect(trust.pinMatches.map(\.isAnchorExtension) == [true])
        }
        #expect(anchors.store.validatedChains?.statistics.hits == 1)
    }

    @Test func revocationChecksOnlyTheValidatedPathNotTheAnchorsAbove() throws {
        for anchors in AnchorSet.allCases {
            let trust = try site.trust(anchors: anchors.certificates(site))
            try RevocationTrustEvaluator(options: RevocationOptions(networkAccessDisabled: true, scope: .wholeChain), cache: RevocationCache())
                .evaluate(trust, forHost: SitePKI.host)
            // The top of the validated path (and what is above it) is trusted by configuration.
            #expect(trust.revocationResults?.map(\.depth) == (anchors == .root ? [0, 1] : [0]), "\(anchors)")
        }
    }

    @Test(arguments: AnchorSet.allCases)
    func theEvaluationEntryPointReportsTheMatchAndTheDenyListSeesTheAnchorsAbove(_ anchors: AnchorSet) throws {
        let host = SitePKI.host
        let context = TrustEvaluationContext(anchors: try TrustAnchors(anchors.certificates(site)))
        let pinned = try ServerTrustManager(evaluators: [try HostPattern(host): PinnedKeyHashesTrustEvaluator(pins: [site.root.certificate.spkiPin])])
        let evaluation = try pinned.resolve(host: host).evaluate(site.leaf.chain, in: context)
        #expect(evaluation.failure == nil)
        #expect(evaluation.pinMatches.map(\.subject) == ["CN=Genuine Root CA"])
        #expect(evaluation.pinMatches.map(\.isAnchorExtension) == [anchors != .root])

        // A deny-listed root key refuses its hierarchy whichever of its certificates the anchors hold.
        let denying = try pinned.replacing(denyList: KeyDenyList(keys: [site.root.certificate.spkiPin]))
        let denied = try denying.resolve(host: host).evaluate(site.leaf.chain, in: context)
        #expect(denied.failure?.code == .deniedKey)
    }
}
