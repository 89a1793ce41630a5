import Foundation
import ServerTrust
import Testing

/// `servertrust keys`: the printed formats, the files written, and that what the commands make
/// signs responses a client configured from their output accepts.
@Suite struct KeysCommandTests {
    /// A fresh folder for key files, removed when the test ends.
    final class KeyFolder {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ServerTrustCLITests-keys-\(UUID().uuidString)")

        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }

        deinit { try? FileManager.default.removeItem(at: url) }

        func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    }

    /// `keys create-root --out <folder>/root.pem`, checked; the root key read back from the file.
    static func createRoot(in folder: KeyFolder) throws -> SigningKey {
        let result = CommandRunner.run(["keys", "create-root", "--out", folder.path("root.pem")])
        try #require(result.status == 0, "\(result)")
        return try SigningKey(pem: String(contentsOfFile: folder.path("root.pem"), encoding: .utf8))
    }

    /// An RFC 3339 date-time `days` from now, whole seconds.
    static func rfc3339(daysFromNow days: Int) -> (text: String, date: Date) {
        let date = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + Double(days) * 86_400).rounded(.down))
        return (ISO8601DateFormatter().string(from: date), date)
    }

    static func permissions(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    // MARK: create-root

    @Test func createRootPrintsThePublicKeyAndWritesTheKeyOwnerOnly() throws {
        let folder = try KeyFolder()
        let out = folder.path("root.pem")
        let result = CommandRunner.run(["keys", "create-root", "--out", out])
        #expect(result.status == 0, "\(result)")
        let root = try SigningKey(pem: String(contentsOfFile: out, encoding: .utf8))
        #expect(result.standardOutput == root.verificationKey.base64 + "\n")
        expectGolden(result.standardError, """
            Wrote the root private key to <out> (mode 0600). Keep it offline; clients need only the public key above.

            """, literals: [out: "<out>"])
        #expect(try Self.permissions(out) == 0o600)
        #expect(try VerificationKey(base64: result.standardOutput.trimmingCharacters(in: .newlines)) == root.verificationKey)
    }

    @Test func createRootNeverOverwritesAKey() throws {
        let folder = try KeyFolder()
        let out = folder.path("root.pem")
        let original = try Self.createRoot(in: folder)
        let again = CommandRunner.run(["keys", "create-root", "--out", out])
        #expect(again.status == 2, "\(again)")
        #expect(again.standardOutput.isEmpty)
        expectGolden(again.standardError, """
            error: cannot create <out>: it already exists; refusing to overwrite a key.

            """, literals: [out: "<out>"])
        #expect(try SigningKey(pem: String(contentsOfFile: out, encoding: .utf8)).verificationKey == original.verificationKey)
    }

    @Test func createRootJSONNamesTheFileKeyAndKeyID() throws {
        let folder = try KeyFolder()
        let out = folder.path("root.pem")
        let result = CommandRunner.run(["keys", "create-root", "--out", out, "--json"])
        #expect(result.status == 0, "\(result)")
        let root = try SigningKey(pem: String(contentsOfFile: out, encoding: .utf8)).verificationKey
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: String])
        #expect(object == ["file": out, "publicKey": root.base64, "keyID": root.keyIDHex])
    }

    // MARK: issue-intermediate

    @Test func issueIntermediatePrintsTheCertificateAndWritesASignerFile() throws {
        let folder = try KeyFolder()
        let root = try Self.createRoot(in: folder)
        let out = folder.path("intermediate.pem")
        let expiry = Self.rfc3339(daysFromNow: 30)
        let result = CommandRunner.run(["keys", "issue-intermediate", "--root", folder.path("root.pem"), "--expires", expiry.text, "--out", out])
        #expect(result.status == 0, "\(result)")
        expectGolden(result.standardError, """
            Wrote the intermediate key and its certificate to <out> (mode 0600); it expires <date>, root key ID <root-id>.

            """, literals: [out: "<out>", root.verificationKey.keyIDHex: "<root-id>"])
        #expect(result.standardError.contains("it expires \(expiry.text),"))
        #expect(try Self.permissions(out) == 0o600)

        // The file loads as a signer whose certificate is the one printed, certified by the root, expiring when asked.
        let file = try String(contentsOfFile: out, encoding: .utf8)
        #expect(file.contains("-----BEGIN PRIVATE KEY-----"))
        #expect(file.contains("-----BEGIN SERVERTRUST INTERMEDIATE KEY CERTIFICATE-----"))
        let signer = try ResponseSigner(pem: file)
        #expect(result.standardOutput == signer.certificate.base64 + "\n")
        #expect(signer.certificate.base64.count == 152)
        #expect(signer.certificate.isSigned(by: root.verificationKey))
        #expect(signer.certificate.rootKeyID == root.verificationKey.keyID)
        #expect(signer.certificate.expires == expiry.date)
    }

    @Test func issueIntermediateJSONDescribesTheCertificate() throws {
        let folder = try KeyFolder()
        let root = try Self.createRoot(in: folder)
        let out = folder.path("intermediate.pem")
        let expiry = Self.rfc3339(daysFromNow: 7)
        let result = CommandRunner.run(
            ["keys", "issue-intermediate", "--root", folder.path("root.pem"), "--expires", expiry.text, "--out", out, "--json"])
        #expect(result.status == 0, "\(result)")
        let signer = try ResponseSigner(pem: String(contentsOfFile: out, encoding: .utf8))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: String])
        #expect(object == [
            "file": out, "intermediateKey": signer.certificate.key.base64, "expires": expiry.text,
            "rootKeyID": root.verificationKey.keyIDHex, "certificate": signer.certificate.base64,
        ])
    }

    @Test func anIntermediateValidForOverNinetyDaysComesWithAWarning() throws {
        let folder = try KeyFolder()
        _ = try Self.createRoot(in: folder)
        let result = CommandRunner.run([
            "keys", "issue-intermediate", "--root", folder.path("root.pem"), "--expires", Self.rfc3339(daysFromNow: 120).text,
            "--out", folder.path("intermediate.pem"),
        ])
        #expect(result.status == 0, "\(result)")
        #expect(result.standardError.hasSuffix(
            "warning: the intermediate is valid for more than 90 days; short-lived intermediates limit what a stolen one can sign.\n"),
            "\(result)")
    }

    @Test func issueIntermediateRefusesAPastExpiryAnUnparsableOneAndAnIntermediateAsRoot() throws {
        let folder = try KeyFolder()
        _ = try Self.createRoot(in: folder)
        let rootArguments = ["keys", "issue-intermediate", "--root", folder.path("root.pem")]

        let past = CommandRunner.run(rootArguments + ["--expires", "2001-01-01T00:00:00Z", "--out", folder.path("past.pem")])
        #expect(past.status == 2, "\(past)")
        #expect(past.standardError == "error: --expires 2001-01-01T00:00:00Z is in the past.\n")
        let garbled = CommandRunner.run(rootArguments + ["--expires", "next week", "--out", folder.path("garbled.pem")])
        #expect(garbled.status == 2, "\(garbled)")
        #expect(garbled.standardError == "error: --expires \"next week\" is not an RFC 3339 date-time such as 2026-03-01T00:00:00Z.\n")
        #expect(!FileManager.default.fileExists(atPath: folder.path("past.pem")))
        #expect(!FileManager.default.fileExists(atPath: folder.path("garbled.pem")))

        let expiry = Self.rfc3339(daysFromNow: 7).text
        let intermediate = folder.path("intermediate.pem")
        try #require(CommandRunner.run(rootArguments + ["--expires", expiry, "--out", intermediate]).status == 0)
        let chained = CommandRunner.run(["keys", "issue-intermediate", "--root", intermediate, "--expires", expiry, "--out", folder.path("second.pem")])
        #expect(chained.status == 2, "\(chained)")
        expectGolden(chained.standardError, """
            error: <intermediate> is an intermediate key file; --root takes the root key (keys create-root).

            """, literals: [intermediate: "<intermediate>"])
        #expect(!FileManager.default.fileExists(atPath: folder.path("second.pem")))
    }

    // MARK: root-public

    @Test func rootPublicPrintsTheRawKeyInBase64() throws {
        let folder = try KeyFolder()
        let root = try Self.createRoot(in: folder)
        let result = CommandRunner.run(["keys", "root-public", "--root", folder.path("root.pem")])
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput == root.verificationKey.base64 + "\n")
        #expect(result.standardError.isEmpty)
    }

    @Test func rootPublicSwiftIsAConstantThatConfiguresTheRoot() throws {
        let folder = try KeyFolder()
        let root = try Self.createRoot(in: folder)
        let result = CommandRunner.run(["keys", "root-public", "--root", folder.path("root.pem"), "--swift"])
        #expect(result.status == 0, "\(result)")
        let key = root.verificationKey
        expectGolden(result.standardOutput, """
            /// ServerTrust signed-response root key: Ed25519, key ID <key-id>, header version 1.
            /// Use: SignedResponseRoot(base64: signedResponseRootKey)
            let signedResponseRootKey = "<key>"

            """, literals: [key.base64: "<key>", key.keyIDHex: "<key-id>"])
        let constant = try #require(Self.stringConstant(named: "signedResponseRootKey", in: result.standardOutput))
        #expect(try SignedResponseRoot(base64: constant) == SignedResponseRoot(key, version: 1))
    }

    @Test func rootPublicSwiftTakesANameAndAHeaderVersion() throws {
        let folder = try KeyFolder()
        let root = try Self.createRoot(in: folder)
        let result = CommandRunner.run(
            ["keys", "root-public", "--root", folder.path("root.pem"), "--swift", "--name", "licenceRootKey", "--header-version", "2"])
        #expect(result.status == 0, "\(result)")
        let key = root.verificationKey
        expectGolden(result.standardOutput, """
            /// ServerTrust signed-response root key: Ed25519, key ID <key-id>, header version 2.
            /// Use: SignedResponseRoot(base64: licenceRootKey, version: 2)
            let licenceRootKey = "<key>"

            """, literals: [key.base64: "<key>", key.keyIDHex: "<key-id>"])
        let constant = try #require(Self.stringConstant(named: "licenceRootKey", in: result.standardOutput))
        #expect(try SignedResponseRoot(base64: constant, version: 2).key == key)

        let badName = CommandRunner.run(["keys", "root-public", "--root", folder.path("root.pem"), "--swift", "--name", "2fast"])
        #expect(badName.status == 2, "\(badName)")
        #expect(badName.standardError.contains("--name \"2fast\" is not a Swift identifier."), "\(badName)")
        #expect(badName.standardOutput.isEmpty)
    }

    @Test func rootPublicJSONCarriesTheKeyInBothForms() throws {
        let folder = try KeyFolder()
        let root = try Self.createRoot(in: folder)
        let result = CommandRunner.run(["keys", "root-public", "--root", folder.path("root.pem"), "--json"])
        #expect(result.status == 0, "\(result)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        let key = root.verificationKey
        #expect(object["publicKey"] as? String == key.base64)
        #expect(object["keyID"] as? String == key.keyIDHex)
        #expect(object["version"] as? Int == 1)
        let spki = try #require(object["subjectPublicKeyInfo"] as? String)
        #expect(try VerificationKey(base64: spki) == key)
    }

    // MARK: The material, end to end

    /// What an operator does — create a root, issue an intermediate, print the root for the
    /// client — gives a signer whose responses a verifier built from the printed constant
    /// accepts, and whose altered responses it rejects with the reason.
    @Test func theMaterialTheCommandsMakeSignsResponsesTheClientAccepts() throws {
        let folder = try KeyFolder()
        _ = try Self.createRoot(in: folder)
        let intermediate = folder.path("intermediate.pem")
        let issued = CommandRunner.run([
            "keys", "issue-intermediate", "--root", folder.path("root.pem"), "--expires", Self.rfc3339(daysFromNow: 14).text, "--out", intermediate,
        ])
        try #require(issued.status == 0, "\(issued)")
        let printed = CommandRunner.run(["keys", "root-public", "--root", folder.path("root.pem"), "--swift"])
        let constant = try #require(Self.stringConstant(named: "signedResponseRootKey", in: printed.standardOutput))

        let signer = try ResponseSigner(pem: String(contentsOfFile: intermediate, encoding: .utf8))
        let verifier = try ResponseSignatureVerifier(roots: [try SignedResponseRoot(base64: constant)])
        let url = try #require(URL(string: "https://api.example.com/v1/licence?device=7"))
        let body = Array(#"{"licence":"free"}"#.utf8)

        let challenge = try SignatureChallenge(method: "GET", url: url)
        let signature = try signer.signatureHeader(answering: challenge, status: 200, body: body)
        let verified = try verifier.verify(status: 200, headers: [signature], body: body, answering: challenge)
        #expect(verified.intermediate == signer.certificate)
        #expect(verified.version == 1)

        let next = try SignatureChallenge(method: "GET", url: url)
        let nextSignature = try signer.signatureHeader(answering: next, status: 200, body: body)
        #expect(throws: ResponseSignatureError.bodyMismatch) {
            try verifier.verify(status: 200, headers: [nextSignature], body: Array(#"{"licence":"premium"}"#.utf8), answering: next)
        }
    }

    /// The value of `let name = "…"` in Swift source.
    static func stringConstant(named name: String, in source: String) -> String? {
        let prefix = "let \(name) = \""
        guard let line = source.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }), line.hasSuffix("\"") else { return nil }
        return String(line.dropFirst(prefix.count).dropLast())
    }
}
