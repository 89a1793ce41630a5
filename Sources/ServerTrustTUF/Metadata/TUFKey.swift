internal import ServerTrustCertificates

/// A public key as TUF metadata lists it (`keytype`, `scheme`, `keyval.public`).
///
/// A key of a type or scheme the client does not support still parses — as in python-tuf, a
/// root may list keys some clients cannot use — and simply never verifies a signature.
package struct TUFKey: Sendable {
    package let keyType: String
    package let scheme: String
    package let publicValue: String
    /// The verifier and algorithm, or nil when the key cannot be used.
    let verifier: (key: SignaturePublicKey, algorithm: SignatureAlgorithm)?

    init(_ value: JSONValue, _ path: String) throws(TUFError) {
        let fields = try Fields(value, path)
        keyType = try fields.string("keytype")
        scheme = try fields.string("scheme")
        publicValue = try fields.object("keyval").string("public")
        verifier = Self.makeVerifier(keyType: keyType, scheme: scheme, publicValue: publicValue)
    }

    private static func makeVerifier(keyType: String, scheme: String, publicValue: String) -> (SignaturePublicKey, SignatureAlgorithm)? {
        do {
            switch (keyType, scheme) {
            case ("ed25519", "ed25519"):
                guard let raw = Digest.bytes(hex: publicValue) else { return nil }
                return (try SignaturePublicKey(ed25519RawRepresentation: raw), .ed25519)
            case ("ecdsa", "ecdsa-sha2-nistp256"), ("ecdsa-sha2-nistp256", "ecdsa-sha2-nistp256"):
                let key = try SignaturePublicKey(pem: publicValue)
                return key.kind == .ecdsaP256 ? (key, .ecdsaP256SHA256) : nil
            case ("rsa", "rsassa-pss-sha256"):
                let key = try SignaturePublicKey(pem: publicValue)
                return key.kind == .rsa ? (key, .rsaPSSSHA256) : nil
            case ("rsa", "rsa-pkcs1v15-sha256"):
                let key = try SignaturePublicKey(pem: publicValue)
                return key.kind == .rsa ? (key, .rsaPKCS1v15SHA256) : nil
            default:
                return nil
            }
        } catch {
            return nil
        }
    }

    /// Whether this client can verify signatures with the key: a supported type and scheme
    /// (`ed25519`, `ecdsa-sha2-nistp256`, `rsassa-pss-sha256`, `rsa-pkcs1v15-sha256`) and a
    /// public value that parses as one (RSA of at least 2,048 bits).
    package var isSupported: Bool { verifier != nil }

    /// Whether `signatureHex` is this key's signature of `payload`.
    func verifies(signatureHex: String, payload: [UInt8]) -> Bool {
        guard let verifier, let signature = Digest.bytes(hex: signatureHex) else { return false }
        return verifier.key.isValidSignature(signature, for: payload, algorithm: verifier.algorithm)
    }
}

/// The keys and threshold trusted for one role.
package struct TUFRole: Sendable {
    package let keyIDs: [String]
    package let threshold: Int

    init(keyIDs: [String], threshold: Int64, path: String) throws(TUFError) {
        guard Set(keyIDs).count == keyIDs.count else { throw TUFError(.malformedMetadata, "\(path).keyids are not unique") }
        guard threshold >= 1 else { throw TUFError(.malformedMetadata, "\(path).threshold is below 1") }
        self.keyIDs = keyIDs
        self.threshold = Int(threshold)
    }

    init(_ fields: Fields) throws(TUFError) {
        try self.init(keyIDs: try fields.strings("keyids"), threshold: try fields.integer("threshold"), path: fields.path)
    }
}

/// Counts the distinct keys of the role with a valid signature over `payload` and throws
/// ``TUFError/Code/unsignedMetadata`` below the threshold: python-tuf's `verify_delegate`, except
/// that a key listed under several key IDs counts once (python-tuf 7 counts key IDs; go-tuf
/// fixed it as GHSA-4f8r-qqr9-fq8j). A threshold of n asks for n key holders, so keys are told
/// apart by their key material, not by the key ID, type, scheme or spelling that names them.
func verifyThreshold(role: TUFRole, keys: [String: TUFKey], roleName: String, payload: [UInt8], signatures: [String: String]) throws(TUFError) {
    var signers: [(keyID: String, key: SignaturePublicKey)] = []
    var countedOnce: [String] = []
    for keyID in role.keyIDs {
        guard let key = keys[keyID], let signature = signatures[keyID], let publicKey = key.verifier?.key,
            key.verifies(signatureHex: signature, payload: payload)
        else { continue }
        if let first = signers.first(where: { $0.key.isSameKey(as: publicKey) }) {
            countedOnce.append("key ID \(keyID) is the same key as \(first.keyID), counted once")
        } else {
            signers.append((keyID, publicKey))
        }
    }
    guard signers.count >= role.threshold else {
        throw TUFError(
            .unsignedMetadata,
            (["\(roleName): \(signers.count) valid signature(s), threshold \(role.threshold)"] + countedOnce).joined(separator: "; "))
    }
}
