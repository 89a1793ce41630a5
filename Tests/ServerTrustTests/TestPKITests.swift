import COpenSSL
import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// The test PKI is what every other test stands on: check that it makes what it says.
@Suite struct TestPKITests {
    @Test func rsaKeysAreCachedPerSizeAndVariant() {
        #expect(TestKey.rsa(bits: 2048) === TestKey.rsa(bits: 2048))
        #expect(TestKey.rsa(bits: 2048).publicKey != TestKey.rsa(bits: 2048, variant: 1).publicKey)
        #expect(TestKey.rsa(bits: 2048).publicKey.keySize == 2048)
        #expect(TestKey.rsa(bits: 1024).publicKey.keySize == 1024)
    }

    @Test func otherKeysAreFreshEachTime() {
        #expect(TestKey.ecP256().publicKey != TestKey.ecP256().publicKey)
        #expect(TestKey.ed25519().publicKey != TestKey.ed25519().publicKey)
    }

    @Test(arguments: [TestKey.ecP256(), TestKey.rsa(bits: 2048), TestKey.ed25519()])
    func privateKeysExportAsPKCS8ThatOpenSSLReadsBack(key: TestKey) throws {
        #expect(key.pemPrivateKey.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        let pem = try TestPKI.writeTemporaryFile(key.pemPrivateKey, name: "key.pem")
        let der = try TestPKI.writeTemporaryFile(key.derPrivateKey, name: "key.der")
        defer {
            TestPKI.removeTemporaryFile(pem)
            TestPKI.removeTemporaryFile(der)
        }
        let digest = "openssl pkey -pubout -outform DER | openssl dgst -sha256 -binary | base64"
        #expect(try shell("openssl pkey -in '\(pem)' | \(digest)") == key.pin.base64)
        #expect(try shell("openssl pkey -inform DER -in '\(der)' | \(digest)") == key.pin.base64)
    }

    @Test func leavesCarryTheRequestedExtensions() throws {
        let leaf = try TestPKI.makeRoot().issueLeaf(
            dnsNames: ["api.example.com"], ipAddresses: ["192.0.2.1"], key: .rsa(bits: 2048),
            ocspURL: "http://ocsp.example", crlURL: "http://crl.example/a.crl", mustStaple: true)
        let text = try certificateText(leaf.certificate)
        #expect(text.contains("TLS Feature: \n                status_request"))
        #expect(text.contains("X509v3 Basic Constraints: \n                CA:FALSE"))
        #expect(text.contains("X509v3 Key Usage: critical\n                Digital Signature, Key Encipherment"))
        #expect(text.contains("X509v3 Extended Key Usage: \n                TLS Web Server Authentication"))
        #expect(text.contains("DNS:api.example.com, IP Address:192.0.2.1"))
        #expect(text.contains("X509v3 Subject Key Identifier"))
        #expect(text.contains("X509v3 Authority Key Identifier"))
        #expect(text.contains("OCSP - URI:http://ocsp.example"))
    }

    @Test func theMustStapleExtensionIsTheRFC7633Encoding() throws {
        let leaf = try TestPKI.makeRoot().issueLeaf(dnsNames: ["a.example"], mustStaple: true).certificate
        // OID 1.3.6.1.5.5.7.1.24, then OCTET STRING { SEQUENCE { INTEGER 5 } }.
        let encoded: [UInt8] = [0x06, 0x08, 0x2B, 0x06, 0x01, 0x05, 0x05, 0x07, 0x01, 0x18, 0x04, 0x05, 0x30, 0x03, 0x02, 0x01, 0x05]
        #expect(leaf.derEncoded.firstRange(of: encoded) != nil)
        let plain = try TestPKI.makeRoot().issueLeaf(dnsNames: ["a.example"]).certificate
        #expect(plain.derEncoded.firstRange(of: encoded) == nil)
    }

    @Test func caCertificatesAreCriticallyMarkedAndMayCarryConstraints() throws {
        let root = try TestPKI.makeRoot(pathLength: 1)
        let intermediate = try root.issueIntermediate(pathLength: 0, permittedDNSNames: ["example.com"])
        let text = try certificateText(intermediate.certificate)
        #expect(text.contains("X509v3 Basic Constraints: critical\n                CA:TRUE, pathlen:0"))
        #expect(text.contains("Certificate Sign, CRL Sign"))
        #expect(text.contains("Permitted:\n                  DNS:example.com"))
        #expect(intermediate.chain == [intermediate.certificate])
        #expect(intermediate.root == root.certificate)
    }

    @Test func aPathLengthConstraintIsEnforced() throws {
        let root = try TestPKI.makeRoot(pathLength: 0)
        let leaf = try root.issueIntermediate().issueLeaf(dnsNames: ["a.example"])
        let error = #expect(throws: TrustError.chainValidationFailed) {
            try DefaultTrustEvaluator().evaluate(leaf.serverTrust(), forHost: "a.example")
        }
        #expect(error?.evidence.verifyResult == X509_V_ERR_PATH_LENGTH_EXCEEDED)
    }

    @Test func leafChainsListTheIntermediatesNearestFirstWithoutTheRoot() throws {
        let root = try TestPKI.makeRoot()
        let upper = try root.issueIntermediate(commonName: "Upper")
        let lower = try upper.issueIntermediate(commonName: "Lower")
        let leaf = try lower.issueLeaf(dnsNames: ["a.example"])
        #expect(leaf.chain == [leaf.certificate, lower.certificate, upper.certificate])
        #expect(try Certificate.certificates(pemBundle: leaf.pemChain) == leaf.chain)
        #expect(try leaf.serverTrust().validatedChain() == leaf.chain + [root.certificate])
    }

    @Test func aCrossSignedCAChainsToEitherRoot() throws {
        let oldRoot = try TestPKI.makeRoot(commonName: "Old Root")
        let newRoot = try TestPKI.makeRoot(commonName: "New Root")
        let bridge = try oldRoot.crossSign(newRoot)
        #expect(bridge.certificate.subject == "CN=New Root")
        #expect(bridge.certificate.issuer == "CN=Old Root")
        let leaf = try bridge.issueLeaf(dnsNames: ["a.example"])
        #expect(leaf.chain == [leaf.certificate, bridge.certificate])
        let viaOld = try leaf.serverTrust(anchors: TrustAnchors([oldRoot.certificate]))
        let viaNew = try leaf.serverTrust(anchors: TrustAnchors([newRoot.certificate]))
        #expect(try viaOld.validatedChain() == [leaf.certificate, bridge.certificate, oldRoot.certificate])
        #expect(try viaNew.validatedChain() == [leaf.certificate, newRoot.certificate])
    }

    @Test func crlsListTheirEntriesWithReasons() throws {
        let root = try TestPKI.makeRoot()
        let path = try TestPKI.writeTemporaryFile(
            root.makeCRLDER(revoked: [RevokedCertificate(serialNumber: "0ABC", reason: 1)], crlNumber: 7), name: "a.crl")
        defer { TestPKI.removeTemporaryFile(path) }
        let text = try shell("openssl crl -inform DER -noout -text -in '\(path)'")
        #expect(text.contains("Serial Number: 0ABC"))
        #expect(text.contains("Key Compromise"))
        #expect(text.contains("X509v3 CRL Number: \n                7"))
        #expect(text.contains("X509v3 Authority Key Identifier"))
    }

    @Test func badBuilderInputIsReportedNotTrapped() throws {
        let root = try TestPKI.makeRoot()
        #expect(throws: TestPKIError.self) { try root.issueLeaf(ipAddresses: ["not-an-address"]) }
        #expect(throws: TestPKIError.self) { try root.issueLeaf(dnsNames: ["a.example"], serialNumber: "xyz") }
    }

    @Test func temporaryFilesAreWrittenAndRemoved() throws {
        let path = try TestPKI.writeTemporaryFile("hello", name: "greeting.txt")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "hello")
        TestPKI.removeTemporaryFile(path)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    private func certificateText(_ certificate: Certificate) throws -> String {
        let path = try TestPKI.writeTemporaryFile(certificate.pemEncoded)
        defer { TestPKI.removeTemporaryFile(path) }
        return try shell("openssl x509 -noout -text -in '\(path)'")
    }
}
