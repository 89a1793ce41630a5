import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

@Suite struct PublicKeyTests {
    @Test func aCertificatesKeyIsTheKeyItWasIssuedFor() throws {
        let key = LabKey.ecP256()
        let certificate = try LabPKI.makeRoot().issueLeaf(dnsNames: ["a.example"], key: key).certificate
        #expect(certificate.publicKey == key.publicKey)
        #expect(certificate.publicKey.subjectPublicKeyInfoDER == certificate.subjectPublicKeyInfoDER)
        #expect(certificate.publicKey.pin == certificate.spkiPin)
    }

    @Test func differentKeysAreNotEqual() {
        #expect(LabKey.ecP256().publicKey != LabKey.ecP256().publicKey)
    }

    @Test func aKeyParsesFromItsDERAndFromPEMOrBase64() throws {
        let key = LabKey.ed25519().publicKey
        let der = key.subjectPublicKeyInfoDER
        let base64 = Data(der).base64EncodedString()
        let pem = "-----BEGIN PUBLIC KEY-----\n\(base64)\n-----END PUBLIC KEY-----\n"
        #expect(try PublicKey(subjectPublicKeyInfoDER: der) == key)
        #expect(try PublicKey(pemOrBase64: base64) == key)
        #expect(try PublicKey(pemOrBase64: pem) == key)
    }

    @Test func garbageIsNotAPublicKey() {
        #expect(throws: TrustError.malformedPublicKey) { try PublicKey(subjectPublicKeyInfoDER: [0x30, 0x03, 0x02, 0x01, 0x05]) }
        #expect(throws: TrustError.malformedPublicKey) { try PublicKey(subjectPublicKeyInfoDER: []) }
        #expect(throws: TrustError.malformedPublicKey) { try PublicKey(pemOrBase64: "not base64 ***") }
    }

    @Test func trailingBytesAfterTheKeyAreRefused() {
        let der = LabKey.ecP256().publicKey.subjectPublicKeyInfoDER + [0]
        let error = #expect(throws: TrustError.malformedPublicKey) { try PublicKey(subjectPublicKeyInfoDER: der) }
        #expect(error?.reason.contains("1 bytes of trailing data") == true)
    }

    @Test func keyTypeSizeAndSecurityStrengthAreReported() {
        let p256 = LabKey.ecP256().publicKey
        let rsa = LabKey.rsa(bits: 2048).publicKey
        #expect(p256.keyType == "EC P-256" && p256.keySize == 256 && p256.securityBits == 128)
        #expect(rsa.keyType == "RSA" && rsa.keySize == 2048 && rsa.securityBits == 112)
        #expect(LabKey.ecP384().publicKey.securityBits == 192)
        #expect(LabKey.ed25519().publicKey.keyType == "Ed25519")
    }

    @Test func theDescriptionNamesTypeSizeAndPin() {
        let key = LabKey.ecP256().publicKey
        #expect(key.description == "PublicKey(EC P-256 256, \(key.pin))")
    }
}
