internal import ServerTrustCertificates

/// The root metadata an application ships and starts trusting from: the bytes of a `root.json`
/// file it installs, or those `ServerTrustPinsPlugin` compiled in from a `*.tufroot.json` file.
///
/// A value exists only for bytes that pass the check every trusted root passes when it is
/// loaded (the client's trusted-metadata set, as python-tuf's `TrustedMetadataSet`): JSON as the client
/// accepts it, `_type` root, and signatures by a threshold of the root's own root keys. Expiry is
/// not checked, as it is not for any trusted root: an expired root can still be rotated forward,
/// and only the final root of a refresh must be unexpired.
///
/// ``MetadataStore/installInitialRoot(_:)`` writes it into a store that has no root yet, and
/// `Updater(store:initialRoot:…)` does that before it starts; a store that already holds a root
/// — one rotated forward since — keeps it.
public struct InitialRoot: Sendable {
    /// The exact bytes, as they are written to the store.
    public let bytes: [UInt8]
    /// The parsed, verified root.
    package let metadata: Metadata<Root>

    /// Verifies `bytes` as a trusted root.
    ///
    /// - Throws: ``TUFError`` `malformedJSON` or `malformedMetadata` for bytes that are not root
    ///   metadata, `unsignedMetadata` for fewer valid root signatures than the root threshold.
    public init(bytes: [UInt8]) throws(TUFError) {
        metadata = try TrustedMetadataSet.verifiedRoot(bytes, parser: JSONParser())
        self.bytes = bytes
    }

    /// Decodes and verifies a root compiled in as base64, e.g. `Certificates.updatesTUFRoot`.
    ///
    /// - Throws: ``TUFError`` `malformedMetadata` for text that is not standard, padded base64,
    ///   and what ``init(bytes:)`` throws.
    public init(base64: String) throws(TUFError) {
        guard let bytes = StrictBase64.decode(Array(base64.utf8)) else {
            throw TUFError(.malformedMetadata, "the compiled-in root is not base64")
        }
        try self.init(bytes: bytes)
    }
}
