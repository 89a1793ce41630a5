import Foundation
internal import COpenSSL

/// A public key, held as the DER encoding of its SubjectPublicKeyInfo.
///
/// A value type: two keys are equal when their SPKI encodings are byte-for-byte equal, which
/// is exactly what public-key pinning compares.
public struct PublicKey: Hashable, Sendable, CustomStringConvertible {
    /// The DER-encoded SubjectPublicKeyInfo.
    public let subjectPublicKeyInfoDER: [UInt8]

    init(validatedSPKI der: [UInt8]) {
        subjectPublicKeyInfoDER = der
    }

    /// Parses a DER SubjectPublicKeyInfo.
    ///
    /// - Throws: ``TrustError/Code/malformedPublicKey`` if OpenSSL cannot decode it or trailing
    ///   bytes follow it.
    public init(subjectPublicKeyInfoDER der: [UInt8]) throws {
        let consumed: Int? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let key = d2i_PUBKEY(nil, &cursor, buffer.count) else { return nil }
            EVP_PKEY_free(key)
            return cursor.map { $0 - buffer.baseAddress! }
        }
        _ = drainOpenSSLErrors()
        guard let consumed, !der.isEmpty else {
            throw TrustError(.malformedPublicKey, "The data is not a DER SubjectPublicKeyInfo.")
        }
        guard consumed == der.count else {
            throw TrustError(.malformedPublicKey, "The SubjectPublicKeyInfo is followed by \(der.count - consumed) bytes of trailing data.")
        }
        subjectPublicKeyInfoDER = der
    }

    /// Parses a PEM `PUBLIC KEY` block or base64 DER.
    public init(pemOrBase64 text: String) throws {
        let body = text.split(whereSeparator: \.isNewline)
            .filter { !$0.hasPrefix("-----") }
            .joined()
        guard let data = Data(base64Encoded: body), !data.isEmpty else {
            throw TrustError(.malformedPublicKey, "The public key is neither a PEM PUBLIC KEY block nor base64 DER.")
        }
        try self.init(subjectPublicKeyInfoDER: [UInt8](data))
    }

    /// The SPKI pin of this key.
    public var pin: Pin { Pin(sha256Digest: sha256(subjectPublicKeyInfoDER)) }

    /// The key type: `RSA`, `EC P-256`, `Ed25519`…
    public var keyType: String { withKey(default: "unknown") { describeKeyType($0) } }

    /// The key size in bits.
    public var keySize: Int { withKey(default: 0) { Int(EVP_PKEY_get_bits($0)) } }

    /// The security strength in bits, as OpenSSL estimates it (RSA-2048 = 112, P-256 = 128).
    public var securityBits: Int { withKey(default: 0) { Int(EVP_PKEY_get_security_bits($0)) } }

    public var description: String { "PublicKey(\(keyType) \(keySize), \(pin))" }

    private func withKey<T>(default fallback: T, _ body: (OpaquePointer) -> T) -> T {
        subjectPublicKeyInfoDER.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let key = d2i_PUBKEY(nil, &cursor, buffer.count) else {
                _ = drainOpenSSLErrors()
                return fallback
            }
            defer { EVP_PKEY_free(key) }
            return body(key)
        }
    }
}

package func describeKeyType(_ key: OpaquePointer) -> String {
    switch EVP_PKEY_get_base_id(key) {
    case EVP_PKEY_RSA, EVP_PKEY_RSA_PSS: return "RSA"
    case EVP_PKEY_EC:
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        if EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 {
            let group = decodeCString(name)
            switch group {
            case "prime256v1": return "EC P-256"
            case "secp384r1": return "EC P-384"
            case "secp521r1": return "EC P-521"
            default: return "EC \(group)"
            }
        }
        return "EC"
    case EVP_PKEY_ED25519: return "Ed25519"
    case EVP_PKEY_ED448: return "Ed448"
    case EVP_PKEY_DSA: return "DSA"
    default:
        let nid = EVP_PKEY_get_base_id(key)
        return OBJ_nid2sn(nid).map { String(cString: $0) } ?? "unknown"
    }
}
