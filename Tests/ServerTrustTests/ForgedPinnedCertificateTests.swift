import COpenSSL
import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// Audit finding #3: with `performDefaultValidation: false`, a key pin must not let the server
/// widen the certificate that carries the pinned key.
///
/// The genuine pinned intermediate is constrained (expired, name-constrained, or limited to a
/// path length of 0) and has signed something its constraints forbid. The attacker, who holds
/// neither the pinned private key nor the root's, sends a copy of that intermediate — same name,
/// same public key, so it matches the pin — with the constraint removed, either self-signed
/// with a junk key or re-issued by a rogue root of the genuine root's name. A key pin knows only
/// the key, so such a copy must never be the anchor: without default validation only a
/// certificate the pinned key itself signed (a self-signed one whose signature verifies), a
/// configured certificate, or the leaf may be.
@Suite struct ForgedPinnedCertificateTests {
    static let host = SitePKI.host

    /// The evaluators that pin keys rather than certificates.
    enum KeyPinKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case keyHashes = "PinnedKeyHashesTrustEvaluator"
        case publicKeys = "PublicKeysTrustEvaluator"
        case pinSet = "PinSetTrustEvaluator"

        var testDescription: String { rawValue }

        func evaluator(pinning key: LabKey) throws -> any ServerTrustEvaluating {
            switch self {
            case .keyHashes: try PinnedKeyHashesTrustEvaluator(pins: [key.pin], performDefaultValidation: false)
            case .publicKeys: try PublicKeysTrustEvaluator(keys: [key.publicKey], performDefaultValidation: false)
            case .pinSet:
                try PinSetTrustEvaluator(
                    pinSet: PinSet([.init(key.pin, label: "pinned CA")], minimumPinCount: 1), performDefaultValidation: false)
            }
        }
    }

    /// How the attacker makes its copy of the pinned certificate.
    enum Forgery: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// Names itself as issuer, signed with a key the attacker made.
        case selfSignedWithJunkKey
        /// Issued by a root the attacker made with the genuine root's name.
        case reissuedByRogueRoot

        var testDescription: String { rawValue }

        /// A copy of `genuine` (its name and key) with every constraint lifted.
        func copy(of genuine: LabCA, issuerName: String) throws -> Certificate {
            let widened = CertificateSpec(
                subject: genuine.name, subjectKey: genuine.key, notBefore: .days(-1), notAfter: .days(3650),
                isCA: true, pathLength: nil, extendedKeyUsage: [], permittedDNSNames: [])
            switch self {
            case .selfSignedWithJunkKey: return try LabPKI.makeSelfIssued(widened, signedWith: .ecP256())
            case .reissuedByRogueRoot: return try LabPKI.makeRoot(commonName: issuerName).issue(widened)
            }
        }
    }

    static let cases = KeyPinKind.allCases.flatMap { kind in Forgery.allCases.map { (kind, $0) } }

    /// A root whose intermediate the application pins, and a root the trust's anchors hold
    /// instead, so nothing but the pins could make the server trusted.
    let root: LabCA
    let stranger: LabCA

    init() throws {
        root = try LabPKI.makeRoot(commonName: "Genuine Root CA")
        stranger = try LabPKI.makeRoot(commonName: "Stranger Root CA")
    }

    private func trust(presenting chain: [Certificate]) throws -> PeerTrust {
        PeerTrust(presentedChain: chain, anchors: try stranger.trustAnchors())
    }

    /// Evaluates `presented`, whose certificate at `forgedDepth` is the forged copy, and checks
    /// that the copy was refused as an anchor, naming it and why.
    private func expectForgeryRefused(
        _ presented: [Certificate], forgedDepth: Int, kind: KeyPinKind, forgery: Forgery, pinning key: LabKey,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let evaluator = try kind.evaluator(pinning: key)
        let trust = try trust(presenting: presented)
        let error = #expect(
            throws: TrustError.chainValidationFailed, sourceLocation: sourceLocation,
            performing: { try evaluator.evaluate(trust, forHost: Self.host) })
        #expect(error?.evaluator == kind.rawValue, sourceLocation: sourceLocation)
        #expect(error?.evidence.depth == forgedDepth, sourceLocation: sourceLocation)
        #expect(error?.evidence.configuredPins == [key.pin], sourceLocation: sourceLocation)
        #expect(error?.evidence.chain.map(\.pin) == presented.map(\.spkiPin), sourceLocation: sourceLocation)
        let why = forgery == .selfSignedWithJunkKey ? "its signature does not verify with that key" : "is signed by CN=Genuine Root CA"
        #expect(error?.reason.contains(why) == true, "\(error?.reason ?? "no error")", sourceLocation: sourceLocation)
        #expect(trust.validatedChainIfComputed == nil, "a refused chain is recorded as validated", sourceLocation: sourceLocation)
    }

    // MARK: - Forged copies of a constrained pinned intermediate

    @Test(arguments: cases)
    func forgedPinnedIntermediateWithExtendedValidityIsRejected(kind: KeyPinKind, forgery: Forgery) throws {
        let expired = try root.issueIntermediate(commonName: "Pinned Issuing CA", notBefore: .days(-400), notAfter: .days(-1))
        let leaf = try expired.issueLeaf(dnsNames: [Self.host])
        let copy = try forgery.copy(of: expired, issuerName: "Genuine Root CA")
        try expectForgeryRefused([leaf.certificate, copy], forgedDepth: 1, kind: kind, forgery: forgery, pinning: expired.key)
    }

    @Test(arguments: cases)
    func forgedPinnedIntermediateWithoutNameConstraintsIsRejected(kind: KeyPinKind, forgery: Forgery) throws {
        let constrained = try root.issueIntermediate(commonName: "Pinned Issuing CA", permittedDNSNames: ["internal.example.org"])
        let outside = try constrained.issueLeaf(dnsNames: [Self.host])
        let copy = try forgery.copy(of: constrained, issuerName: "Genuine Root CA")
        try expectForgeryRefused([outside.certificate, copy], forgedDepth: 1, kind: kind, forgery: forgery, pinning: constrained.key)
    }

    @Test(arguments: cases)
    func forgedPinnedIntermediateWithoutPathLengthIsRejected(kind: KeyPinKind, forgery: Forgery) throws {
        let limited = try root.issueIntermediate(commonName: "Pinned Issuing CA", pathLength: 0)
        let subordinate = try limited.issueIntermediate(commonName: "Forbidden Sub CA")
        let leaf = try subordinate.issueLeaf(dnsNames: [Self.host])
        let copy = try forgery.copy(of: limited, issuerName: "Genuine Root CA")
        try expectForgeryRefused(
            [leaf.certificate, subordinate.certificate, copy], forgedDepth: 2, kind: kind, forgery: forgery, pinning: limited.key)
    }

    /// Sent as they are, the genuine intermediates fail on their own constraints, which OpenSSL
    /// reports before the rule that a certificate nothing vouches for is no anchor.
    @Test(arguments: KeyPinKind.allCases)
    func theGenuineConstrainedIntermediateIsRejectedForItsOwnConstraint(kind: KeyPinKind) throws {
        let expired = try root.issueIntermediate(commonName: "Expired CA", notBefore: .days(-400), notAfter: .days(-1))
        let constrained = try root.issueIntermediate(commonName: "Constrained CA", permittedDNSNames: ["internal.example.org"])
        let limited = try root.issueIntermediate(commonName: "Limited CA", pathLength: 0)
        let subordinate = try limited.issueIntermediate(commonName: "Forbidden Sub CA")
        let cases: [(LabCA, [Certificate], Int32)] = [
            (expired, try expired.issueLeaf(dnsNames: [Self.host]).chain, X509_V_ERR_CERT_HAS_EXPIRED),
            (constrained, try constrained.issueLeaf(dnsNames: [Self.host]).chain, X509_V_ERR_PERMITTED_VIOLATION),
            (limited, try subordinate.issueLeaf(dnsNames: [Self.host]).chain, X509_V_ERR_PATH_LENGTH_EXCEEDED),
        ]
        for (pinned, presented, expected) in cases {
            let error = #expect(throws: TrustError.chainValidationFailed) {
                try kind.evaluator(pinning: pinned.key).evaluate(trust(presenting: presented), forHost: Self.host)
            }
            #expect(error?.evidence.verifyResult == expected, "\(pinned.name)")
            #expect(error?.evaluator == kind.rawValue)
        }
    }

    // MARK: - What a key pin can still anchor on

    @Test(arguments: KeyPinKind.allCases)
    func withoutDefaultValidationAPinnedIntermediateNothingVouchesForIsNoAnchor(kind: KeyPinKind) throws {
        let intermediate = try root.issueIntermediate(commonName: "Pinned Issuing CA")
        let leaf = try intermediate.issueLeaf(dnsNames: [Self.host])
        let error = #expect(throws: TrustError.chainValidationFailed) {
            try kind.evaluator(pinning: intermediate.key).evaluate(trust(presenting: leaf.chain), forHost: Self.host)
        }
        #expect(error?.evaluator == kind.rawValue)
        #expect(error?.evidence.depth == 1)
        #expect(error?.reason.contains("CN=Pinned Issuing CA") == true)
        #expect(error?.reason.contains("performDefaultValidation") == true, "the message says how to fix the policy")
    }

    @Test(arguments: KeyPinKind.allCases)
    func withoutDefaultValidationAPinnedSelfSignedRootTheServerSendsIsTheAnchor(kind: KeyPinKind) throws {
        let intermediate = try root.issueIntermediate(commonName: "Issuing CA")
        let leaf = try intermediate.issueLeaf(dnsNames: [Self.host])
        let trust = try trust(presenting: leaf.chain + [root.certificate])
        try kind.evaluator(pinning: root.key).evaluate(trust, forHost: Self.host)
        #expect(trust.validatedChainIfComputed == [leaf.certificate, intermediate.certificate, root.certificate])
    }

    @Test(arguments: KeyPinKind.allCases)
    func aPinnedSelfSignedRootKeepsItsOwnNameConstraints(kind: KeyPinKind) throws {
        let constrainedRoot = try LabPKI.makeRoot(commonName: "Pinned Root CA", permittedDNSNames: ["internal.example.org"])
        let leaf = try constrainedRoot.issueIntermediate().issueLeaf(dnsNames: [Self.host])
        let error = #expect(throws: TrustError.chainValidationFailed) {
            try kind.evaluator(pinning: constrainedRoot.key)
                .evaluate(trust(presenting: leaf.chain + [constrainedRoot.certificate]), forHost: Self.host)
        }
        #expect(error?.evidence.verifyResult == X509_V_ERR_PERMITTED_VIOLATION)
    }

    @Test(arguments: KeyPinKind.allCases)
    func forgedPinnedRootWithoutNameConstraintsIsRejected(kind: KeyPinKind) throws {
        let constrainedRoot = try LabPKI.makeRoot(commonName: "Pinned Root CA", permittedDNSNames: ["internal.example.org"])
        let intermediate = try constrainedRoot.issueIntermediate()
        let leaf = try intermediate.issueLeaf(dnsNames: [Self.host])
        let copy = try Forgery.selfSignedWithJunkKey.copy(of: constrainedRoot, issuerName: "")
        try expectForgeryRefused(
            leaf.chain + [copy], forgedDepth: 2, kind: kind, forgery: .selfSignedWithJunkKey, pinning: constrainedRoot.key)
    }

    /// A pinned certificate is configured whole, so its own constraints hold whatever copy the
    /// server sends: certificate pinning keeps anchoring on it, as before.
    @Test(arguments: Forgery.allCases)
    func pinnedCertificatesAnchorOnTheConfiguredCertificateNotTheForgedCopy(forgery: Forgery) throws {
        let expired = try root.issueIntermediate(commonName: "Pinned Issuing CA", notBefore: .days(-400), notAfter: .days(-1))
        let leaf = try expired.issueLeaf(dnsNames: [Self.host])
        let copy = try forgery.copy(of: expired, issuerName: "Genuine Root CA")
        let evaluator = try PinnedCertificatesTrustEvaluator(certificates: [expired.certificate], performDefaultValidation: false)
        let error = #expect(throws: TrustError.chainValidationFailed) {
            try evaluator.evaluate(trust(presenting: [leaf.certificate, copy]), forHost: Self.host)
        }
        #expect(error?.evidence.verifyResult == X509_V_ERR_CERT_HAS_EXPIRED)
        #expect(error?.evidence.depth == 1)
        #expect(error?.evaluator == "PinnedCertificatesTrustEvaluator")

        let valid = try root.issueIntermediate(commonName: "Pinned Issuing CA")
        try PinnedCertificatesTrustEvaluator(certificates: [valid.certificate], performDefaultValidation: false)
            .evaluate(trust(presenting: try valid.issueLeaf(dnsNames: [Self.host]).chain), forHost: Self.host)
    }
}
