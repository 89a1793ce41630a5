import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// Our pins and fingerprints must be the ones operators compute with the `openssl` tool, or a
/// pin copied from documentation would never match.
@Suite struct OpenSSLCommandLineInteropTests {
    @Test(arguments: [LabKey.ecP256(), LabKey.ecP384(), LabKey.rsa(bits: 2048), LabKey.ed25519()])
    func spkiPinEqualsTheOneTheOpenSSLCommandLineComputes(key: LabKey) throws {
        let certificate = try LabPKI.makeRoot().issueLeaf(dnsNames: ["api.example.com"], key: key).certificate
        let path = try LabPKI.writeTemporaryFile(certificate.pemEncoded)
        defer { LabPKI.removeTemporaryFile(path) }
        let expected = try shell(
            "openssl x509 -pubkey -noout -in '\(path)' | openssl pkey -pubin -outform der"
                + " | openssl dgst -sha256 -binary | base64")
        #expect(!expected.isEmpty)
        #expect(certificate.spkiPin.description == "sha256/" + expected)
        #expect(certificate.spkiPin.base64 == expected)
    }

    @Test func sha256FingerprintEqualsTheOneTheOpenSSLCommandLinePrints() throws {
        let certificate = try LabPKI.makeRoot().certificate
        let path = try LabPKI.writeTemporaryFile(certificate.pemEncoded)
        defer { LabPKI.removeTemporaryFile(path) }
        let printed = try shell("openssl x509 -noout -fingerprint -sha256 -in '\(path)'")  // sha256 Fingerprint=AB:CD:…
        let hex = certificate.sha256Fingerprint.map { String(format: "%02X", $0) }.joined(separator: ":")
        #expect(printed.hasSuffix("=" + hex))
    }
}
