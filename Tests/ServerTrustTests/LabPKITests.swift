import COpenSSL
import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// The lab PKI is what every other test stands on: check that it makes what it says.
@Suite struct LabPKITests {
    @Test func rsaKeysAreCachedPerSizeAndVariant() {
        #expect(LabKey.rsa(bits: 2048) === LabKey.rsa(bits: 2048))
        #expect(LabKey.rsa(bits: 2048).publicKey != LabKey.rsa(bits: 2048, variant: 1).publicKey)
        #expect(LabKey.rsa(bits: 2048).publicKey.keySize == 2048)
        #expect(LabKey.rsa(bits: 1024).publicKey.keySize == 1024)
    }

    @Test func otherKeysAreFreshEachTime() {
        #expect(LabKey.ecP256().publicKey != LabKey.ecP256().publicKey)
        #expect(LabKey.ed25519().publicKey != LabKey.ed25519().publicKey)
    }

    @Test(arguments: [LabKey.ecP256(), LabKey.rsa(bits: 2048), LabKey.ed25519()])
    func privateKeysExportAsPKCS8ThatOpenSSLReadsBack(key: LabKey) throws {
        #expect(key.pemPrivateKey.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        let pem = try LabPKI.writeTemporaryFile(key.pemPrivateKey, name: "key.pem")
        let der = try LabPKI.writeTemporaryFile(key.derPrivateKey, name: "key.der")
        defer {
            LabPKI.removeTemporaryFile(pem)
            LabPKI.removeTemporaryFile(der)
        }
        let digest = "openssl pkey -pubout -outform DER | openssl dgst -sha256 -binary | base64"
        #expect(try shell("openssl pkey -in '\(pem)' | \(digest)") == key.pin.base64)
        #expect(try shell("openssl pkey -inform DER -in '\(der)' | \(digest)") == key.pin.base64)
    }

    @Test func leavesCarryTheRequestedExtensions() throws {
        let leaf = try LabPKI.makeRoot().issueLeaf(
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
        let leaf = try LabPKI.makeRoot().issueLeaf(dnsNames: ["a.example"], mustStaple: true).certificate
        // OID 1.3.6.1.5.5.7.1.24, then OCTET STRING { SEQUENCE { INTEGER 5 } }.
        let encoded: [UInt8] = [0x06, 0x08, 0x2B, 0x06, 0x01, 0x05, 0x05, 0x07, 0x01, 0x18, 0x04, 0x05, 0x30, 0x03, 0x02, 0x01, 0x05]
        #expect(leaf.derEncoded.firstRange(of: encoded) != nil)
        let plain = try LabPKI.makeRoot().issueLeaf(dnsNames: ["a.example"]).certificate
        #expect(plain.derEncoded.firstRange(of: encoded) == nil)
    }

    @Test func caCertificatesAreCriticallyMarkedAndMayCarryConstraints() throws {
        let root = try LabPKI.makeRoot(pathLength: 1)
        let intermediate = try root.issueIntermediate(pathLength: 0, permittedDNSNames: ["example.com"])
        let text = try certificateText(intermediate.certificate)
        #expect(text.contains("X509v3 Basic Constraints: critical\n                CA:TRUE, pathlen:0"))
        #expect(text.contains("Certificate Sign, CRL Sign"))
        #expect(text.contains("Permitted:\n                  DNS:example.com"))
        #expect(intermediate.chain == [intermediate.certificate])
        #expect(intermediate.root == root.certificate)
    }

    @Test func aPathLengthConstraintIsEnforced() throws {
        let root = try LabPKI.makeRoot(pathLength: 0)
        let leaf = try root.issueIntermediate().issueLeaf(dnsNames: ["a.example"])
        let error = #expect(throws: TrustError.chainValidationFailed) {
            try DefaultTrustEvaluator().evaluate(leaf.serverTrust(), forHost: "a.example")
        }
        #expect(error?.evidence.verifyResult == X509_V_ERR_PATH_LENGTH_EXCEEDED)
    }

    @Test func leafChainsListTheIntermediatesNearestFirstWithoutTheRoot() throws {
        let root = try LabPKI.makeRoot()
        let upper = try root.issueIntermediate(commonName: "Upper")
        let lower = try upper.issueIntermediate(commonName: "Lower")
        let leaf = try lower.issueLeaf(dnsNames: ["a.example"])
        #expect(leaf.chain == [leaf.certificate, lower.certificate, upper.certificate])
        #expect(try Certificate.certificates(pemBundle: leaf.pemChain) == leaf.chain)
        #expect(try leaf.serverTrust().validatedChain() == leaf.chain + [root.certificate])
    }

    @Test func aCrossSignedCAChainsToEitherRoot() throws {
        let oldRoot = try LabPKI.makeRoot(commonName: "Old Root")
        let newRoot = try LabPKI.makeRoot(commonName: "New Root")
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
        let root = try LabPKI.makeRoot()
        let path = try LabPKI.writeTemporaryFile(
            root.makeCRLDER(revoked: [RevokedCertificate(serialNumber: "0ABC", reason: 1)], crlNumber: 7), name: "a.crl")
        defer { LabPKI.removeTemporaryFile(path) }
        let text = try shell("openssl crl -inform DER -noout -text -in '\(path)'")
        #expect(text.contains("Serial Number: 0ABC"))
        #expect(text.contains("Key Compromise"))
        #expect(text.contains("X509v3 CRL Number: \n                7"))
        #expect(text.contains("X509v3 Authority Key Identifier"))
    }

    @Test func badBuilderInputIsReportedNotTrapped() throws {
        let root = try LabPKI.makeRoot()
        #expect(throws: LabPKIError.self) { try root.issueLeaf(ipAddresses: ["not-an-address"]) }
        #expect(throws: LabPKIError.self) { try root.issueLeaf(dnsNames: ["a.example"], serialNumber: "xyz") }
    }

    @Test func temporaryFilesAreWrittenAndRemoved() throws {
        let path = try LabPKI.writeTemporaryFile("hello", name: "greeting.txt")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "hello")
        LabPKI.removeTemporaryFile(path)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    private func certificateText(_ certificate: Certificate) throws -> String {
        let path = try LabPKI.writeTemporaryFile(certificate.pemEncoded)
        defer { LabPKI.removeTemporaryFile(path) }
        return try shell("openssl x509 -noout -text -in '\(path)'")
    }
}
