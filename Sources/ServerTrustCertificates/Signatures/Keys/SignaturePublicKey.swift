internal import COpenSSL
internal import CServerTrustShims

/// A public key that verifies signatures: Ed25519, ECDSA P-256 and RSA-PSS, over OpenSSL's EVP
/// interface.
///
/// The one signature-verification primitive of the package: the TUF client checks metadata
/// signatures with it, RFC 9421 checks response signatures with it, and the v1 signed-response
/// format's ``VerificationKey`` is a view of it.
/// A key is made once from its encoding and then only read; every verification uses an
/// `EVP_MD_CTX` of its own, which OpenSSL 3 documents as safe on a shared `EVP_PKEY`: hence
/// `@unchecked Sendable`.
public final class SignaturePublicKey: @unchecked Sendable {
    /// The key types this verifier accepts.
    public enum Kind: String, Sendable {
        case ed25519
        case ecdsaP256 = "ecdsa-p256"
        case rsa
    }

    /// The key's type.
    public let kind: Kind
    let pointer: OpaquePointer

    private init(takingOwnership pointer: OpaquePointer, kind: Kind) {
        self.pointer = pointer
        self.kind = kind
    }

    deinit { EVP_PKEY_free(pointer) }

    /// An Ed25519 public key from its 32 raw bytes.
    public convenience init(ed25519RawRepresentation raw: [UInt8]) throws(TrustError) {
        guard raw.count == 32 else {
            throw TrustError(.malformedPublicKey, "an Ed25519 public key is 32 bytes, not \(raw.count)")
        }
        let key = raw.withUnsafeBufferPointer { EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, $0.baseAddress, $0.count) }
        guard let key else {
            throw TrustError(.malformedPublicKey, "OpenSSL refused the Ed25519 key: " + drainOpenSSLErrors().joined(separator: "; "))
        }
        self.init(takingOwnership: key, kind: .ed25519)
    }

    /// A key from a DER SubjectPublicKeyInfo: Ed25519, EC on P-256, or RSA of at least 2,048 bits.
    public convenience init(subjectPublicKeyInfoDER der: [UInt8]) throws(TrustError) {
        let key: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let key else {
            throw TrustError(.malformedPublicKey, "not a DER SubjectPublicKeyInfo: " + drainOpenSSLErrors().joined(separator: "; "))
        }
        let kind: Kind
        do throws(TrustError) {
            kind = try Self.classify(key)
        } catch {
            EVP_PKEY_free(key)
            throw error
        }
        self.init(takingOwnership: key, kind: kind)
    }

    /// A key from a PEM `PUBLIC KEY` block (SubjectPublicKeyInfo), as securesystemslib stores
    /// ECDSA and RSA keys.
    public convenience init(pem: String) throws(TrustError) {
        let lines = pem.split(whereSeparator: \.isNewline).map { line in String(line.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed()) }
        guard let begin = lines.firstIndex(of: "-----BEGIN PUBLIC KEY-----"),
            let end = lines.firstIndex(of: "-----END PUBLIC KEY-----"), begin < end
        else {
            throw TrustError(.malformedPublicKey, "no PEM PUBLIC KEY block")
        }
        guard let der = StrictBase64.decode(Array(lines[(begin + 1)..<end].joined().utf8)) else {
            throw TrustError(.malformedPublicKey, "the PEM PUBLIC KEY block is not base64")
        }
        try self.init(subjectPublicKeyInfoDER: der)
    }

    private static func classify(_ key: OpaquePointer) throws(TrustError) -> Kind {
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_ED25519:
            return .ed25519
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 64)
            var length = 0
            guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else {
                _ = drainOpenSSLErrors()
                throw TrustError(.malformedPublicKey, "an EC key without a named curve")
            }
            let curve = decodeCString(name)
            guard curve == "prime256v1" || curve == "P-256" else {
                throw TrustError(.unsupportedKey, "EC curve \(curve); only P-256 is accepted")
            }
            return .ecdsaP256
        case EVP_PKEY_RSA:
            let bits = EVP_PKEY_get_bits(key)
            guard bits >= 2048 else { throw TrustError(.weakKey, "a \(bits)-bit RSA key; at least 2048 bits are required") }
            return .rsa
        default:
            throw TrustError(.unsupportedKey, "key type \(EVP_PKEY_get_base_id(key)) is not Ed25519, EC P-256 or RSA")
        }
    }

    /// The 32 raw bytes of an Ed25519 key (RFC 8032); nil for another key type.
    package var ed25519RawRepresentation: [UInt8]? {
        kind == .ed25519 ? Self.ed25519RawRepresentation(of: pointer) : nil
    }

    /// The 32 raw public-key bytes of an Ed25519 `EVP_PKEY` (a private key too); nil when
    /// OpenSSL cannot export them.
    package static func ed25519RawRepresentation(of key: OpaquePointer) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: 32)
        var length = bytes.count
        guard EVP_PKEY_get_raw_public_key(key, &bytes, &length) == 1, length == 32 else {
            _ = drainOpenSSLErrors()
            return nil
        }
        return bytes
    }

    /// Whether `other` is the same public key (OpenSSL's `EVP_PKEY_eq`): the same key material,
    /// whatever encoding, key ID or signature scheme it was read under.
    public func isSameKey(as other: SignaturePublicKey) -> Bool {
        EVP_PKEY_eq(pointer, other.pointer) == 1
    }

    /// Whether `signature` is a valid signature of `message` under this key with `algorithm`.
    ///
    /// `false` — never a throw — for a signature that does not verify, an algorithm that does
    /// not fit the key's type, or malformed signature bytes.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8], algorithm: SignatureAlgorithm) -> Bool {
        guard algorithm.keyKind == kind else { return false }
        switch algorithm.base {
        case .ed25519:
            guard signature.count == 64 else { return false }
            return EVPSignature.verify(key: pointer, digest: nil, signature: signature, message: message)
        case .ecdsaP256SHA256DER:
            return EVPSignature.verify(key: pointer, digest: EVP_sha256(), signature: signature, message: message)
        case .ecdsaP256SHA256Raw:
            guard let der = EVPSignature.derFromRawECDSA(signature, componentLength: 32) else { return false }
            return EVPSignature.verify(key: pointer, digest: EVP_sha256(), signature: der, message: message)
        case .rsaPSSSHA256:
            return EVPSignature.verify(key: pointer, digest: EVP_sha256(), signature: signature, message: message, pss: true)
        case .rsaPSSSHA512:
            return EVPSignature.verify(key: pointer, digest: EVP_sha512(), signature: signature, message: message, pss: true)
        case .rsaPKCS1v15SHA256:
            return EVPSignature.verify(key: pointer, digest: EVP_sha256(), signature: signature, message: message)
        }
    }

    /// Whether `signature` is an RSASSA-PKCS1-v1_5 signature with SHA-1 of `message` under this
    /// RSA key: App Store receipts signed before 2023. Verification only, and not a
    /// ``SignatureAlgorithm`` (whose every scheme ``SignaturePrivateKey`` can also sign with), so
    /// nothing in the package signs with SHA-1. `false` for a key that is not RSA.
    package func isValidRSAPKCS1v15SHA1Signature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard kind == .rsa else { return false }
        return EVPSignature.verify(key: pointer, digest: EVP_sha1(), signature: signature, message: message)
    }
}
