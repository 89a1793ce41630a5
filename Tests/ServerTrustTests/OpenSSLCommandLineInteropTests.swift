import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// Our pins and fingerprints must be the ones operators compute with the `openssl` tool, or a
/// pin copied from documentation would never match.
@Suite struct OpenSSLCommandLineInteropTests {
    @Test(arguments: [TestKey.ecP256(), TestKey.ecP384(), TestKey.rsa(bits: 2048), TestKey.ed25519()])
    func spkiPinEqualsTheOneTheOpenSSLCommandLineComputes(key: TestKey) throws {
        let certificate = try TestPKI.makeRoot().issueLeaf(dnsNames: ["api.example.com"], key: key).certificate
        let path = try TestPKI.writeTemporaryFile(certificate.pemEncoded)
        defer { TestPKI.removeTemporaryFile(path) }
        let expected = try shell(
            "openssl x509 -pubkey -noout -in '\(path)' | openssl pkey -pubin -outform der"
                + " | openssl dgst -sha256 -binary | base64")
        #expect(!expected.isEmpty)
        #expect(certificate.spkiPin.description == "sha256/" + expected)
        #expect(certificate.spkiPin.base64 == expected)
    }

    @Test func sha256FingerprintEqualsTheOneTheOpenSSLCommandLinePrints() throws {
        let certificate = try TestPKI.makeRoot().certificate
        let path = try TestPKI.writeTemporaryFile(certificate.pemEncoded)
        defer { TestPKI.removeTemporaryFile(path) }
        let printed = try shell("openssl x509 -noout -fingerprint -sha256 -in '\(path)'")  // sha256 Fingerprint=AB:CD:…
        let hex = certificate.sha256Fingerprint.map { String(format: "%02X", $0) }.joined(separator: ":")
        #expect(printed.hasSuffix("=" + hex))
    }
}
