import ArgumentParser
import Foundation
import ServerTrust

extension KeysCommand {
    /// `keys create-jwk`: a new RFC 9421 signing key and the key set that publishes it.
    struct CreateJWK: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create-jwk",
            abstract: "Generate an RFC 9421 signing key (PKCS#8 PEM, mode 0600) and print its public key set (JWKS).",
            discussion: """
                The server signs with the private key (MessageSignatureSigner(key:keyID:)); clients \
                verify against the key set (SigningKeySet(jwks:), fetch --signature-keys). The key \
                ID is what signatures name as keyid: printable ASCII, unique within a key set. The \
                key set goes to standard output, or with --jwks to a new file (mode 0644). Neither \
                file is ever overwritten.
                """)

        /// The RFC 9421 algorithms a generated key signs with, named as in its `alg` parameter.
        enum Algorithm: String, ExpressibleByArgument, CaseIterable {
            case ed25519
            case ecdsaP256SHA256 = "ecdsa-p256-sha256"
            case rsaPSSSHA512 = "rsa-pss-sha512"

            var kind: SignaturePublicKey.Kind {
                switch self {
                case .ed25519: .ed25519
                case .ecdsaP256SHA256: .ecdsaP256
                case .rsaPSSSHA512: .rsa
                }
            }
        }

        @Option(name: .long, help: ArgumentHelp("The key ID signatures name (keyid, the JWK kid): printable ASCII.", valueName: "KID"))
        var kid: String

        @Option(name: .long, help: ArgumentHelp("ed25519 (default), ecdsa-p256-sha256 (P-256) or rsa-pss-sha512 (3,072-bit RSA).", valueName: "ALG"))
        var alg: Algorithm = .ed25519

        @Option(name: .long, help: ArgumentHelp("Where to write the private key; must not exist.", valueName: "FILE"))
        var out: String

        @Option(name: .long, help: ArgumentHelp("Write the public key set here (mode 0644) instead of printing it; must not exist.", valueName: "FILE"))
        var jwks: String?

        @Flag(name: .long, help: "Print the file names, key ID, algorithm and key set as JSON.")
        var json = false

        func validate() throws {
            if let problem = KeyFiles.keyIDProblem(kid) { throw ValidationError("--kid \(problem)") }
            guard jwks != out else { throw ValidationError("--jwks and --out name the same file.") }
        }

        func run() async throws {
            // Checked before the key is written, so a refused --jwks leaves no key behind.
            if let jwks, FileManager.default.fileExists(atPath: jwks) {
                throw CommandFailure(
                    status: CommandFailure.usage, message: "error: cannot create \(jwks): it already exists; refusing to overwrite a key set.")
            }
            let key: SignaturePrivateKey
            do {
                key = try SignaturePrivateKey.generate(alg.kind)
            } catch {
                throw CommandFailure(status: CommandFailure.transfer, message: "error: \(error.reason)")
            }
            let entries = [(keyID: kid, key: key.publicKey)]
            let document = try KeyFiles.jwksDocument(entries)
            try KeyFiles.writePrivate(key.pemRepresentation, to: out)
            if let jwks {
                do {
                    try KeyFiles.writeNew(document, to: jwks, mode: 0o644, what: "a key set")
                } catch {
                    // The key was never published: remove it rather than leave a key no set names.
                    unlink(out)
                    throw error
                }
            }
            if json {
                print(JSONText.render(KeysOutput.JWK(file: out, jwksFile: jwks, keyID: kid, algorithm: alg.rawValue, keys: entries)))
                return
            }
            if jwks == nil { print(document, terminator: "") }
            StandardError.write(
                "Wrote the \(alg.rawValue) private key \(kid.debugDescription) to \(out) (mode 0600)"
                    + (jwks.map { " and its public key set to \($0) (mode 0644)" } ?? "")
                    + ". Servers sign with the private key; clients verify against the key set.")
        }
    }

    /// `keys export-jwks`: one key set of several keys' public halves, e.g. the current and the
    /// next key during a rotation.
    struct ExportJWKS: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export-jwks",
            abstract: "Print one public key set (JWKS) of PEM keys, each under its key ID: the current and the next key side by side for a rotation.",
            discussion: """
                Each FILE:KID names a PEM key file — a private key (create-jwk's, or openssl \
                genpkey's PKCS#8) or a PUBLIC KEY — and the key ID to publish it under; the file \
                name ends at the first colon. Only public halves are printed. Two keys with one \
                key ID are a usage error. The set is read back as clients read it before it is \
                printed.

                Example:
                  servertrust keys export-jwks 2026-11.pem:2026-11 2027-05.pem:2027-05 > jwks.json
                """)

        @Argument(help: ArgumentHelp("A PEM key file and the key ID to publish its public key under.", valueName: "FILE:KID"))
        var keys: [String]

        func validate() throws {
            guard !keys.isEmpty else { throw ValidationError("Name at least one FILE:KID.") }
        }

        func run() async throws {
            var entries: [(keyID: String, key: SignaturePublicKey)] = []
            var files: [String: String] = [:]
            for argument in keys {
                guard let colon = argument.firstIndex(of: ":"), colon != argument.startIndex else {
                    throw CommandFailure(status: CommandFailure.usage, message: "error: \(argument.debugDescription) is not FILE:KID.")
                }
                let path = String(argument[..<colon])
                let kid = String(argument[argument.index(after: colon)...])
                if let problem = KeyFiles.keyIDProblem(kid) {
                    throw CommandFailure(status: CommandFailure.usage, message: "error: \(argument): the key ID \(problem)")
                }
                if let first = files[kid] {
                    throw CommandFailure(
                        status: CommandFailure.usage,
                        message: "error: key ID \(kid.debugDescription) is given twice (\(first) and \(path)); each key in a set needs its own.")
                }
                let key = try KeyFiles.readSignatureKey(path)
                if let twin = entries.first(where: { $0.key.pemRepresentation == key.pemRepresentation }) {
                    StandardError.warn(
                        "\(path) holds the same public key as \(files[twin.keyID] ?? "another file") "
                            + "(key IDs \(twin.keyID.debugDescription) and \(kid.debugDescription)).")
                }
                files[kid] = path
                entries.append((kid, key))
            }
            print(try KeyFiles.jwksDocument(entries), terminator: "")
            let described = entries.map { "\($0.keyID.debugDescription) (\(MessageSignaturePolicy.algorithmName(for: $0.key.kind)))" }
            StandardError.write("A key set of \(entries.count) key\(entries.count == 1 ? "" : "s"): \(described.joined(separator: ", ")).")
        }
    }
}

extension KeyFiles {
    /// Why `kid` cannot be a key ID, or nil: it must be non-empty printable ASCII, which every
    /// JWKS reader takes and a `keyid` structured-field string can carry.
    static func keyIDProblem(_ kid: String) -> String? {
        guard !kid.isEmpty else { return "is empty." }
        guard kid.unicodeScalars.allSatisfy({ (0x20...0x7E).contains($0.value) }) else {
            return "\(kid.debugDescription) is not printable ASCII."
        }
        return nil
    }

    /// The public key in a PEM file: a private key's public half, or a `PUBLIC KEY` block. A v1
    /// intermediate key file is refused: its key belongs to the v1 scheme.
    static func readSignatureKey(_ path: String) throws -> SignaturePublicKey {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw CommandFailure(status: CommandFailure.usage, message: "error: cannot read \(path).")
        }
        guard !text.contains("SERVERTRUST INTERMEDIATE KEY CERTIFICATE") else {
            throw CommandFailure(
                status: CommandFailure.usage, message: "error: \(path) is a v1 intermediate key file; RFC 9421 keys come from keys create-jwk.")
        }
        let isPrivate = text.contains("PRIVATE KEY-----")
        guard isPrivate || text.contains("PUBLIC KEY-----") else {
            throw CommandFailure(status: CommandFailure.usage, message: "error: \(path) holds no PEM private key or PUBLIC KEY block.")
        }
        do {
            return isPrivate ? try SignaturePrivateKey(pem: text).publicKey : try SignaturePublicKey(pem: text)
        } catch {
            throw CommandFailure(status: CommandFailure.usage, message: "error: \(path): \(error.reason)")
        }
    }

    /// The JWKS document of `entries`, read back as a client reads it and compared key by key:
    /// a set this tool prints is one clients accept.
    static func jwksDocument(_ entries: [(keyID: String, key: SignaturePublicKey)]) throws -> String {
        let document = SigningKeySet.jwksDocument(entries)
        let readBack: SigningKeySet
        do {
            readBack = try SigningKeySet(jwks: Array(document.utf8))
        } catch {
            throw CommandFailure(status: CommandFailure.usage, message: "error: the key set cannot be read back: \(error)")
        }
        for entry in entries where readBack.keys[entry.keyID]?.pemRepresentation != entry.key.pemRepresentation {
            throw CommandFailure(
                status: CommandFailure.usage, message: "error: the key set read back holds another key for \(entry.keyID.debugDescription).")
        }
        guard readBack.keys.count == entries.count else {
            throw CommandFailure(
                status: CommandFailure.usage, message: "error: the key set read back holds \(readBack.keys.count) keys, not \(entries.count).")
        }
        return document
    }
}
