import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

@Suite struct CertificateParsingTests {
    let certificate: Certificate

    init() throws {
        certificate = try LabPKI.makeRoot().issueLeaf(dnsNames: ["api.example.com"]).certificate
    }

    @Test func derPEMAndBase64EncodingsParseToTheSameCertificate() throws {
        let der = certificate.derEncoded
        let fromDER = try Certificate(derEncoded: der)
        let fromPEM = try Certificate(pemEncoded: certificate.pemEncoded)
        let fromBase64 = try Certificate(base64Encoded: Data(der).base64EncodedString())
        #expect(fromDER.derEncoded == der)
        #expect(fromPEM.derEncoded == der)
        #expect(fromBase64.derEncoded == der)
        #expect(fromDER == certificate && fromPEM == certificate && fromBase64 == certificate)
    }

    @Test func pemTextAroundTheBlockAndCRLFLineEndingsAreAccepted() throws {
        let pem = "subject=CN = api.example.com\r\n" + certificate.pemEncoded.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(try Certificate(pemEncoded: pem) == certificate)
    }

    @Test func emptyDERIsRefusedAsEmpty() {
        let error = #expect(throws: TrustError.malformedCertificate) { try Certificate(derEncoded: []) }
        #expect(error?.reason.contains("empty") == true)
    }

    @Test func garbageIsNotACertificate() {
        let error = #expect(throws: TrustError.malformedCertificate) {
            try Certificate(derEncoded: Array("this is not a certificate".utf8))
        }
        #expect(error?.reason.contains("not a DER-encoded X.509 certificate") == true)
        #expect(error?.evidence.openSSLErrors.isEmpty == false)
    }

    @Test func truncatedDERIsRefused() {
        let der = certificate.derEncoded
        #expect(throws: TrustError.malformedCertificate) { try Certificate(derEncoded: Array(der.dropLast(10))) }
        #expect(throws: TrustError.malformedCertificate) { try Certificate(derEncoded: Array(der.prefix(1))) }
    }

    @Test func trailingBytesAfterTheDERAreRefusedWithTheirCount() {
        let error = #expect(throws: TrustError.malformedCertificate) {
            try Certificate(derEncoded: certificate.derEncoded + [0, 1, 2])
        }
        #expect(error?.reason.contains("3 bytes of trailing data") == true)
    }

    @Test func derOverTheSizeLimitIsRefusedBeforeParsing() {
        let oversized = certificate.derEncoded + [UInt8](repeating: 0, count: Certificate.maximumDERSize)
        let error = #expect(throws: TrustError.malformedCertificate) { try Certificate(derEncoded: oversized) }
        #expect(error?.reason.contains("limit") == true)
    }

    @Test func invalidBase64IsRefused() {
        let error = #expect(throws: TrustError.malformedCertificate) { try Certificate(base64Encoded: "!!!!") }
        #expect(error?.reason.contains("not valid base64") == true)
        #expect(throws: TrustError.malformedCertificate) { try Certificate(base64Encoded: "") }
    }

    @Test func pemWithoutACertificateBlockIsRefused() {
        let error = #expect(throws: TrustError.malformedCertificate) {
            try Certificate(pemEncoded: "just some text\nwithout a block\n")
        }
        #expect(error?.reason.contains("No \"-----BEGIN CERTIFICATE-----\" block") == true)
    }

    @Test func aPEMWithTwoCertificatesIsRefusedBySingleCertificateInit() throws {
        let other = try LabPKI.makeRoot().certificate
        let error = #expect(throws: TrustError.malformedCertificate) {
            try Certificate(pemEncoded: certificate.pemEncoded + other.pemEncoded)
        }
        #expect(error?.reason.contains("found 2") == true)
    }

    @Test func anUnterminatedPEMBlockIsRefused() {
        let pem = certificate.pemEncoded.replacingOccurrences(of: "-----END CERTIFICATE-----\n", with: "")
        let error = #expect(throws: TrustError.malformedCertificate) { try Certificate(pemEncoded: pem) }
        #expect(error?.reason.contains("has no END line") == true)
    }

    @Test func aPEMBlockWithMismatchedEndLabelIsRefused() {
        let pem = certificate.pemEncoded.replacingOccurrences(of: "END CERTIFICATE", with: "END X509 CRL")
        #expect(throws: TrustError.malformedCertificate) { try Certificate(pemEncoded: pem) }
    }

    @Test func aPEMBlockWithCorruptBase64IsRefused() {
        let pem = "-----BEGIN CERTIFICATE-----\nMIIB*not*base64\n-----END CERTIFICATE-----\n"
        let error = #expect(throws: TrustError.malformedCertificate) { try Certificate(pemEncoded: pem) }
        #expect(error?.reason.contains("not valid base64") == true)
    }

    @Test func trustedCertificateBlocksAreRefusedRatherThanHalfUnderstood() {
        let pem = certificate.pemEncoded.replacingOccurrences(of: "CERTIFICATE-----", with: "TRUSTED CERTIFICATE-----")
        let error = #expect(throws: TrustError.malformedCertificate) { try Certificate(pemEncoded: pem) }
        #expect(error?.reason.contains("TRUSTED CERTIFICATE") == true)
    }

    @Test func keysAndOtherBlocksBesideTheCertificateAreSkipped() throws {
        let key = LabKey.ecP256()
        #expect(try Certificate(pemEncoded: key.pemPrivateKey + certificate.pemEncoded) == certificate)
    }
}

@Suite struct CertificateBundleTests {
    @Test func aBundleParsesEveryCertificateInOrder() throws {
        let leaf = try SitePKI().leaf
        let parsed = try Certificate.certificates(pemBundle: leaf.pemChain)
        #expect(parsed == leaf.chain)
    }

    @Test func aBadCertificateInABundleIsReportedWithItsPosition() throws {
        let leaf = try SitePKI().leaf
        let notACertificate = "-----BEGIN CERTIFICATE-----\n" + Data("not a certificate".utf8).base64EncodedString()
            + "\n-----END CERTIFICATE-----\n"
        let bundle = leaf.chain[0].pemEncoded + notACertificate + leaf.chain[1].pemEncoded
        let error = #expect(throws: TrustError.malformedCertificate) { try Certificate.certificates(pemBundle: bundle) }
        #expect(error?.reason.contains("Certificate 2 of 3") == true)
    }

    @Test func aBundleWithNoCertificateIsRefused() {
        #expect(throws: TrustError.malformedCertificate) { try Certificate.certificates(pemBundle: "") }
    }

    @Test func filesAreReadAsPEMBundlesOrSingleDERCertificates() throws {
        let leaf = try SitePKI().leaf
        let pemPath = try LabPKI.writeTemporaryFile(leaf.pemChain)
        let derPath = try LabPKI.writeTemporaryFile(leaf.certificate.derEncoded, name: "leaf.der")
        defer {
            LabPKI.removeTemporaryFile(pemPath)
            LabPKI.removeTemporaryFile(derPath)
        }
        #expect(try Certificate.certificates(contentsOfFile: pemPath) == leaf.chain)
        #expect(try Certificate.certificates(contentsOfFile: derPath) == [leaf.certificate])
    }

    @Test func fileErrorsNameTheFile() throws {
        let path = try LabPKI.writeTemporaryFile("-----BEGIN CERTIFICATE-----\nAAAA\n")
        defer { LabPKI.removeTemporaryFile(path) }
        let error = #expect(throws: TrustError.malformedCertificate) { try Certificate.certificates(contentsOfFile: path) }
        #expect(error?.reason.hasPrefix(path) == true)
        #expect(throws: TrustError.unreadableInput) { try Certificate.certificates(contentsOfFile: path + ".missing") }
    }
}

@Suite struct CertificatePropertyTests {
    @Test func subjectIssuerAndSerialAreReadFromTheCertificate() throws {
        let root = try LabPKI.makeRoot(commonName: "Property Root")
        let leaf = try root.issue(
            CertificateSpec(
                subject: LabName(commonName: "api.example.com", organization: "Example Org"), subjectKey: .ecP256(),
                serialNumber: "7A3B01C4"))
        #expect(leaf.subject == "CN=api.example.com,O=Example Org")
        #expect(leaf.issuer == "CN=Property Root")
        #expect(leaf.serialNumber == "7A3B01C4")
        #expect(!leaf.isSelfIssued)
        #expect(root.certificate.isSelfIssued)
    }

    @Test func randomSerialNumbersAreSixteenPositiveBytes() throws {
        let root = try LabPKI.makeRoot()
        let serials = try (0..<4).map { _ in try root.issueLeaf(dnsNames: ["a.example"]).certificate.serialNumber }
        #expect(Set(serials).count == 4)
        for serial in serials {
            #expect(serial.count == 32)
            #expect("4567".contains(serial.first!))
        }
    }

    @Test func validityDatesAreReadToTheSecond() throws {
        let notBefore = Date(timeIntervalSince1970: 1_900_000_000)
        let notAfter = Date(timeIntervalSince1970: 1_950_000_000)
        let root = try LabPKI.makeRoot()
        let leaf = try root.issueLeaf(dnsNames: ["a.example"], notBefore: notBefore, notAfter: notAfter).certificate
        #expect(leaf.notValidBefore == notBefore)
        #expect(leaf.notValidAfter == notAfter)
    }

    @Test func datesAfter2049AreGeneralizedTime() throws {
        let notAfter = Date(timeIntervalSince1970: 4_102_444_800)  // 2100-01-01
        let root = try LabPKI.makeRoot(notAfter: notAfter)
        #expect(root.certificate.notValidAfter == notAfter)
    }

    @Test func subjectAltNamesListDNSNamesAndIPv4AndIPv6Addresses() throws {
        let leaf = try LabPKI.makeRoot().issueLeaf(
            dnsNames: ["api.example.com", "*.cdn.example.com"], ipAddresses: ["192.0.2.7", "2001:db8::1"]
        ).certificate
        #expect(leaf.dnsNames == ["api.example.com", "*.cdn.example.com"])
        #expect(leaf.ipAddresses == ["192.0.2.7", "2001:db8::1"])
    }

    @Test func aCertificateWithoutSubjectAltNameHasNoNames() throws {
        let root = try LabPKI.makeRoot()
        #expect(root.certificate.dnsNames.isEmpty)
        #expect(root.certificate.ipAddresses.isEmpty)
    }

    @Test func controlBytesInADNSNameAreEscapedNotTruncated() throws {
        let leaf = try LabPKI.makeRoot().issueLeaf(dnsNames: ["good.example\u{0}.evil.example"]).certificate
        #expect(leaf.dnsNames == ["good.example\\x00.evil.example"])
    }

    @Test(arguments: [
        (LabKey.ecP256(), "EC P-256", 256, "ecdsa-with-SHA256"),
        (LabKey.ecP384(), "EC P-384", 384, "ecdsa-with-SHA256"),
        (LabKey.rsa(bits: 2048), "RSA", 2048, "sha256WithRSAEncryption"),
        (LabKey.ed25519(), "Ed25519", 256, "ED25519"),
    ])
    func keyTypeSizeAndSignatureAlgorithmAreReported(key: LabKey, type: String, bits: Int, signature: String) throws {
        let root = try LabPKI.makeRoot(key: key)
        #expect(root.certificate.keyType == type)
        #expect(root.certificate.keySize == bits)
        #expect(root.certificate.signatureAlgorithm == signature)
        #expect(root.certificate.publicKey == key.publicKey)
    }

    @Test func theFingerprintIsTheSHA256OfTheDEREncoding() throws {
        let root = try LabPKI.makeRoot()
        let other = try LabPKI.makeRoot()
        #expect(root.certificate.sha256Fingerprint.count == 32)
        #expect(root.certificate.sha256Fingerprint != other.certificate.sha256Fingerprint)
        #expect(try Certificate(derEncoded: root.certificate.derEncoded).sha256Fingerprint == root.certificate.sha256Fingerprint)
    }

    @Test func ocspAndCRLDistributionURLsAreRead() throws {
        let leaf = try LabPKI.makeRoot().issueLeaf(
            dnsNames: ["a.example"], ocspURL: "http://ocsp.example/check", crlURL: "http://crl.example/ca.crl"
        ).certificate
        #expect(leaf.ocspURLs == ["http://ocsp.example/check"])
        #expect(leaf.crlDistributionPoints == ["http://crl.example/ca.crl"])
    }

    @Test func everyURIOfAFullNameIsReadInOrderAndOtherNamesAreSkipped() throws {
        // One distribution point whose fullName holds a URI, a DNS name and another URI.
        let leaf = try LabPKI.makeRoot().issueLeaf(
            dnsNames: ["a.example"], crlURL: "http://crl.example/a.crl,DNS:crl.example,URI:ldap://ldap.example/cn=CA"
        ).certificate
        #expect(leaf.crlDistributionPoints == ["http://crl.example/a.crl", "ldap://ldap.example/cn=CA"])
    }

    @Test func certificatesWithoutRevocationPointersHaveNoURLs() throws {
        let leaf = try LabPKI.makeRoot().issueLeaf(dnsNames: ["a.example"]).certificate
        #expect(leaf.ocspURLs.isEmpty)
        #expect(leaf.crlDistributionPoints.isEmpty)
    }

    @Test func equalityAndHashingFollowTheEncoding() throws {
        let root = try LabPKI.makeRoot()
        let copy = try Certificate(derEncoded: root.certificate.derEncoded)
        let other = try LabPKI.makeRoot()
        #expect(copy == root.certificate)
        #expect(copy.hashValue == root.certificate.hashValue)
        #expect(copy !== root.certificate)
        #expect(other.certificate != root.certificate)
        #expect(Set([copy, root.certificate, other.certificate]).count == 2)
    }

    @Test func theDescriptionNamesSubjectAndPin() throws {
        let root = try LabPKI.makeRoot(commonName: "Described Root")
        #expect(root.certificate.description == "Certificate(CN=Described Root, \(root.key.pin))")
    }
}
