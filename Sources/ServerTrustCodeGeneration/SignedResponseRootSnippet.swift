import Foundation
package import ServerTrustCertificates

/// A signed-response root public key as a Swift constant, with the line that configures a
/// `SignedResponseRoot` from it: what `servertrust keys root-public --swift` prints, for an
/// app to compile in.
package struct SignedResponseRootSnippet: Sendable {
    /// The header versions a root can sign under.
    package static let versions = 1...999

    package let key: VerificationKey
    /// The Swift constant's name. Default `signedResponseRootKey`.
    package let constantName: String
    /// The header version the root signs under: 1 unless a root was replaced after a
    /// compromise.
    package let version: Int

    /// - Throws: ``CodeGenerationError`` (scope ``CodeGenerationError/Problem/Scope/setting``)
    ///   for a name that is not a Swift identifier or a version outside ``versions``.
    package init(key: VerificationKey, constantName: String = "signedResponseRootKey", version: Int = 1) throws(CodeGenerationError) {
        guard Self.isIdentifier(constantName) else {
            throw CodeGenerationError(file: constantName, reason: "is not a Swift identifier", scope: .setting)
        }
        guard Self.versions.contains(version) else {
            throw CodeGenerationError(file: String(version), reason: "is not a header version (1 to 999)", scope: .setting)
        }
        self.key = key
        self.constantName = constantName
        self.version = version
    }

    /// Whether `name` can name the constant: ASCII letters, digits and `_`, not starting with a
    /// digit.
    package static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first == "_" || CharacterSet.letters.contains(first) else { return false }
        return name.allSatisfy(\.isASCII) && name.unicodeScalars.allSatisfy { $0 == "_" || CharacterSet.alphanumerics.contains($0) }
    }

    /// Three lines: a doc comment naming the key ID and version, how to use it, the constant.
    package var swiftSource: String {
        """
        /// ServerTrust signed-response root key: Ed25519, key ID \(key.keyIDHex), header version \(version).
        /// Use: SignedResponseRoot(base64: \(constantName)\(version == 1 ? "" : ", version: \(version)"))
        let \(constantName) = "\(key.base64)"
        """
    }
}
