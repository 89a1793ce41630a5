import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// Loading a client identity (mutual TLS): every bad input is refused when the configuration is
/// built, with a code naming the problem, and nothing it prints shows key material.
@Suite struct ClientIdentityTests {
    let intermediate: LabCA
    let leaf: LabLeaf

    init() throws {
        let root = try LabPKI.makeRoot(commonName: "Client Root")
        intermediate = try root.issueIntermediate(commonName: "Client Intermediate")
        leaf = try intermediate.issueLeaf(commonName: "client.servertrust.test", extendedKeyUsage: [.clientAuth])
    }

    /// The certificate file as a client sends it: the leaf, then the intermediate.
    private var certificatePEM: String { LabPKI.pemBundle([leaf.certificate, intermediate.certificate]) }

    private func withFiles<T>(certificate: String, key: String, _ body: (String, String) throws -> T) throws -> T {
        let certificateFile = try LabPKI.writeTemporaryFile(certificate, name: "client.pem")
        let keyFile = try LabPKI.writeTemporaryFile(key, name: "client.key")
        defer {
            LabPKI.removeTemporaryFile(certificateFile)
            LabPKI.removeTemporaryFile(keyFile)
        }
        return try body(certificateFile, keyFile)
    }

    @Test func certificateAndKeyFilesLoadWithTheIntermediatesInOrder() throws {
        let identity = try withFiles(certificate: certificatePEM, key: leaf.key.pemPrivateKey) {
            try ClientIdentity(certificateFile: $0, privateKeyFile: $1)
        }
        #expect(identity.certificate == leaf.certificate)
        #expect(identity.intermediates == [intermediate.certificate])
    }

    @Test func aKeyInTheCertificateFileIsFoundWhenNoKeyFileIsGiven() throws {
        let file = try LabPKI.writeTemporaryFile(certificatePEM + leaf.key.pemPrivateKey, name: "client-and-key.pem")
        defer { LabPKI.removeTemporaryFile(file) }
        let identity = try ClientIdentity(certificateFile: file)
        #expect(identity.certificate == leaf.certificate)
    }

    @Test func descriptionDebugDescriptionAndMirrorShowTheSubjectAndPinButNoKeyMaterial() throws {
        let keyPEM = leaf.key.pemPrivateKey
        let identity = try ClientIdentity(certificatePEM: certificatePEM, privateKeyPEM: keyPEM)
        #expect(identity.description == "ClientIdentity(CN=client.servertrust.test, \(leaf.certificate.spkiPin))")
        #expect(identity.debugDescription.contains("CN=Client Intermediate, \(intermediate.certificate.spkiPin)"))
        var dumped = ""
        dump(identity, to: &dumped)
        let keyBase64Lines = keyPEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }
        let derBase64 = Data(leaf.key.derPrivateKey).base64EncodedString()
        for text in [identity.description, identity.debugDescription, dumped, String(reflecting: identity), "\(identity)"] {
            #expect(!text.contains("PRIVATE KEY"), "\(text)")
            #expect(!text.contains(derBase64))
            for line in keyBase64Lines { #expect(!text.contains(line), "\(text)") }
        }
        #expect(dumped.contains("CN=client.servertrust.test"))
    }

    @Test func aKeyThatDoesNotMatchTheCertificateIsRefusedNamingBothKeys() throws {
        let other = LabKey.ecP256()
        let error = #expect(throws: TrustError.privateKeyMismatch) {
            try withFiles(certificate: certificatePEM, key: other.pemPrivateKey) { try ClientIdentity(certificateFile: $0, privateKeyFile: $1) }
        }
        #expect(error?.reason.contains(other.pin.description) == true, "\(String(describing: error))")
        #expect(error?.reason.contains(leaf.certificate.spkiPin.description) == true)
        #expect(error?.reason.contains("CN=client.servertrust.test") == true)
    }

    @Test func theIntermediatesKeyIsRefusedForTheLeaf() {
        #expect(throws: TrustError.privateKeyMismatch) {
            try ClientIdentity(certificatePEM: certificatePEM, privateKeyPEM: intermediate.key.pemPrivateKey)
        }
    }

    @Test(arguments: [false, true])
    func anEncryptedKeyWithoutAPassphraseIsRefusedAsNeedingOne(legacyFormat: Bool) {
        let encrypted = legacyFormat
            ? leaf.key.legacyEncryptedPEMPrivateKey(passphrase: "correct horse")
            : leaf.key.encryptedPEMPrivateKey(passphrase: "correct horse")
        #expect(encrypted.contains(legacyFormat ? "Proc-Type: 4,ENCRYPTED" : "BEGIN ENCRYPTED PRIVATE KEY"))
        let error = #expect(throws: TrustError.privateKeyPassphraseRequired) {
            try ClientIdentity(certificatePEM: certificatePEM, privateKeyPEM: encrypted)
        }
        #expect(error?.reason.contains("is encrypted") == true)
    }

    @Test(arguments: [false, true])
    func anEncryptedKeyOpensWithItsPassphrase(legacyFormat: Bool) throws {
        let encrypted = legacyFormat
            ? leaf.key.legacyEncryptedPEMPrivateKey(passphrase: "correct horse")
            : leaf.key.encryptedPEMPrivateKey(passphrase: "correct horse")
        let identity = try withFiles(certificate: certificatePEM, key: encrypted) {
            try ClientIdentity(certificateFile: $0, privateKeyFile: $1, passphrase: "correct horse")
        }
        #expect(identity.certificate == leaf.certificate)
    }

    @Test(arguments: [false, true])
    func aWrongPassphraseIsRefusedAsIncorrect(legacyFormat: Bool) {
        let encrypted = legacyFormat
            ? leaf.key.legacyEncryptedPEMPrivateKey(passphrase: "correct horse")
            : leaf.key.encryptedPEMPrivateKey(passphrase: "correct horse")
        #expect(throws: TrustError.privateKeyPassphraseIncorrect) {
            try ClientIdentity(certificatePEM: certificatePEM, privateKeyPEM: encrypted, passphrase: "battery staple")
        }
    }

    @Test func aMissingCertificateOrKeyFileIsUnreadableInputNamingThePath() throws {
        let missing = "/nonexistent/servertrust/client.pem"
        let certificateError = #expect(throws: TrustError.unreadableInput) {
            try ClientIdentity(certificateFile: missing, privateKeyFile: missing)
        }
        #expect(certificateError?.reason.contains(missing) == true)
        let certificateFile = try LabPKI.writeTemporaryFile(certificatePEM, name: "client.pem")
        defer { LabPKI.removeTemporaryFile(certificateFile) }
        let keyError = #expect(throws: TrustError.unreadableInput) {
            try ClientIdentity(certificateFile: certificateFile, privateKeyFile: "/nonexistent/servertrust/client.key")
        }
        #expect(keyError?.reason.contains("/nonexistent/servertrust/client.key") == true)
    }

    @Test func aKeyFileWithoutAPEMPrivateKeyIsMalformed() throws {
        let error = #expect(throws: TrustError.malformedPrivateKey) {
            try withFiles(certificate: certificatePEM, key: "this is not a key\n") { try ClientIdentity(certificateFile: $0, privateKeyFile: $1) }
        }
        #expect(error?.reason.contains("holds no PEM private key") == true)
    }

    @Test func garbageInsideAPrivateKeyBlockIsMalformedWithOpenSSLsReason() {
        let error = #expect(throws: TrustError.malformedPrivateKey) {
            try ClientIdentity(certificatePEM: certificatePEM, privateKeyPEM: "-----BEGIN PRIVATE KEY-----\nAAAAAAAA\n-----END PRIVATE KEY-----\n")
        }
        #expect(error?.evidence.openSSLErrors.isEmpty == false)
    }

    @Test func twoPrivateKeysAreRefusedAsAmbiguous() {
        let error = #expect(throws: TrustError.malformedPrivateKey) {
            try ClientIdentity(certificatePEM: certificatePEM, privateKeyPEM: leaf.key.pemPrivateKey + LabKey.ecP256().pemPrivateKey)
        }
        #expect(error?.reason.contains("2 private keys") == true)
    }

    @Test func aCertificateFileWithoutACertificateIsMalformed() {
        #expect(throws: TrustError.malformedCertificate) {
            try ClientIdentity(certificatePEM: leaf.key.pemPrivateKey, privateKeyPEM: leaf.key.pemPrivateKey)
        }
    }

    @Test func aPKCS12FileLoadsWithItsPassphraseAndCarriesTheIntermediates() throws {
        let file = try LabPKI.writeTemporaryFile(try leaf.pkcs12(passphrase: "p12 secret"), name: "client.p12")
        defer { LabPKI.removeTemporaryFile(file) }
        let identity = try ClientIdentity(pkcs12File: file, passphrase: "p12 secret")
        #expect(identity.certificate == leaf.certificate)
        #expect(identity.intermediates == [intermediate.certificate])
    }

    @Test func aPKCS12FileWithoutOrWithTheWrongPassphraseIsRefusedSayingWhich() throws {
        let p12 = try leaf.pkcs12(passphrase: "p12 secret")
        #expect(throws: TrustError.privateKeyPassphraseRequired) { try ClientIdentity(pkcs12DER: p12) }
        #expect(throws: TrustError.privateKeyPassphraseIncorrect) { try ClientIdentity(pkcs12DER: p12, passphrase: "guess") }
    }

    @Test func anUnprotectedPKCS12FileLoadsWithoutAPassphrase() throws {
        let identity = try ClientIdentity(pkcs12DER: try leaf.pkcs12(passphrase: nil))
        #expect(identity.certificate == leaf.certificate)
    }

    @Test func bytesThatAreNotPKCS12AreMalformed() {
        let error = #expect(throws: TrustError.malformedPrivateKey) { try ClientIdentity(pkcs12DER: Array(certificatePEM.utf8)) }
        #expect(error?.reason.contains("not a PKCS#12") == true)
    }
}
