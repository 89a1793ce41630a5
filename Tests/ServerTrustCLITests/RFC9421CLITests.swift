import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// RFC 9421 keys from the command line: `keys create-jwk` and `keys export-jwks` make keys and
/// the JWKS key sets clients read.
@Suite struct RFC9421CLITests {
    static func permissions(_ path: String) throws -> Int { try KeysCommandTests.permissions(path) }

    static func text(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    static func keySet(_ path: String) throws -> SigningKeySet {
        try SigningKeySet(jwks: Array(try Data(contentsOf: URL(fileURLWithPath: path))), fileName: path)
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
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
        // The set names the RFC 9421 algorithm and holds no private member.
        #expect(try Self.text(jwks).contains(#""alg": "\#(alg)""#))
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
}
