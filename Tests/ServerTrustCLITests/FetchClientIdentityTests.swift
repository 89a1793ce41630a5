import Foundation
import Testing
import ServerTrust
import ServerTrustTestSupport

/// `fetch --client-cert/--client-key/--client-key-passphrase-file/--client-pkcs12`: a good
/// identity is loaded and the fetch goes ahead (the fixture server does not ask for one; nginx
/// interop tests cover servers that do); every bad one exits 2 before any connection, naming
/// the problem.
@Suite struct FetchClientIdentityTests {
    let client: LabLeaf

    init() throws {
        client = try LabPKI.makeRoot(commonName: "CLI Client Root").issueLeaf(commonName: "cli-client", extendedKeyUsage: [.clientAuth])
    }

    func files(_ contents: [String: String]) throws -> [String: String] {
        try contents.mapValues { try LabPKI.writeTemporaryFile($0, name: "file") }
    }

    func remove(_ files: [String: String]) { files.values.forEach(LabPKI.removeTemporaryFile) }

    @Test func aValidCertificateAndKeyAreLoadedAndTheFetchSucceeds() throws {
        let fixture = try CLIFixture()
        let paths = try files(["cert": client.certificate.pemEncoded, "key": client.key.pemPrivateKey])
        defer { remove(paths) }
        let result = CommandRunner.run(["fetch", fixture.url(), "--client-cert", paths["cert"]!, "--client-key", paths["key"]!] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput == "hello from the CLI fixture\n")
    }

    @Test func anEncryptedKeyOpensWithThePassphraseFileAndIsRefusedWithoutIt() throws {
        let fixture = try CLIFixture()
        let paths = try files([
            "cert": client.certificate.pemEncoded, "key": client.key.encryptedPEMPrivateKey(passphrase: "s3cret"), "pass": "s3cret\n",
        ])
        defer { remove(paths) }
        let base = ["fetch", fixture.url(), "--client-cert", paths["cert"]!, "--client-key", paths["key"]!] + fixture.trusting
        let opened = CommandRunner.run(base + ["--client-key-passphrase-file", paths["pass"]!])
        #expect(opened.status == 0, "\(opened)")
        let refused = CommandRunner.run(base)
        #expect(refused.status == 2, "\(refused)")
        #expect(refused.standardError.hasPrefix("error: client identity: The private key in \(paths["key"]!) is encrypted"), "\(refused)")
        #expect(refused.standardOutput.isEmpty)
    }

    @Test func aKeyThatDoesNotMatchTheCertificateExitsTwoNamingBothKeys() throws {
        let fixture = try CLIFixture()
        let other = LabKey.ecP256()
        let paths = try files(["cert": client.certificate.pemEncoded, "key": other.pemPrivateKey])
        defer { remove(paths) }
        let result = CommandRunner.run(["fetch", fixture.url(), "--client-cert", paths["cert"]!, "--client-key", paths["key"]!] + fixture.trusting)
        #expect(result.status == 2, "\(result)")
        #expect(result.standardError.contains("error: client identity: The private key (public key \(other.pin)) is not the key of the client certificate \"CN=cli-client\" (\(client.certificate.spkiPin))"), "\(result)")
        #expect(!result.standardError.contains("PRIVATE KEY"))
    }

    @Test func aMissingKeyFileExitsTwoNamingIt() throws {
        let fixture = try CLIFixture()
        let paths = try files(["cert": client.certificate.pemEncoded])
        defer { remove(paths) }
        let result = CommandRunner.run(["fetch", fixture.url(), "--client-cert", paths["cert"]!, "--client-key", "/nonexistent/client.key"] + fixture.trusting)
        #expect(result.status == 2, "\(result)")
        #expect(result.standardError.hasPrefix("error: client identity: Cannot open /nonexistent/client.key"), "\(result)")
    }

    @Test func aKeyWithoutACertificateOrBothFormsAtOnceAreUsageErrors() throws {
        let fixture = try CLIFixture()
        let keyOnly = CommandRunner.run(["fetch", fixture.url(), "--client-key", "client.key"] + fixture.trusting)
        #expect(keyOnly.status == 2, "\(keyOnly)")
        #expect(keyOnly.standardError.hasPrefix("error: --client-key and --client-key-passphrase-file need --client-cert"), "\(keyOnly)")
        let both = CommandRunner.run(["fetch", fixture.url(), "--client-cert", "c.pem", "--client-pkcs12", "c.p12"] + fixture.trusting)
        #expect(both.status == 2, "\(both)")
        #expect(both.standardError.hasPrefix("error: --client-pkcs12 holds the certificate and the key"), "\(both)")
    }

    @Test func aPKCS12FileIsLoadedWithItsPassphraseFile() throws {
        let fixture = try CLIFixture()
        let p12 = try LabPKI.writeTemporaryFile(try client.pkcs12(passphrase: "p12"), name: "client.p12")
        let pass = try LabPKI.writeTemporaryFile("p12\n", name: "pass")
        defer { [p12, pass].forEach(LabPKI.removeTemporaryFile) }
        let result = CommandRunner.run(["fetch", fixture.url(), "--client-pkcs12", p12, "--client-key-passphrase-file", pass] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        let wrong = CommandRunner.run(["fetch", fixture.url(), "--client-pkcs12", p12] + fixture.trusting)
        #expect(wrong.status == 2, "\(wrong)")
        #expect(wrong.standardError.hasPrefix("error: client identity: \(p12) is protected by a passphrase"), "\(wrong)")
    }
}

extension FetchClientIdentityTests {
    @Test func anIdentityOpenSSLWouldRefuseInTheHandshakeExitsTwoWithOpenSSLsReason() throws {
        let fixture = try CLIFixture()
        let weak = try LabPKI.makeRoot(commonName: "Weak Root").issueLeaf(commonName: "weak-client", key: .rsa(bits: 1024), extendedKeyUsage: [.clientAuth])
        let paths = try files(["cert": weak.certificate.pemEncoded, "key": weak.key.pemPrivateKey])
        defer { remove(paths) }
        let result = CommandRunner.run(["fetch", fixture.url(), "--client-cert", paths["cert"]!, "--client-key", paths["key"]!] + fixture.trusting)
        #expect(result.status == 2, "\(result)")
        #expect(result.standardError.hasPrefix("error: OpenSSL refuses the client identity ClientIdentity(CN=weak-client, \(weak.certificate.spkiPin)) for \"cli.servertrust.test\""), "\(result)")
        #expect(result.standardError.contains("OpenSSL: error:0A00018F:SSL routines::ee key too small"), "\(result)")
    }
}
