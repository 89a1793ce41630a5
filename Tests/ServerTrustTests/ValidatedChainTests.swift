import COpenSSL
import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// `PeerTrust`: what an evaluator sees, and its once-only path validation.
@Suite struct ValidatedChainTests {
    let site: SitePKI

    init() throws { site = try SitePKI() }

    @Test func theValidatedChainIsComputedOnceAndReturnedAsTheSameObjects() throws {
        let trust = try site.trust()
        let first = try trust.validatedChain()
        let second = try trust.validatedChain()
        #expect(first.count == 3)
        #expect(zip(first, second).allSatisfy { $0 === $1 })
    }

    @Test func aFailedValidationIsCachedToo() throws {
        let trust = try site.trust(anchors: [LabPKI.makeRoot().certificate])
        #expect(throws: TrustError.chainValidationFailed) { try trust.validatedChain() }
        let error = #expect(throws: TrustError.chainValidationFailed) { try trust.validatedChain() }
        #expect(error?.evidence.verifyResult == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY)
    }

    @Test func thePresentedChainIsKeptAsSentWhileTheValidatedChainIsOrderedAndComplete() throws {
        let extra = try LabPKI.makeRoot(commonName: "Extra").certificate
        let sent = [site.leaf.certificate, extra, site.intermediate.certificate]
        let trust = try site.trust(presenting: sent)
        #expect(trust.presentedChain.count == 3)
        #expect(zip(trust.presentedChain, sent).allSatisfy { $0 === $1 })
        #expect(try trust.validatedChain() == [site.leaf.certificate, site.intermediate.certificate, site.root.certificate])
    }

    @Test func anEmptyPresentedChainIsNoCertificates() throws {
        let trust = PeerTrust(presentedChain: [], anchors: try site.root.trustAnchors())
        #expect(throws: TrustError.noCertificates) { try trust.validatedChain() }
        #expect(throws: TrustError.noCertificates) { try DefaultTrustEvaluator().evaluate(trust, forHost: SitePKI.host) }
    }

    @Test func overSixtyFourPresentedCertificatesAreRefused() throws {
        let padding = [Certificate](repeating: site.intermediate.certificate, count: 64)
        let error = #expect(throws: TrustError.chainValidationFailed) {
            try site.trust(presenting: [site.leaf.certificate] + padding).validatedChain()
        }
        #expect(error?.reason.contains("65 certificates") == true)
    }

    @Test func theTrustKeepsItsContext() throws {
        let time = Date.days(3)
        let anchors = try site.root.trustAnchors()
        let trust = PeerTrust(
            presentedChain: site.leaf.chain, anchors: anchors, validationTime: time, stapledOCSPResponse: [1, 2, 3])
        #expect(trust.anchors === anchors)
        #expect(trust.validationTime == time)
        #expect(trust.stapledOCSPResponse == [1, 2, 3])
        #expect(trust.validationOptions == PathValidationOptions())
    }

    @Test func anAnchorSetCannotBeEmpty() {
        #expect(throws: TrustError.invalidConfiguration) { try TrustAnchors([]) }
    }

    @Test func anchorsKeepTheirCertificatesAndOrigin() throws {
        let anchors = try TrustAnchors([site.root.certificate], origin: "test")
        #expect(anchors.certificates == [site.root.certificate])
        #expect(anchors.origin == "test")
        let path = try LabPKI.writeTemporaryFile(site.root.certificate.pemEncoded)
        defer { LabPKI.removeTemporaryFile(path) }
        let fromFile = try TrustAnchors(contentsOfFile: path)
        #expect(fromFile.origin == path)
        #expect(fromFile.certificates == [site.root.certificate])
    }

    @Test func aNameConstrainedIntermediateCannotIssueOutsideItsDomain() throws {
        let constrained = try site.root.issueIntermediate(commonName: "Constrained CA", permittedDNSNames: ["example.com"])
        let inside = try constrained.issueLeaf(dnsNames: ["api.example.com"])
        let outside = try constrained.issueLeaf(dnsNames: ["api.example.org"])
        try DefaultTrustEvaluator().evaluate(site.trust(presenting: inside.chain), forHost: "api.example.com")
        let error = #expect(throws: TrustError.chainValidationFailed) {
            try DefaultTrustEvaluator().evaluate(site.trust(presenting: outside.chain), forHost: "api.example.org")
        }
        #expect(error?.evidence.verifyResult == X509_V_ERR_PERMITTED_VIOLATION)
    }
}
