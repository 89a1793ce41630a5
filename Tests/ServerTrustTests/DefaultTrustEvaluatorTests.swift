import COpenSSL
import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

@Suite struct DefaultTrustEvaluatorTests {
    let root: LabCA
    let intermediate: LabCA

    init() throws {
        root = try LabPKI.makeRoot()
        intermediate = try root.issueIntermediate()
    }

    private func evaluate(_ leaf: LabLeaf, host: String, at time: Date = Date()) throws {
        try DefaultTrustEvaluator().evaluate(leaf.serverTrust(validationTime: time), forHost: host)
    }

    @Test func aValidChainForTheHostIsAccepted() throws {
        let leaf = try intermediate.issueLeaf(dnsNames: ["api.example.com"])
        try evaluate(leaf, host: "api.example.com")
        try evaluate(leaf, host: "API.Example.COM.")  // case and a trailing dot do not matter
    }

    @Test func anExpiredLeafIsRejectedWithOpenSSLsExpiredError() throws {
        let leaf = try intermediate.issueLeaf(dnsNames: ["api.example.com"], notBefore: .days(-30), notAfter: .days(-1))
        let error = #expect(throws: TrustError.chainValidationFailed) { try evaluate(leaf, host: "api.example.com") }
        #expect(error?.evidence.verifyResult == X509_V_ERR_CERT_HAS_EXPIRED)
        #expect(error?.evidence.depth == 0)
        #expect(error?.evaluator == "DefaultTrustEvaluator")
        #expect(error?.host == "api.example.com")
    }

    @Test func aNotYetValidLeafIsRejected() throws {
        let leaf = try intermediate.issueLeaf(dnsNames: ["api.example.com"], notBefore: .days(1), notAfter: .days(30))
        let error = #expect(throws: TrustError.chainValidationFailed) { try evaluate(leaf, host: "api.example.com") }
        #expect(error?.evidence.verifyResult == X509_V_ERR_CERT_NOT_YET_VALID)
    }

    @Test func anExpiredIntermediateIsRejectedAtDepthOne() throws {
        let expired = try root.issueIntermediate(notBefore: .days(-60), notAfter: .days(-1))
        let leaf = try expired.issueLeaf(dnsNames: ["api.example.com"])
        let error = #expect(throws: TrustError.chainValidationFailed) { try evaluate(leaf, host: "api.example.com") }
        #expect(error?.evidence.verifyResult == X509_V_ERR_CERT_HAS_EXPIRED)
        #expect(error?.evidence.depth == 1)
    }

    @Test func aChainFromAnUnknownIssuerIsRejected() throws {
        let stranger = try LabPKI.makeRoot(commonName: "Stranger Root").issueIntermediate()
        let leaf = try stranger.issueLeaf(dnsNames: ["api.example.com"])
        let trust = try leaf.serverTrust(anchors: root.trustAnchors())
        let error = #expect(throws: TrustError.chainValidationFailed) {
            try DefaultTrustEvaluator().evaluate(trust, forHost: "api.example.com")
        }
        #expect(error?.evidence.verifyResult == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY)
        #expect(error?.evidence.chain.map(\.pin) == leaf.chain.map(\.spkiPin))
    }

    @Test func anEndEntityCannotIssueCertificates() throws {
        let signer = try intermediate.issueSigner(CertificateSpec(subject: "Not A CA", subjectKey: .ecP256(), dnsNames: ["x.example"]))
        let leaf = try signer.issueLeaf(dnsNames: ["api.example.com"])
        let error = #expect(throws: TrustError.chainValidationFailed) { try evaluate(leaf, host: "api.example.com") }
        #expect(error?.evidence.verifyResult == X509_V_ERR_INVALID_CA)
    }

    @Test func aLeafForAnotherHostIsRejected() throws {
        let leaf = try intermediate.issueLeaf(dnsNames: ["www.example.com"])
        let error = #expect(throws: TrustError.hostMismatch) { try evaluate(leaf, host: "api.example.com") }
        #expect(error?.reason.contains("www.example.com") == true)
        #expect(error?.evaluator == "DefaultTrustEvaluator")
        #expect(error?.evidence.chain.map(\.pin) == [leaf.certificate.spkiPin])
    }

    @Test(arguments: ["192.0.2.7", "2001:db8::1", "[2001:db8::1]", "2001:0db8:0000::0001"])
    func anIPAddressMatchesAnIPAddressSubjectAltName(host: String) throws {
        let leaf = try intermediate.issueLeaf(ipAddresses: ["192.0.2.7", "2001:db8::1"])
        try evaluate(leaf, host: host)
    }

    @Test(arguments: ["192.0.2.8", "2001:db8::2"])
    func anotherIPAddressIsRejected(host: String) throws {
        let leaf = try intermediate.issueLeaf(ipAddresses: ["192.0.2.7", "2001:db8::1"])
        #expect(throws: TrustError.hostMismatch) { try evaluate(leaf, host: host) }
    }

    @Test func aDNSNameThatSpellsAnIPAddressNeverMatchesThatAddress() throws {
        let leaf = try intermediate.issueLeaf(dnsNames: ["192.0.2.7"])
        #expect(throws: TrustError.hostMismatch) { try evaluate(leaf, host: "192.0.2.7") }
    }

    @Test func anIPAddressSubjectAltNameNeverMatchesADNSHost() throws {
        let leaf = try intermediate.issueLeaf(ipAddresses: ["192.0.2.7"])
        #expect(throws: TrustError.hostMismatch) { try evaluate(leaf, host: "api.example.com") }
    }

    @Test func aWildcardCoversExactlyOneLabel() throws {
        let leaf = try intermediate.issueLeaf(dnsNames: ["*.example.com"])
        try evaluate(leaf, host: "api.example.com")
        #expect(throws: TrustError.hostMismatch) { try evaluate(leaf, host: "a.b.example.com") }
        #expect(throws: TrustError.hostMismatch) { try evaluate(leaf, host: "example.com") }
    }

    @Test func partialLabelWildcardsAreRefused() throws {
        let leaf = try intermediate.issueLeaf(dnsNames: ["api*.example.com"])
        #expect(throws: TrustError.hostMismatch) { try evaluate(leaf, host: "api1.example.com") }
    }

    @Test func theCommonNameIsNeverUsedWhenThereIsNoSubjectAltName() throws {
        let leaf = try intermediate.issueLeaf(commonName: "api.example.com")
        #expect(leaf.certificate.dnsNames.isEmpty)
        let error = #expect(throws: TrustError.hostMismatch) { try evaluate(leaf, host: "api.example.com") }
        #expect(error?.reason.contains("no DNS name or IP address") == true)
    }

    @Test func aMalformedHostIsRejected() throws {
        let leaf = try intermediate.issueLeaf(dnsNames: ["api.example.com"])
        #expect(throws: TrustError.hostMismatch) { try evaluate(leaf, host: "") }
        #expect(throws: TrustError.hostMismatch) { try evaluate(leaf, host: "api.example.com\u{0}.evil") }
    }

    @Test func aClientAuthenticationOnlyLeafIsRejectedForTheServerPurpose() throws {
        let leaf = try intermediate.issueLeaf(dnsNames: ["api.example.com"], extendedKeyUsage: [.clientAuth])
        let error = #expect(throws: TrustError.chainValidationFailed) { try evaluate(leaf, host: "api.example.com") }
        #expect(error?.evidence.verifyResult == X509_V_ERR_INVALID_PURPOSE)
        #expect(error?.evidence.depth == 0)
    }

    @Test func aLeafWithoutExtendedKeyUsageIsAcceptedAsServer() throws {
        let leaf = try intermediate.issueLeaf(dnsNames: ["api.example.com"], extendedKeyUsage: [])
        try evaluate(leaf, host: "api.example.com")
    }

    @Test func theValidationTimeOfTheTrustIsHonoured() throws {
        let leaf = try intermediate.issueLeaf(dnsNames: ["api.example.com"], notBefore: .days(100), notAfter: .days(200))
        try evaluate(leaf, host: "api.example.com", at: .days(150))
        let early = #expect(throws: TrustError.chainValidationFailed) { try evaluate(leaf, host: "api.example.com", at: .days(0)) }
        #expect(early?.evidence.verifyResult == X509_V_ERR_CERT_NOT_YET_VALID)
        let late = #expect(throws: TrustError.chainValidationFailed) { try evaluate(leaf, host: "api.example.com", at: .days(300)) }
        #expect(late?.evidence.verifyResult == X509_V_ERR_CERT_HAS_EXPIRED)
    }

    @Test func anIntermediateAloneIsAcceptedAsTheAnchor() throws {
        let leaf = try intermediate.issueLeaf(dnsNames: ["api.example.com"])
        let trust = try leaf.serverTrust(anchors: TrustAnchors([intermediate.certificate]))
        try DefaultTrustEvaluator().evaluate(trust, forHost: "api.example.com")
        #expect(try trust.validatedChain() == [leaf.certificate, intermediate.certificate])
    }

    @Test func explicitAnchorsOverrideTheAnchorsOfTheTrust() throws {
        let otherRoot = try LabPKI.makeRoot(commonName: "Other Root")
        let leaf = try intermediate.issueLeaf(dnsNames: ["api.example.com"])
        let trust = try leaf.serverTrust()  // anchored at the leaf's own root
        try DefaultTrustEvaluator().evaluate(trust, forHost: "api.example.com")
        let error = #expect(throws: TrustError.chainValidationFailed) {
            try DefaultTrustEvaluator(anchors: otherRoot.trustAnchors()).evaluate(trust, forHost: "api.example.com")
        }
        #expect(error?.evidence.verifyResult == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY)

        let otherLeaf = try otherRoot.issueLeaf(dnsNames: ["api.example.com"])
        let otherTrust = try otherLeaf.serverTrust(anchors: root.trustAnchors())
        try DefaultTrustEvaluator(anchors: otherRoot.trustAnchors()).evaluate(otherTrust, forHost: "api.example.com")
    }

    @Test func aCertificateRevokedByACRLInTheAnchorsIsRejectedAsRevoked() throws {
        let leaf = try root.issueLeaf(dnsNames: ["api.example.com"])
        let crl = try root.makeCRL(revoked: [RevokedCertificate(leaf.certificate, reason: 1)])
        let error = #expect(throws: TrustError.revoked) {
            try DefaultTrustEvaluator().evaluate(leaf.serverTrust(revocationLists: [crl]), forHost: "api.example.com")
        }
        #expect(error?.evidence.verifyResult == X509_V_ERR_CERT_REVOKED)
        #expect(error?.evidence.depth == 0)
        #expect(error?.evaluator == "DefaultTrustEvaluator")
    }

    @Test func aCertificateNotOnTheCRLIsAccepted() throws {
        let leaf = try root.issueLeaf(dnsNames: ["api.example.com"])
        let other = try root.issueLeaf(dnsNames: ["other.example.com"])
        let crl = try root.makeCRL(revoked: [RevokedCertificate(other.certificate)])
        try DefaultTrustEvaluator().evaluate(leaf.serverTrust(revocationLists: [crl]), forHost: "api.example.com")
    }

    @Test func aWeakRSA1024LeafIsRejectedAtAuthenticationLevelTwo() throws {
        let leaf = try intermediate.issueLeaf(dnsNames: ["api.example.com"], key: .rsa(bits: 1024))
        let error = #expect(throws: TrustError.chainValidationFailed) { try evaluate(leaf, host: "api.example.com") }
        #expect(error?.evidence.verifyResult == X509_V_ERR_EE_KEY_TOO_SMALL)

        let lenient = PeerTrust(
            presentedChain: leaf.chain, anchors: try root.trustAnchors(),
            validationOptions: PathValidationOptions(authenticationLevel: 1))
        try DefaultTrustEvaluator().evaluate(lenient, forHost: "api.example.com")
    }

    @Test func theDefaultFactoryBuildsTheDefaultEvaluator() throws {
        let leaf = try intermediate.issueLeaf(dnsNames: ["www.example.com"])
        let evaluator: DefaultTrustEvaluator = .default()
        #expect(evaluator.name == "DefaultTrustEvaluator")
        #expect(throws: TrustError.hostMismatch) { try evaluator.evaluate(leaf.serverTrust(), forHost: "api.example.com") }
    }
}
