import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// RFC 9421 from the command line: `keys create-jwk` and `keys export-jwks` make keys and the
/// JWKS key sets clients read, and `fetch --signature-keys` checks a server that signs with
/// `MessageSignatureSigner` — verified, tampered (enforced and informational), a migration
/// beside v1, and key-set files it cannot use.
@Suite struct RFC9421CLITests {
    static let genuineBody = #"{"licence":"free","seats":1}"# + "\n"
    static let tamperedBody = #"{"licence":"premium","seats":1}"# + "\n"
    /// What the verifier says about ``tamperedBody`` under the Content-Digest of ``genuineBody``.
    static let bodyMismatchReason =
        "The body (\(tamperedBody.utf8.count) bytes as received) does not match its signed Content-Digest (sha-256): it was altered on the way."

    static func permissions(_ path: String) throws -> Int { try KeysCommandTests.permissions(path) }

    static func text(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    static func keySet(_ path: String) throws -> SigningKeySet {
        try SigningKeySet(jwks: Array(try Data(contentsOf: URL(fileURLWithPath: path))), fileName: path)
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// A key set file holding `keys`, in `folder`.
    static func writeKeySet(_ keys: [(keyID: String, key: SignaturePublicKey)], in folder: KeysCommandTests.KeyFolder) throws -> String {
        let path = folder.path("jwks-\(UUID().uuidString).json")
        try Data(SigningKeySet.jwksDocument(keys).utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// `body` with `headers`, signed by `signer` (ServerTrustTestSupport's `messageSignedReply`);
    /// `sent`, when given, replaces the body after signing, as an intercepting proxy would.
    static func signedResponse(
        to request: LocalHTTPRequest, by signer: MessageSignatureSigner, headers: [(name: String, value: String)], body: [UInt8],
        sending sent: [UInt8]? = nil
    ) -> LocalHTTPResponse {
        messageSignedReply(to: request, signer: signer, bytes: sent ?? body, signedBytes: body, headers: headers)
    }

    /// The fixture's server answering every request with ``genuineBody`` signed by `signer`;
    /// with `tamper`, ``tamperedBody`` is sent under that signature.
    static func serveSigned(_ fixture: CLIFixture, by signer: MessageSignatureSigner, tamper: Bool = false) {
        fixture.server.setHandler { request in
            Self.signedResponse(
                to: request, by: signer, headers: [("Content-Type", "application/json")], body: Array(Self.genuineBody.utf8),
                sending: tamper ? Array(Self.tamperedBody.utf8) : nil)
        }
    }

    /// A fixture whose server signs with a fresh key `kid`, and a key set file holding it.
    final class SignedScene {
        let folder: KeysCommandTests.KeyFolder
        let fixture: CLIFixture
        let jwks: String

        init(_ kind: SignaturePublicKey.Kind = .ed25519, kid: String = "2026-11", tamper: Bool = false) throws {
            folder = try KeysCommandTests.KeyFolder()
            fixture = try CLIFixture()
            let key = try SignaturePrivateKey.generate(kind)
            RFC9421CLITests.serveSigned(fixture, by: try MessageSignatureSigner(key: key, keyID: kid), tamper: tamper)
            jwks = try RFC9421CLITests.writeKeySet([(kid, key.publicKey)], in: folder)
        }

        func fetch(_ path: String = "/v1/licence", _ options: [String] = []) -> CommandResult {
            CommandRunner.run(["fetch", fixture.url(path), "--signature-keys", jwks] + fixture.trusting + options)
        }
    }

    // MARK: keys create-jwk

    @Test(arguments: [("ed25519", SignaturePublicKey.Kind.ed25519), ("ecdsa-p256-sha256", .ecdsaP256), ("rsa-pss-sha512", .rsa)])
    func createJWKWritesAnOwnerOnlyKeyAndAKeySetHoldingItsPublicHalf(_ alg: String, _ kind: SignaturePublicKey.Kind) throws {
        let folder = try KeysCommandTests.KeyFolder()
        let out = folder.path("key.pem")
        let jwks = folder.path("jwks.json")
        let result = CommandRunner.run(["keys", "create-jwk", "--kid", "2026-11", "--alg", alg, "--out", out, "--jwks", jwks])
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput.isEmpty, "the key set went to --jwks")
        expectGolden(result.standardError, """
            Wrote the \(alg) private key "2026-11" to <out> (mode 0600) and its public key set to <jwks> (mode 0644). Servers sign with the private key; clients verify against the key set.

            """, literals: [out: "<out>", jwks: "<jwks>"])
        #expect(try Self.permissions(out) == 0o600)
        #expect(try Self.permissions(jwks) == 0o644)

        let pem = try Self.text(out)
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"), "PKCS#8")
        let key = try SignaturePrivateKey(pem: pem)
        #expect(key.kind == kind)
        let set = try Self.keySet(jwks)
        #expect(set.keyIDs == ["2026-11"])
        #expect(set.keys["2026-11"]?.pemRepresentation == key.publicKey.pemRepresentation)
        // The set names the key's JOSE algorithm (RFC 9421 section 3.3.7's mapping) and holds no
        // private member.
        let jose = ["ed25519": "EdDSA", "ecdsa-p256-sha256": "ES256", "rsa-pss-sha512": "PS512"][alg]!
        #expect(try Self.text(jwks).contains(#""alg": "\#(jose)""#))
        #expect(!(try Self.text(jwks)).contains(#""d":"#))
    }

    @Test func createJWKPrintsTheKeySetWithoutJWKSAndDefaultsToEd25519() throws {
        let folder = try KeysCommandTests.KeyFolder()
        let out = folder.path("key.pem")
        let result = CommandRunner.run(["keys", "create-jwk", "--kid", "edge-1", "--out", out])
        #expect(result.status == 0, "\(result)")
        let key = try SignaturePrivateKey(pem: Self.text(out))
        #expect(key.kind == .ed25519)
        #expect(result.standardOutput == SigningKeySet.jwksDocument([("edge-1", key.publicKey)]))
        let set = try SigningKeySet(jwks: Array(result.standardOutput.utf8))
        #expect(set.keys["edge-1"]?.pemRepresentation == key.publicKey.pemRepresentation)
        expectGolden(result.standardError, """
            Wrote the ed25519 private key "edge-1" to <out> (mode 0600). Servers sign with the private key; clients verify against the key set.

            """, literals: [out: "<out>"])
    }

    @Test func createJWKJSONNamesTheFilesKeyIDAlgorithmAndKeySet() throws {
        let folder = try KeysCommandTests.KeyFolder()
        let out = folder.path("key.pem")
        let result = CommandRunner.run(["keys", "create-jwk", "--kid", "p256-1", "--alg", "ecdsa-p256-sha256", "--out", out, "--json"])
        #expect(result.status == 0, "\(result)")
        #expect(result.standardError.isEmpty, "\(result)")
        let key = try SignaturePrivateKey(pem: Self.text(out))
        let object = try Self.json(result.standardOutput)
        #expect(object["file"] as? String == out)
        #expect(object["jwksFile"] is NSNull)
        #expect(object["keyID"] as? String == "p256-1")
        #expect(object["algorithm"] as? String == "ecdsa-p256-sha256")
        let jwks = try #require(object["jwks"] as? [String: Any])
        let set = try SigningKeySet(jwks: Array(try JSONSerialization.data(withJSONObject: jwks)))
        #expect(set.keys["p256-1"]?.pemRepresentation == key.publicKey.pemRepresentation)
    }

    @Test func createJWKNeverOverwritesAKeyOrAKeySet() throws {
        let folder = try KeysCommandTests.KeyFolder()
        let out = folder.path("key.pem")
        let jwks = folder.path("jwks.json")
        try #require(CommandRunner.run(["keys", "create-jwk", "--kid", "a", "--out", out, "--jwks", jwks]).status == 0)
        let (originalKey, originalSet) = (try Self.text(out), try Self.text(jwks))

        let again = CommandRunner.run(["keys", "create-jwk", "--kid", "b", "--out", out])
        #expect(again.status == 2, "\(again)")
        #expect(again.standardOutput.isEmpty)
        expectGolden(again.standardError, """
            error: cannot create <out>: it already exists; refusing to overwrite a key.

            """, literals: [out: "<out>"])

        // A key set that exists is refused before any key is written.
        let fresh = folder.path("fresh.pem")
        let overSet = CommandRunner.run(["keys", "create-jwk", "--kid", "b", "--out", fresh, "--jwks", jwks])
        #expect(overSet.status == 2, "\(overSet)")
        expectGolden(overSet.standardError, """
            error: cannot create <jwks>: it already exists; refusing to overwrite a key set.

            """, literals: [jwks: "<jwks>"])
        #expect(!FileManager.default.fileExists(atPath: fresh))
        #expect(try Self.text(out) == originalKey)
        #expect(try Self.text(jwks) == originalSet)
    }

    @Test func createJWKRefusesAKeyIDThatIsEmptyOrNotPrintableASCII() throws {
        let folder = try KeysCommandTests.KeyFolder()
        for kid in ["", "clé-1", "tab\tbed"] {
            let out = folder.path("key-\(UUID().uuidString).pem")
            let result = CommandRunner.run(["keys", "create-jwk", "--kid", kid, "--out", out])
            #expect(result.status == 2, "\(result)")
            #expect(result.standardError.contains(kid.isEmpty ? "--kid is empty." : "--kid \(kid.debugDescription) is not printable ASCII."), "\(result)")
            #expect(!FileManager.default.fileExists(atPath: out))
        }
    }

    // MARK: keys export-jwks

    /// A rotation's key set: the current key given by its public PEM only, the next by its
    /// private key file; both public halves come out, under their key IDs, in order.
    @Test func exportJWKSPublishesTheCurrentAndTheNextKeyInOneSet() throws {
        let folder = try KeysCommandTests.KeyFolder()
        let current = try SignaturePrivateKey.generate(.ed25519)
        let next = try SignaturePrivateKey.generate(.ecdsaP256)
        let currentPublic = folder.path("current.pub.pem")
        let nextPrivate = folder.path("next.pem")
        try Data(current.publicKey.pemRepresentation.utf8).write(to: URL(fileURLWithPath: currentPublic))
        try Data(next.pemRepresentation.utf8).write(to: URL(fileURLWithPath: nextPrivate))

        let result = CommandRunner.run(["keys", "export-jwks", "\(currentPublic):2026-05", "\(nextPrivate):urn:example:2026-11"])
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput == SigningKeySet.jwksDocument([("2026-05", current.publicKey), ("urn:example:2026-11", next.publicKey)]))
        let set = try SigningKeySet(jwks: Array(result.standardOutput.utf8))
        #expect(set.keyIDs == ["2026-05", "urn:example:2026-11"])
        #expect(set.keys["2026-05"]?.pemRepresentation == current.publicKey.pemRepresentation)
        #expect(set.keys["urn:example:2026-11"]?.pemRepresentation == next.publicKey.pemRepresentation)
        #expect(!result.standardOutput.contains("PRIVATE") && !result.standardOutput.contains(#""d":"#))
        #expect(result.standardError == #"A key set of 2 keys: "2026-05" (ed25519), "urn:example:2026-11" (ecdsa-p256-sha256)."# + "\n")
    }

    @Test func exportJWKSRefusesADuplicateKeyID() throws {
        let folder = try KeysCommandTests.KeyFolder()
        let first = folder.path("first.pem")
        let second = folder.path("second.pem")
        try Data(try SignaturePrivateKey.generate(.ed25519).pemRepresentation.utf8).write(to: URL(fileURLWithPath: first))
        try Data(try SignaturePrivateKey.generate(.ed25519).pemRepresentation.utf8).write(to: URL(fileURLWithPath: second))
        let result = CommandRunner.run(["keys", "export-jwks", "\(first):k1", "\(second):k1"])
        #expect(result.status == 2, "\(result)")
        #expect(result.standardOutput.isEmpty)
        expectGolden(result.standardError, """
            error: key ID "k1" is given twice (<first> and <second>); each key in a set needs its own.

            """, literals: [first: "<first>", second: "<second>"])
    }

    @Test func exportJWKSRefusesWhatItCannotRead() throws {
        let folder = try KeysCommandTests.KeyFolder()
        let notAKey = folder.path("notes.txt")
        try Data("not a key\n".utf8).write(to: URL(fileURLWithPath: notAKey))
        let missing = folder.path("missing.pem")

        let noColon = CommandRunner.run(["keys", "export-jwks", notAKey])
        #expect(noColon.status == 2, "\(noColon)")
        #expect(noColon.standardError == "error: \(notAKey.debugDescription) is not FILE:KID.\n")
        let garbage = CommandRunner.run(["keys", "export-jwks", "\(notAKey):k1"])
        #expect(garbage.status == 2, "\(garbage)")
        #expect(garbage.standardError == "error: \(notAKey) holds no PEM private key or PUBLIC KEY block.\n")
        let absent = CommandRunner.run(["keys", "export-jwks", "\(missing):k1"])
        #expect(absent.status == 2, "\(absent)")
        #expect(absent.standardError == "error: cannot read \(missing).\n")
        for result in [noColon, garbage, absent] { #expect(result.standardOutput.isEmpty) }
    }

    // MARK: fetch --signature-keys

    @Test func aSignedResponsePrintsTheBodyAndReportsVerified() throws {
        let scene = try SignedScene()
        let result = scene.fetch("/v1/licence?device=7")
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput == Self.genuineBody)
        #expect(result.standardError == "signature: verified\n")
        // The client asked for an RFC 9421 signature with a nonce, and for no v1 one.
        let sent = try #require(scene.fixture.server.recentRequests.last)
        #expect(sent.header("Accept-Signature")?.contains(";nonce=") == true)
        #expect(sent.header(SignedResponseHeader.nonce) == nil)
    }

    @Test(arguments: [SignaturePublicKey.Kind.ecdsaP256, .rsa])
    func everyKeyTypeVerifies(_ kind: SignaturePublicKey.Kind) throws {
        let result = try SignedScene(kind).fetch()
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput == Self.genuineBody)
        #expect(result.standardError == "signature: verified\n")
    }

    @Test func aVerifiedResponseInJSONNamesTheScheme() throws {
        let result = try SignedScene().fetch("/v1/licence", ["--json"])
        #expect(result.status == 0, "\(result)")
        let object = try Self.json(result.standardOutput)
        #expect(object["body"] as? String == Self.genuineBody)
        #expect(object["verification"] as? [String: String] == ["result": "verified", "scheme": "rfc9421"])
    }

    @Test func aBodyTamperedAfterSigningIsRefusedWhenEnforcedWithoutPrintingIt() throws {
        let result = try SignedScene(tamper: true).fetch()
        #expect(result.status == 1, "\(result)")
        #expect(result.standardOutput.isEmpty, "the body of a response that failed verification is withheld")
        expectGolden(result.standardError, """
            error: The response (status 200) failed signature verification: \(Self.bodyMismatchReason) [https://cli.servertrust.test:<port>/v1/licence]
            hint: the body changed after the server signed it: something between you and the server rewrote it (a proxy whose CA this machine trusts), or the server compresses after signing
            hint: --mode informational prints the body and the result instead of failing; never act on a body that failed

            """)
    }

    @Test func aBodyTamperedAfterSigningInJSONIsAnErrorNamingSchemeAndCode() throws {
        let result = try SignedScene(tamper: true).fetch("/v1/licence", ["--json"])
        #expect(result.status == 1, "\(result)")
        let object = try Self.json(result.standardOutput)
        #expect(object["body"] == nil)
        let verification = try #require(object["verification"] as? [String: Any])
        #expect(verification["result"] as? String == "failed")
        #expect(verification["scheme"] as? String == "rfc9421")
        #expect(verification["code"] as? String == "bodyMismatch")
        #expect(verification["reason"] as? String == Self.bodyMismatchReason)
        #expect(verification["status"] as? Int == 200)
    }

    @Test func aBodyTamperedAfterSigningIsPrintedAndReportedFailedWhenInformational() throws {
        let result = try SignedScene(tamper: true).fetch("/v1/licence", ["--mode", "informational"])
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput == Self.tamperedBody)
        #expect(result.standardError == "signature: FAILED (bodyMismatch): \(Self.bodyMismatchReason)\n")
    }

    @Test func aSignatureByAKeyOutsideTheSetIsRefusedNamingTheKeyID() throws {
        let scene = try SignedScene(kid: "rogue")
        let other = try Self.writeKeySet([("2026-11", try SignaturePrivateKey.generate(.ed25519).publicKey)], in: scene.folder)
        let result = CommandRunner.run(["fetch", scene.fixture.url("/v1/licence"), "--signature-keys", other] + scene.fixture.trusting)
        #expect(result.status == 1, "\(result)")
        #expect(result.standardOutput.isEmpty)
        #expect(result.standardError.contains(#"names keyid "rogue", which is not in this host's key set"#), "\(result)")
        #expect(result.standardError.contains("hint: the signature names a key ID that is not in --signature-keys"), "\(result)")
    }

    /// The migration: a v1 root and an RFC 9421 key set together. The client asks for both;
    /// a server that signs only with RFC 9421 is accepted, and the JSON says the scheme was
    /// `either`.
    @Test func bothSchemesTogetherAcceptAnRFC9421SignedResponse() throws {
        let scene = try SignedScene()
        let root = try FetchSignatureCommandTests.Keys().root
        let result = CommandRunner.run(
            ["fetch", scene.fixture.url("/v1/licence"), "--signature-keys", scene.jwks, "--verify-signature", root.base64, "--json"]
                + scene.fixture.trusting)
        #expect(result.status == 0, "\(result)")
        let object = try Self.json(result.standardOutput)
        #expect(object["body"] as? String == Self.genuineBody)
        #expect(object["verification"] as? [String: String] == ["result": "verified", "scheme": "either"])
        let sent = try #require(scene.fixture.server.recentRequests.last)
        #expect(sent.header("Accept-Signature") != nil)
        #expect(sent.header(SignedResponseHeader.nonce) != nil)
    }

    /// The operator's flow from the command line only: `keys create-jwk` writes the key the
    /// server signs with and the key set the client checks against.
    @Test func keysMadeWithCreateJWKVerifyOverFetch() throws {
        let folder = try KeysCommandTests.KeyFolder()
        let out = folder.path("server.pem")
        let jwks = folder.path("jwks.json")
        let created = CommandRunner.run(["keys", "create-jwk", "--kid", "edge-2026", "--alg", "ecdsa-p256-sha256", "--out", out, "--jwks", jwks])
        try #require(created.status == 0, "\(created)")
        let fixture = try CLIFixture()
        Self.serveSigned(fixture, by: try MessageSignatureSigner(key: SignaturePrivateKey(pem: Self.text(out)), keyID: "edge-2026"))
        let result = CommandRunner.run(["fetch", fixture.url("/v1/licence"), "--signature-keys", jwks] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput == Self.genuineBody)
        #expect(result.standardError == "signature: verified\n")
    }

    /// An RFC 9421 signature covers `Content-Encoding`: with `--signature-keys` alone,
    /// `--compressed` asks for a coding and the body is decoded once verified. Beside
    /// `--verify-signature` (a migration) v1 decides: nothing is asked for, and the CLI says so.
    @Test func compressedDecodesAfterVerifyingUnderRFC9421AloneButNotDuringAMigration() throws {
        let folder = try KeysCommandTests.KeyFolder()
        let fixture = try CLIFixture()
        let key = try SignaturePrivateKey.generate(.ed25519)
        let signer = try MessageSignatureSigner(key: key, keyID: "gz-1")
        let jwks = try Self.writeKeySet([("gz-1", key.publicKey)], in: folder)
        fixture.server.setHandler { request in
            let gzip = request.header("Accept-Encoding")?.contains("gzip") == true
            let text = Array(FetchCompressedTests.text.utf8)
            return Self.signedResponse(
                to: request, by: signer, headers: [("Content-Type", "text/plain")] + (gzip ? [("Content-Encoding", "gzip")] : []),
                body: gzip ? TestCompression.compress(text, as: .gzip) : text)
        }
        let alone = CommandRunner.run(["fetch", fixture.url("/text"), "--compressed", "--signature-keys", jwks] + fixture.trusting)
        #expect(alone.status == 0, "\(alone)")
        #expect(alone.standardOutput == FetchCompressedTests.text)
        #expect(alone.standardError == "signature: verified\n")
        #expect(fixture.server.recentRequests.last?.header("Accept-Encoding")?.contains("gzip") == true)

        let root = try FetchSignatureCommandTests.Keys().root
        let migrating = CommandRunner.run(
            ["fetch", fixture.url("/text"), "--compressed", "--signature-keys", jwks, "--verify-signature", root.base64] + fixture.trusting)
        #expect(migrating.status == 0, "\(migrating)")
        #expect(migrating.standardOutput == FetchCompressedTests.text)
        #expect(migrating.standardError == """
            warning: --compressed has no effect with --verify-signature: the signature does not cover Content-Encoding, so nothing is asked for or decoded.
            signature: verified

            """, "\(migrating)")
        #expect(fixture.server.recentRequests.last?.header("Accept-Encoding") == nil)
    }

    @Test func aKeySetFileThatIsMissingMalformedOrEmptyIsAUsageErrorNamingIt() throws {
        let folder = try KeysCommandTests.KeyFolder()
        let missing = folder.path("missing.json")
        let malformed = folder.path("malformed.json")
        try Data("{\"keys\": [\n  {\"kty\": \"OKP\", \"crv\": \"Ed25519\", \"x\": \"AAAA\"}\n]}\n".utf8).write(to: URL(fileURLWithPath: malformed))
        let empty = try Self.writeKeySet([], in: folder)
        let url = "https://cli.servertrust.test/"

        let absent = CommandRunner.run(["fetch", url, "--signature-keys", missing])
        #expect(absent.status == 2, "\(absent)")
        #expect(absent.standardError == "error: --signature-keys: cannot read \(missing).\n")
        let bad = CommandRunner.run(["fetch", url, "--signature-keys", malformed])
        #expect(bad.status == 2, "\(bad)")
        #expect(bad.standardError == "error: --signature-keys: \(malformed):2: [\"keys\"][0]: missing member \"kid\"\n", "\(bad)")
        let none = CommandRunner.run(["fetch", url, "--signature-keys", empty])
        #expect(none.status == 2, "\(none)")
        #expect(none.standardError == "error: --signature-keys: \(empty) holds no keys; no response could verify.\n")
        for result in [absent, bad, none] { #expect(result.standardOutput.isEmpty) }
    }
}
