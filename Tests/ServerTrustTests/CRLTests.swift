import COpenSSL
import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

@Suite struct CRLTests {
    let site: SitePKI

    init() throws { site = try SitePKI() }

    @Test func aCRLParsesFromDERAndPEMWithItsIssuerAndDates() throws {
        let thisUpdate = Date(timeIntervalSince1970: 1_800_000_000)
        let nextUpdate = Date(timeIntervalSince1970: 1_800_600_000)
        let der = try site.intermediate.makeCRLDER(thisUpdate: thisUpdate, nextUpdate: nextUpdate)
        let pem = "-----BEGIN X509 CRL-----\n"
            + Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            + "\n-----END X509 CRL-----\n"
        for crl in [try CertificateRevocationList(bytes: der), try CertificateRevocationList(bytes: Array(pem.utf8))] {
            #expect(crl.issuer == "CN=Genuine Issuing CA")
            #expect(crl.thisUpdate == thisUpdate)
            #expect(crl.nextUpdate == nextUpdate)
        }
    }

    @Test func aCRLWithoutNextUpdateSaysSo() throws {
        #expect(try site.root.makeCRL(nextUpdate: nil).nextUpdate == nil)
    }

    @Test func malformedCRLsAreRefused() throws {
        let der = try site.root.makeCRLDER()
        #expect(throws: TrustError.malformedCRL) { try CertificateRevocationList(bytes: []) }
        #expect(throws: TrustError.malformedCRL) { try CertificateRevocationList(bytes: Array("garbage".utf8)) }
        #expect(throws: TrustError.malformedCRL) { try CertificateRevocationList(bytes: Array(der.dropLast(4))) }
        #expect(throws: TrustError.malformedCRL) { try CertificateRevocationList(bytes: der + [0]) }
        #expect(throws: TrustError.malformedCRL) {
            try CertificateRevocationList(bytes: Array("-----BEGIN X509 CRL-----\nAAAA\n-----END X509 CRL-----\n".utf8))
        }
    }

    @Test func aCRLFileIsReadAndItsErrorsNameTheFile() throws {
        let good = try LabPKI.writeTemporaryFile(site.root.makeCRLDER(), name: "root.crl")
        let bad = try LabPKI.writeTemporaryFile("not a CRL", name: "bad.crl")
        defer {
            LabPKI.removeTemporaryFile(good)
            LabPKI.removeTemporaryFile(bad)
        }
        #expect(try CertificateRevocationList(contentsOfFile: good).issuer == "CN=Genuine Root CA")
        let error = #expect(throws: TrustError.malformedCRL) { try CertificateRevocationList(contentsOfFile: bad) }
        #expect(error?.reason.hasPrefix(bad) == true)
    }

    /// CRL checking covers the whole chain, so both the root's and the intermediate's CRL are needed.
    private func evaluate(rootCRL: CertificateRevocationList?, intermediateCRL: CertificateRevocationList?) throws {
        let crls = [rootCRL, intermediateCRL].compactMap { $0 }
        let trust = try site.leaf.serverTrust(revocationLists: crls)
        try DefaultTrustEvaluator().evaluate(trust, forHost: SitePKI.host)
    }

    @Test func aChainWithCurrentCRLsAndNoRevocationIsAccepted() throws {
        try evaluate(rootCRL: site.root.makeCRL(), intermediateCRL: site.intermediate.makeCRL())
    }

    @Test func aRevokedLeafIsRejectedAsRevokedAtDepthZero() throws {
        let crl = try site.intermediate.makeCRL(revoked: [RevokedCertificate(site.leaf.certificate, reason: 1)])
        let error = #expect(throws: TrustError.revoked) { try evaluate(rootCRL: site.root.makeCRL(), intermediateCRL: crl) }
        #expect(error?.evidence.verifyResult == X509_V_ERR_CERT_REVOKED)
        #expect(error?.evidence.depth == 0)
    }

    @Test func aRevokedIntermediateIsRejectedAtDepthOne() throws {
        let crl = try site.root.makeCRL(revoked: [RevokedCertificate(site.intermediate.certificate)])
        let error = #expect(throws: TrustError.revoked) { try evaluate(rootCRL: crl, intermediateCRL: site.intermediate.makeCRL()) }
        #expect(error?.evidence.verifyResult == X509_V_ERR_CERT_REVOKED)
        #expect(error?.evidence.depth == 1)
    }

    @Test func aRevocationIsFoundBySerialNumberAlone() throws {
        let revoked = RevokedCertificate(serialNumber: site.leaf.certificate.serialNumber.lowercased())
        #expect(throws: TrustError.revoked) {
            try evaluate(rootCRL: site.root.makeCRL(), intermediateCRL: site.intermediate.makeCRL(revoked: [revoked]))
        }
    }

    @Test func aMissingCRLForAnIssuerFailsValidation() throws {
        let error = #expect(throws: TrustError.chainValidationFailed) { try evaluate(rootCRL: site.root.makeCRL(), intermediateCRL: nil) }
        #expect(error?.evidence.verifyResult == X509_V_ERR_UNABLE_TO_GET_CRL)
    }

    @Test func anExpiredCRLFailsValidation() throws {
        let stale = try site.intermediate.makeCRL(thisUpdate: .days(-14), nextUpdate: .days(-7))
        let error = #expect(throws: TrustError.chainValidationFailed) { try evaluate(rootCRL: site.root.makeCRL(), intermediateCRL: stale) }
        #expect(error?.evidence.verifyResult == X509_V_ERR_CRL_HAS_EXPIRED)
    }

    @Test func aCRLSignedByAnImpostorWithTheIssuersNameIsNotBelieved() throws {
        let impostor = try LabPKI.makeRoot(commonName: "Rogue").issueIntermediate(commonName: "Genuine Issuing CA")
        let forged = try impostor.makeCRL()
        #expect(forged.issuer == "CN=Genuine Issuing CA")
        #expect(throws: TrustError.chainValidationFailed) { try evaluate(rootCRL: site.root.makeCRL(), intermediateCRL: forged) }
    }

    @Test func pinningEvaluatorsValidateAgainstTheCRLsToo() throws {
        let crl = try site.intermediate.makeCRL(revoked: [RevokedCertificate(site.leaf.certificate)])
        let trust = try site.leaf.serverTrust(revocationLists: [site.root.makeCRL(), crl])
        #expect(throws: TrustError.revoked) {
            try PinnedKeyHashesTrustEvaluator(pins: [site.intermediate.key.pin]).evaluate(trust, forHost: SitePKI.host)
        }
    }

    /// The CRLs a session configures revoke what they list whichever evaluator runs: turning off
    /// default validation makes the pins the anchors, it does not turn off revocation.
    @Test(arguments: PinningKind.allCases)
    func aRevokedLeafIsRejectedWhenPinsActAsAnchors(kind: PinningKind) throws {
        let crl = try site.intermediate.makeCRL(revoked: [RevokedCertificate(site.leaf.certificate)])
        let trust = try site.leaf.serverTrust(revocationLists: [site.root.makeCRL(), crl])
        #expect(throws: TrustError.revoked) {
            try kind.evaluator(pinning: [site.intermediate.certificate], performDefaultValidation: false)
                .evaluate(trust, forHost: SitePKI.host)
        }
    }

    @Test func anchorsExposeTheirCRLs() throws {
        let crl = try site.root.makeCRL()
        #expect(try site.root.trustAnchors(revocationLists: [crl]).revocationLists.map(\.issuer) == ["CN=Genuine Root CA"])
    }
}
