public import Foundation
public import ServerTrust

/// A root and an intermediate it certified, as a server operator would have after
/// `servertrust keys create-root` and `keys issue-intermediate`.
public struct SigningKeys: Sendable {
    public let root: SigningKey
    public let signer: ResponseSigner

    public init(expires: Date = Date().addingTimeInterval(30 * 86_400), version: Int = 1) throws {
        root = try SigningKey.generate()
        let intermediate = try SigningKey.generate()
        let certificate = try IntermediateKeyCertificate.issue(for: intermediate.verificationKey, expires: expires, signedBy: root)
        signer = try ResponseSigner(key: intermediate, certificate: certificate, version: version)
    }

    /// The root a client compiles in, for the signer's header version.
    public var roots: [SignedResponseRoot] { [SignedResponseRoot(root.verificationKey, version: signer.version)] }
}
