import ArgumentParser
import Foundation
import ServerTrust

/// `--ct-log-list`, `--ct-log-list-key` and `--ct-log-list-signature`, shared by `verify`,
/// `fetch` and `inspect`: a Certificate Transparency log list (v3 JSON), and the key its
/// detached signature must verify under.
struct CTLogListOptions: ParsableArguments {
    @Option(name: .customLong("ct-log-list"), help: ArgumentHelp("A Certificate Transparency log list (v3 JSON): check the server's SCTs against its logs. Reported; enforced with --require-ct where the command has it.", valueName: "FILE"))
    var ctLogList: String?

    @Option(name: .customLong("ct-log-list-key"), help: ArgumentHelp("A PEM public key the log list's detached signature must verify under (RSA PKCS #1 v1.5, ECDSA P-256 or Ed25519; signature in FILE.sig, or --ct-log-list-signature).", valueName: "PEM"))
    var ctLogListKey: String?

    @Option(name: .customLong("ct-log-list-signature"), help: ArgumentHelp("The log list's detached signature (default: the list's path with .sig for .json).", valueName: "FILE"))
    var ctLogListSignature: String?

    /// Whether any of the three was given.
    var isEmpty: Bool { ctLogList == nil && ctLogListKey == nil && ctLogListSignature == nil }

    /// The usage problem with these flags (and `--require-ct`, when the command has it), or nil.
    func problem(requireCT: Bool = false) -> String? {
        if ctLogList == nil, requireCT || ctLogListKey != nil || ctLogListSignature != nil {
            return "--require-ct, --ct-log-list-key and --ct-log-list-signature need --ct-log-list <FILE>."
        }
        if ctLogListSignature != nil, ctLogListKey == nil { return "--ct-log-list-signature needs --ct-log-list-key <PEM>." }
        return nil
    }

    /// The list, its signature checked when a key is given; nil without `--ct-log-list`.
    ///
    /// - Throws: ``TrustError/Code/unreadableInput`` for a file that cannot be read,
    ///   ``TrustError/Code/invalidConfiguration`` for a bad key, and what `CTLogList`'s
    ///   initialisers throw for a bad list or signature.
    func load() throws -> CTLogList? {
        guard let path = ctLogList else { return nil }
        func read(_ path: String, _ what: String) throws -> [UInt8] {
            guard let data = FileManager.default.contents(atPath: path) else { throw TrustError(.unreadableInput, "Cannot read the \(what) \(path).") }
            return [UInt8](data)
        }
        let json = try read(path, "CT log list")
        let name = URL(fileURLWithPath: path).lastPathComponent
        guard let keyPath = ctLogListKey else { return try CTLogList(json: json, fileName: name) }
        let key: SignaturePublicKey
        do {
            key = try SignaturePublicKey(pem: String(decoding: try read(keyPath, "CT log list key"), as: UTF8.self))
        } catch let error as TrustError where error.isKeyRefusal {
            throw TrustError(.invalidConfiguration, "--ct-log-list-key \(keyPath): \(error.reason)")
        }
        let signature = ctLogListSignature ?? (path.hasSuffix(".json") ? String(path.dropLast(5)) : path) + ".sig"
        return try CTLogList(json: json, signature: try read(signature, "CT log list signature"), key: key, fileName: name)
    }

    /// ``load()`` with its errors as usage errors, for `fetch` and `inspect`.
    func loadForCommand() throws(CommandFailure) -> CTLogList? {
        do {
            return try load()
        } catch let error as TrustError {
            throw CommandFailure(status: CommandFailure.usage, message: "error: \(error.reason)")
        } catch {
            throw CommandFailure(status: CommandFailure.usage, message: "error: \(error)")
        }
    }
}
