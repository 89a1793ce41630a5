/// A root key the client trusts for signed responses, and the header version it signs under.
///
/// Compile the key in as a base64 constant (`servertrust keys root-public --swift`). The version
/// is the `v1` of `X-ServerTrust-Signature: v1; …`: it changes only when a root is replaced
/// after a compromise, so that old and new clients each read their own signature field
/// (docs/SIGNED_RESPONSES_V1.md, section 9).
public struct SignedResponseRoot: Hashable, Sendable, CustomStringConvertible {
    public let key: VerificationKey
    /// 1 to 999; checked when a verifier is created.
    public let version: Int

    public init(_ key: VerificationKey, version: Int = 1) {
        self.key = key
        self.version = version
    }

    /// A root from base64 of its 32 raw bytes (or a DER SubjectPublicKeyInfo, or PEM).
    /// - Throws: `ResponseSignatureError.Code.malformedKey`.
    public init(base64: String, version: Int = 1) throws(ResponseSignatureError) {
        self.init(try VerificationKey(base64: base64), version: version)
    }

    public var description: String { "v\(version) root \(key.base64) (id \(key.keyIDHex))" }
}
