/// A signature scheme ``SignaturePublicKey`` verifies: the key type, the digest and the encoding
/// of the signature bytes.
///
/// A closed set of structs over a private enum, so schemes can be added (rsa-pss-sha512 is)
/// without breaking a caller's `switch`.
public struct SignatureAlgorithm: Hashable, Sendable, CustomStringConvertible {
    enum Base: String, Hashable, Sendable {
        case ed25519
        case ecdsaP256SHA256DER
        case ecdsaP256SHA256Raw
        case rsaPSSSHA256
        case rsaPSSSHA512
        case rsaPKCS1v15SHA256
    }

    let base: Base
    private init(_ base: Base) { self.base = base }

    /// Ed25519 (RFC 8032): a 64-byte signature over the whole message.
    public static let ed25519 = SignatureAlgorithm(.ed25519)
    /// ECDSA on P-256 with SHA-256, the signature DER-encoded (`Ecdsa-Sig-Value`), as
    /// securesystemslib's `ecdsa-sha2-nistp256` scheme and X.509 write it.
    public static let ecdsaP256SHA256 = SignatureAlgorithm(.ecdsaP256SHA256DER)
    /// ECDSA on P-256 with SHA-256, the signature as 64 bytes `r || s` (RFC 9421's
    /// `ecdsa-p256-sha256`, JWS's ES256).
    public static let ecdsaP256SHA256Raw = SignatureAlgorithm(.ecdsaP256SHA256Raw)
    /// RSASSA-PSS with SHA-256 and MGF1-SHA-256; any salt length is accepted on verification
    /// (securesystemslib's `rsassa-pss-sha256` signs with the longest salt, RFC 9421 with 32 bytes).
    public static let rsaPSSSHA256 = SignatureAlgorithm(.rsaPSSSHA256)
    /// RSASSA-PSS with SHA-512 and MGF1-SHA-512 (RFC 9421's `rsa-pss-sha512`).
    public static let rsaPSSSHA512 = SignatureAlgorithm(.rsaPSSSHA512)
    /// RSASSA-PKCS1-v1_5 with SHA-256 (securesystemslib's `rsa-pkcs1v15-sha256`).
    public static let rsaPKCS1v15SHA256 = SignatureAlgorithm(.rsaPKCS1v15SHA256)

    public var description: String {
        switch base {
        case .ed25519: "ed25519"
        case .ecdsaP256SHA256DER: "ecdsa-sha2-nistp256"
        case .ecdsaP256SHA256Raw: "ecdsa-p256-sha256 (r||s)"
        case .rsaPSSSHA256: "rsassa-pss-sha256"
        case .rsaPSSSHA512: "rsassa-pss-sha512"
        case .rsaPKCS1v15SHA256: "rsa-pkcs1v15-sha256"
        }
    }

    /// The key type the scheme needs.
    var keyKind: SignaturePublicKey.Kind {
        switch base {
        case .ed25519: .ed25519
        case .ecdsaP256SHA256DER, .ecdsaP256SHA256Raw: .ecdsaP256
        case .rsaPSSSHA256, .rsaPSSSHA512, .rsaPKCS1v15SHA256: .rsa
        }
    }
}
