import ArgumentParser
import Foundation
import ServerTrust
import ServerTrustCodeGeneration

/// `servertrust keys`: the server side of signed responses — the v1 root and intermediate
/// keys, and the RFC 9421 keys with the JWKS key sets clients verify against.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Create and rotate the keys that sign responses: v1 roots and intermediates, RFC 9421 keys and their JWKS (docs/SIGNED_RESPONSES.md).",
        discussion: """
            v1 (X-ServerTrust-Signature): the root key stays offline; it signs intermediate keys, \
            which sign responses and are rotated often. Clients compile in the root public key only.

            RFC 9421 (Signature, Signature-Input, Content-Digest): each server key has a key ID \
            (kid) that signatures name; clients verify against a JWKS key set. To rotate, publish \
            a set with the current and the next key (export-jwks), then sign with the next one \
            once clients have the set, then drop the old key from the set.

            Private key files are written with mode 0600, key sets with 0644; no file is ever \
            overwritten. Exit status: 0 success, 2 usage error or unreadable input.

            Examples:
              servertrust keys create-root --out root.pem
              servertrust keys issue-intermediate --root root.pem --expires 2026-03-01T00:00:00Z --out intermediate.pem
              servertrust keys root-public --root root.pem --swift
              servertrust keys create-jwk --kid 2026-11 --out 2026-11.pem --jwks jwks.json
              servertrust keys create-jwk --kid 2027-05 --alg ecdsa-p256-sha256 --out 2027-05.pem
              servertrust keys export-jwks 2026-11.pem:2026-11 2027-05.pem:2027-05 > jwks.json
            """,
        subcommands: [CreateRoot.self, IssueIntermediate.self, RootPublic.self, CreateJWK.self, ExportJWKS.self]
    )

    struct CreateRoot: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create-root",
            abstract: "Generate a root signing key and write it as PKCS#8 PEM (mode 0600).")

        @Option(name: .long, help: ArgumentHelp("Where to write the private key; must not exist.", valueName: "FILE"))
        var out: String

        @Flag(name: .long, help: "Print the public key as JSON.")
        var json = false

        func run() async throws {
            let key = try KeyFiles.generate()
            try KeyFiles.writePrivate(key.pemRepresentation, to: out)
            let root = key.verificationKey
            if json {
                print(JSONText.render(KeysOutput.Root(file: out, key: root)))
            } else {
                print(root.base64)
                StandardError.write("Wrote the root private key to \(out) (mode 0600). Keep it offline; clients need only the public key above.")
            }
        }
    }

    struct IssueIntermediate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "issue-intermediate",
            abstract: "Generate an intermediate signing key and its root-signed certificate (one file, mode 0600).",
            discussion: """
                The file holds the intermediate's PEM private key and a SERVERTRUST INTERMEDIATE KEY \
                CERTIFICATE block; load it with ResponseSigner(pem:). Issue the next one well before \
                this one expires: clients reject signatures from an expired intermediate.
                """)

        @Option(name: .long, help: ArgumentHelp("The root private key (PEM).", valueName: "FILE"))
        var root: String

        @Option(name: .long, help: ArgumentHelp("Expiry, RFC 3339 (2026-03-01T00:00:00Z).", valueName: "RFC3339"))
        var expires: String

        @Option(name: .long, help: ArgumentHelp("Where to write the intermediate key and certificate; must not exist.", valueName: "FILE"))
        var out: String

        @Flag(name: .long, help: "Print the certificate as JSON.")
        var json = false

        func run() async throws {
            guard let expiry = KeyFiles.parseRFC3339(expires) else {
                throw CommandFailure(status: CommandFailure.usage, message: "error: --expires \"\(expires)\" is not an RFC 3339 date-time such as 2026-03-01T00:00:00Z.")
            }
            guard expiry > Date() else {
                throw CommandFailure(status: CommandFailure.usage, message: "error: --expires \(expires) is in the past.")
            }
            let rootKey = try KeyFiles.readRoot(root)
            let intermediate = try KeyFiles.generate()
            let certificate: IntermediateKeyCertificate
            do {
                certificate = try IntermediateKeyCertificate.issue(for: intermediate.verificationKey, expires: expiry, signedBy: rootKey)
            } catch {
                throw CommandFailure(status: CommandFailure.usage, message: "error: \(error.reason)")
            }
            try KeyFiles.writePrivate(intermediate.pemRepresentation + certificate.pemRepresentation, to: out)
            if json {
                print(JSONText.render(KeysOutput.Intermediate(file: out, certificate: certificate, rootKey: rootKey.verificationKey)))
            } else {
                print(certificate.base64)
                StandardError.write(
                    "Wrote the intermediate key and its certificate to \(out) (mode 0600); it expires \(JSONText.date(certificate.expires)), "
                        + "root key ID \(rootKey.verificationKey.keyIDHex).")
            }
            if expiry.timeIntervalSinceNow > 90 * 86_400 {
                StandardError.warn("the intermediate is valid for more than 90 days; short-lived intermediates limit what a stolen one can sign.")
            }
        }
    }

    struct RootPublic: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "root-public",
            abstract: "Print the root public key: base64 of its 32 raw bytes, or a Swift constant.")

        @Option(name: .long, help: ArgumentHelp("The root private key (PEM).", valueName: "FILE"))
        var root: String

        @Flag(name: .long, help: "Print a Swift constant to compile into the client.")
        var swift = false

        @Option(name: .long, help: "The Swift constant's name.")
        var name = "signedResponseRootKey"

        @Option(name: .customLong("header-version"), help: "The header version the root signs under (1 unless a root was replaced after a compromise).")
        var version = 1

        @Flag(name: .long, help: "Print the public key as JSON.")
        var json = false

        func validate() throws {
            guard SignedResponseRootSnippet.isIdentifier(name) else {
                throw ValidationError("--name \"\(name)\" is not a Swift identifier.")
            }
            guard SignedResponseRootSnippet.versions.contains(version) else { throw ValidationError("--header-version is 1 to 999.") }
        }

        func run() async throws {
            let key = try KeyFiles.readRoot(root).verificationKey
            if json {
                print(JSONText.render(KeysOutput.RootPublic(key: key, version: version)))
            } else if swift {
                do {
                    print(try SignedResponseRootSnippet(key: key, constantName: name, version: version).swiftSource)
                } catch {
                    throw CommandFailure(status: CommandFailure.usage, message: "error: \(error)")
                }
            } else {
                print(key.base64)
            }
        }
    }
}

/// Reading and writing key files for `servertrust keys`.
enum KeyFiles {
    static func generate() throws -> SigningKey {
        do {
            return try SigningKey.generate()
        } catch {
            throw CommandFailure(status: CommandFailure.transfer, message: "error: \(error.reason)")
        }
    }

    /// A root private key; an intermediate key file is refused, so an intermediate can never be
    /// compiled into clients as a root or used to certify another intermediate.
    static func readRoot(_ path: String) throws -> SigningKey {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw CommandFailure(status: CommandFailure.usage, message: "error: cannot read \(path).")
        }
        guard !text.contains("SERVERTRUST INTERMEDIATE KEY CERTIFICATE") else {
            throw CommandFailure(
                status: CommandFailure.usage, message: "error: \(path) is an intermediate key file; --root takes the root key (keys create-root).")
        }
        do {
            return try SigningKey(pem: text)
        } catch {
            throw CommandFailure(status: CommandFailure.usage, message: "error: \(path): \(error.reason)")
        }
    }

    /// Writes `text` to a new file readable by its owner only; an existing file is never
    /// replaced, so a key cannot be lost to a typo.
    static func writePrivate(_ text: String, to path: String) throws {
        try writeNew(text, to: path, mode: 0o600, what: "a key")
    }

    /// Writes `text` to a new file with `mode` (whatever the umask); an existing file is never
    /// replaced — `what` names what the refusal protects.
    static func writeNew(_ text: String, to path: String, mode: mode_t, what: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else {
            let reason = errno == EEXIST ? "it already exists; refusing to overwrite \(what)" : String(cString: strerror(errno))
            throw CommandFailure(status: CommandFailure.usage, message: "error: cannot create \(path): \(reason).")
        }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard fchmod(fd, mode) == 0, written == bytes.count, fsync(fd) == 0 else {
            unlink(path)
            throw CommandFailure(status: CommandFailure.usage, message: "error: cannot write \(path): \(String(cString: strerror(errno))).")
        }
    }

    /// An RFC 3339 date-time, with or without fractional seconds.
    static func parseRFC3339(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }
}
