package import Foundation
import ServerTrustCertificates
package import ServerTrustTUF

/// One TUF root metadata file (`*.tufroot.json`), checked as the TUF client checks the root it
/// starts from, ready to be written out as a Swift constant holding its exact bytes.
///
/// A compiled-in root is what every installed copy of the application trusts first, so the build
/// is where a wrong one is cheapest to find. The file must be a root ServerTrustTUF would trust
/// (its own parser; `_type` root; signed by a threshold of its own root keys — `InitialRoot`,
/// the very check of a stored root), must list no private key, and each top-level role must have
/// enough keys of a type the client supports to reach its threshold, or that role's metadata
/// could never verify.
///
/// An expired root is compiled in with a warning, not refused: the client starts from an expired
/// root as from any other (only the final root of a refresh must be unexpired), so a root the
/// repository has rotated past still works — and a build must not start failing on a date.
package struct TUFRootConstant: Sendable {
    /// The file-name suffix that marks a TUF root: `updates.tufroot.json`.
    package static let fileSuffix = ".tufroot.json"

    /// The file name, e.g. `updates.tufroot.json`.
    package let fileName: String
    /// The Swift name derived from the file name without ``fileSuffix``, e.g. `updates`.
    package let name: String
    /// The verified root and its exact bytes.
    package let root: InitialRoot
    /// What compiles but deserves attention: an expired root, keys the client cannot use.
    package let warnings: [String]

    /// Whether `fileName` is a TUF root to compile in: `<name>.tufroot.json` (any case), not a
    /// hidden file.
    package static func isTUFRootFile(_ fileName: String) -> Bool {
        !fileName.hasPrefix(".") && fileName.count > fileSuffix.count && fileName.lowercased().hasSuffix(fileSuffix)
    }

    /// Parses and checks the contents of one file.
    ///
    /// - Parameter now: the time expiry is judged against (default: now).
    /// - Throws: ``CodeGenerationError`` naming the file: no usable name, empty, not JSON the
    ///   client accepts, not root metadata, a private key, below the root threshold, or a role
    ///   whose threshold the supported keys cannot reach.
    package init(fileName: String, contents: [UInt8], now: Date = Date()) throws(CodeGenerationError) {
        func failure(_ reason: String) -> CodeGenerationError { CodeGenerationError(file: fileName, reason: reason) }
        guard let name = ConstantName.identifier(forFileName: String(fileName.dropLast(".json".count))) else {
            throw failure("the file name has no letter or digit to name a Swift constant after; rename it, e.g. updates.tufroot.json")
        }
        guard !contents.isEmpty else { throw failure("the file is empty; put the TUF root metadata (root.json) in it") }
        // The private key first: a leaked key is the first thing to fix, signed or not.
        let privateKeyID: String?
        do throws(TUFError) { privateKeyID = try Self.keyWithPrivatePart(contents) } catch { throw failure(Self.explanation(error)) }
        if let privateKeyID {
            throw failure("signed.keys.\(privateKeyID) holds a private key; never compile a key into a binary: publish the root with public keys only")
        }
        let root: InitialRoot
        do throws(TUFError) { root = try InitialRoot(bytes: contents) } catch { throw failure(Self.explanation(error)) }
        let signed = root.metadata.signed
        var warnings: [String] = []
        for type in [RoleType.root, .timestamp, .snapshot, .targets] {
            guard let role = signed.roles[type] else { continue }
            let unusable = role.keyIDs.filter { signed.keys[$0]?.isSupported != true }
            let usable = role.keyIDs.count - unusable.count
            guard !unusable.isEmpty else { continue }
            let listed = unusable.map { id in signed.keys[id].map { "\(id.prefix(16))… (\($0.keyType)/\($0.scheme))" } ?? "\(id.prefix(16))… (not in signed.keys)" }
            if usable < role.threshold {
                throw failure(
                    "the \(type.rawValue) role needs \(role.threshold) signature(s) but only \(usable) of its keys can be verified by this client; "
                        + "unusable: \(listed.joined(separator: ", ")). Supported: ed25519, ecdsa-sha2-nistp256, rsassa-pss-sha256, rsa-pkcs1v15-sha256 (RSA of at least 2,048 bits)")
            }
            warnings.append("the \(type.rawValue) role lists key(s) this client cannot use: \(listed.joined(separator: ", ")); its threshold \(role.threshold) rests on the other \(usable)")
        }
        if Int64(now.timeIntervalSince1970) >= signed.common.expires {
            warnings.append(
                "the root (version \(signed.version)) expired at \(signed.common.expiresText); the client can still rotate from it, "
                    + "but only while the repository serves newer roots: compile in the current root")
        }
        self.fileName = fileName
        self.name = name
        self.root = root
        self.warnings = warnings
    }

    /// The member holding the file's bytes in base64, e.g. `updatesTUFRoot`.
    package var constantName: String { name + "TUFRoot" }
    /// The base64 of the file's exact bytes, for `InitialRoot(base64:)`.
    package var base64: String { StrictBase64.encode(root.bytes) }
    /// The SHA-256 of the file's bytes, in hex.
    package var sha256Hex: String { Digest.hex(Digest.sha256(root.bytes)) }

    /// The ID of the first key of `signed.keys` whose `keyval` has a non-empty `private` member
    /// (securesystemslib's old key format), which the client ignores but a binary would carry.
    private static func keyWithPrivatePart(_ contents: [UInt8]) throws(TUFError) -> String? {
        guard case .object(let keys)? = try JSONParser().parse(contents)["signed"]?["keys"] else { return nil }
        return keys.first { key in
            guard let secret = key.value["keyval"]?["private"] else { return false }
            return secret != .string("")
        }?.key
    }

    /// A TUF client's refusal, said as a build error.
    private static func explanation(_ error: TUFError) -> String {
        switch error.code {
        case .malformedJSON: "not JSON the TUF client accepts (\(error.code)): \(error.reason)"
        case .malformedMetadata: "not TUF root metadata the client accepts (\(error.code)): \(error.reason)"
        case .unsignedMetadata:
            "not signed by a threshold of its own root keys (\(error.code)): \(error.reason); a root is trusted only when a threshold of the root keys it lists signed it"
        default: "the TUF client would not trust this root (\(error.code)): \(error.reason)"
        }
    }
}
