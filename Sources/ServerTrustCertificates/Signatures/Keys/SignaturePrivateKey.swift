internal import COpenSSL
internal import CServerTrustShims

/// A private key that signs HTTP messages (RFC 9421): Ed25519, ECDSA P-256 or RSA (PSS), over
/// OpenSSL's EVP interface — the signing half of ``SignaturePublicKey``. The v1 format's
/// ``SigningKey`` is a view of an Ed25519 one.
///
/// Kept in unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), the form
/// `servertrust keys create-jwk` writes with mode 0600 and `openssl genpkey` produces.
/// Deliberately not `Equatable` and not printable beyond its type and public key: key material
/// is never compared or logged. Immutable after creation; each signature uses an `EVP_MD_CTX`
/// of its own, hence `@unchecked Sendable`.
public final class SignaturePrivateKey: @unchecked Sendable, CustomStringConvertible {
    /// The key's type.
    public let kind: SignaturePublicKey.Kind
    /// The public half.
    public let publicKey: SignaturePublicKey
    private let pointer: OpaquePointer

    /// Adopts `pointer`, an `EVP_PKEY` holding a private key; it is freed on failure too.
    package init(takingOwnership pointer: OpaquePointer) throws(TrustError) {
        guard let der = withMemoryBIO({ i2d_PUBKEY_bio($0, pointer) == 1 }) else {
            EVP_PKEY_free(pointer)
            throw TrustError(.malformedPrivateKey, "OpenSSL cannot export the public half: " + drainOpenSSLErrors().joined(separator: "; "))
        }
        do {
            publicKey = try SignaturePublicKey(subjectPublicKeyInfoDER: der)
        } catch {
            EVP_PKEY_free(pointer)
            throw error
        }
        kind = publicKey.kind
        self.pointer = pointer
    }

    deinit { EVP_PKEY_free(pointer) }

    /// A fresh key from OpenSSL's random generator; RSA keys have 3,072 bits.
    /// - Throws: `TrustError` `.openSSLFailure` when OpenSSL fails.
    public static func generate(_ kind: SignaturePublicKey.Kind) throws(TrustError) -> SignaturePrivateKey {
        let name: String = switch kind {
        case .ed25519: "ED25519"
        case .ecdsaP256: "EC"
        case .rsa: "RSA"
        }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, name, nil) else { throw failure("EVP_PKEY_CTX_new_from_name") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw failure("EVP_PKEY_keygen_init") }
        switch kind {
        case .ed25519: break
        case .ecdsaP256: guard EVP_PKEY_CTX_set_group_name(context, "P-256") == 1 else { throw failure("EVP_PKEY_CTX_set_group_name") }
        case .rsa: guard EVP_PKEY_CTX_set_rsa_keygen_bits(context, 3072) == 1 else { throw failure("EVP_PKEY_CTX_set_rsa_keygen_bits") }
        }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen(context, &key) == 1, let key else { throw failure("EVP_PKEY_keygen") }
        return try SignaturePrivateKey(takingOwnership: key)
    }

    /// Parses the first unencrypted PEM private key in `pem` (PKCS#8, or the traditional RSA and
    /// EC forms); other PEM blocks around it are skipped.
    /// - Throws: `TrustError` `.malformedPrivateKey` for a missing, encrypted or unparseable key,
    ///   `.unsupportedKey` for another key type or curve, `.weakKey` for RSA under 2,048 bits.
    public convenience init(pem: String) throws(TrustError) {
        let parsed: OpaquePointer
        do {
            parsed = try PrivateKeyPEM.read(pem)
        } catch .tooLarge {
            throw TrustError(.malformedPrivateKey, "the PEM text is over 1 MiB")
        } catch {
            throw TrustError(.malformedPrivateKey, "no unencrypted PEM PRIVATE KEY block could be read")
        }
        try self.init(takingOwnership: parsed)
    }

    /// An Ed25519 key from its 32-byte seed (RFC 8032's private key).
    /// - Throws: `TrustError` `.malformedPrivateKey` unless `raw` is 32 bytes OpenSSL accepts.
    package convenience init(ed25519RawRepresentation raw: [UInt8]) throws(TrustError) {
        guard raw.count == 32 else { throw TrustError(.malformedPrivateKey, "an Ed25519 private key is 32 bytes, not \(raw.count)") }
        let key = raw.withUnsafeBufferPointer { EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, $0.baseAddress, $0.count) }
        guard let key else { throw Self.failure("EVP_PKEY_new_raw_private_key") }
        try self.init(takingOwnership: key)
    }

    /// The key as unencrypted PKCS#8 PEM. Store it readable by its owner only.
    public var pemRepresentation: String {
        let pem = withMemoryBIO { bio in PEM_write_bio_PKCS8PrivateKey(bio, pointer, nil, nil, 0, nil, nil) == 1 }
        guard let pem else { preconditionFailure("OpenSSL cannot write a private key as PEM: \(drainOpenSSLErrors())") }
        return String(decoding: pem, as: UTF8.self)
    }

    /// The signature of `message` with `algorithm`, encoded as RFC 9421 and JWS encode it:
    /// Ed25519 64 bytes, ECDSA `r || s` (64 bytes) for ``SignatureAlgorithm/ecdsaP256SHA256Raw``
    /// or DER for ``SignatureAlgorithm/ecdsaP256SHA256``, RSA-PSS with a salt as long as the
    /// digest (RFC 9421 section 3.3.1).
    /// - Throws: `TrustError` `.unsupportedKey` when `algorithm` does not fit the key,
    ///   `.malformedKey` when OpenSSL fails.
    public func signature(for message: [UInt8], algorithm: SignatureAlgorithm) throws(TrustError) -> [UInt8] {
        guard algorithm.keyKind == kind else {
            throw TrustError(.unsupportedKey, "a \(kind.rawValue) key cannot sign with \(algorithm)")
        }
        let digest: OpaquePointer?
        var pssSalt: Int32? = nil
        switch algorithm.base {
        case .ed25519: digest = nil
        case .ecdsaP256SHA256DER, .ecdsaP256SHA256Raw, .rsaPKCS1v15SHA256: digest = EVP_sha256()
        case .rsaPSSSHA256:
            digest = EVP_sha256()
            pssSalt = 32
        case .rsaPSSSHA512:
            digest = EVP_sha512()
            pssSalt = 64
        }
        guard let context = EVP_MD_CTX_new() else { throw Self.failure("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer?
        guard EVP_DigestSignInit(context, &keyContext, digest, nil, pointer) == 1 else { throw Self.failure("EVP_DigestSignInit") }
        if let pssSalt {
            guard let keyContext, EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PSS_PADDING) == 1,
                EVP_PKEY_CTX_set_rsa_pss_saltlen(keyContext, pssSalt) == 1
            else { throw Self.failure("EVP_PKEY_CTX_set_rsa_padding") }
        }
        var length = 0
        var signature: [UInt8] = []
        let ok = message.withUnsafeBufferPointer { input in
            guard EVP_DigestSign(context, nil, &length, input.baseAddress, input.count) == 1 else { return false }
            signature = [UInt8](repeating: 0, count: length)
            return EVP_DigestSign(context, &signature, &length, input.baseAddress, input.count) == 1
        }
        guard ok else { throw Self.failure("EVP_DigestSign") }
        signature.removeLast(signature.count - length)
        guard algorithm.base == .ecdsaP256SHA256Raw else { return signature }
        guard let raw = Self.rawFromDERECDSA(signature, componentLength: 32) else { throw Self.failure("d2i_ECDSA_SIG") }
        return raw
    }

    /// A DER `Ecdsa-Sig-Value` as `r || s`, each left-padded to `componentLength` bytes.
    static func rawFromDERECDSA(_ der: [UInt8], componentLength: Int) -> [UInt8]? {
        der.withUnsafeBufferPointer { buffer -> [UInt8]? in
            var cursor = buffer.baseAddress
            guard let signature = d2i_ECDSA_SIG(nil, &cursor, buffer.count) else { return nil }
            defer { ECDSA_SIG_free(signature) }
            var r: OpaquePointer?
            var s: OpaquePointer?
            ECDSA_SIG_get0(signature, &r, &s)
            guard let r, let s else { return nil }
            var raw = [UInt8](repeating: 0, count: 2 * componentLength)
            let written = raw.withUnsafeMutableBufferPointer { out in
                BN_bn2binpad(r, out.baseAddress, Int32(componentLength)) == componentLength
                    && BN_bn2binpad(s, out.baseAddress! + componentLength, Int32(componentLength)) == componentLength
            }
            return written ? raw : nil
        }
    }

    public var description: String { "SignaturePrivateKey(\(kind.rawValue))" }

    private static func failure(_ call: String) -> TrustError {
        let errors = drainOpenSSLErrors()
        return TrustError(.openSSLFailure, "\(call) failed" + (errors.isEmpty ? "" : ": " + errors.joined(separator: "; ")))
    }
}

extension SignaturePublicKey {
    /// The key as a PEM `PUBLIC KEY` block (SubjectPublicKeyInfo).
    public var pemRepresentation: String {
        let pem = withMemoryBIO { PEM_write_bio_PUBKEY($0, pointer) == 1 }
        guard let pem else { preconditionFailure("OpenSSL cannot write a public key as PEM: \(drainOpenSSLErrors())") }
        return String(decoding: pem, as: UTF8.self)
    }

    /// The key's public members as a JSON Web Key (RFC 7517/7518/8037), with `kid` and the JOSE
    /// `alg` of the RFC 9421 algorithm the key is used with (`EdDSA` for `ed25519`, `ES256` for
    /// `ecdsa-p256-sha256`, `PS512` for `rsa-pss-sha512`), ready for a JWKS document: `OKP`/`Ed25519`
    /// (`x`), `EC`/`P-256` (`x`, `y`) or `RSA` (`n`, `e`), base64url without padding.
    public func jsonWebKey(keyID: String) -> [(name: String, value: String)] {
        var der = withMemoryBIO { i2d_PUBKEY_bio($0, pointer) == 1 } ?? []
        func b64url(_ bytes: some Collection<UInt8>) -> String { Base64URL.encode(bytes) }
        switch kind {
        case .ed25519:
            return [("kty", "OKP"), ("crv", "Ed25519"), ("x", b64url(der.suffix(32))), ("kid", keyID), ("alg", "EdDSA")]
        case .ecdsaP256:
            der = Array(der.suffix(64))
            return [("kty", "EC"), ("crv", "P-256"), ("x", b64url(der.prefix(32))), ("y", b64url(der.suffix(32))), ("kid", keyID), ("alg", "ES256")]
        case .rsa:
            func parameter(_ name: String) -> [UInt8] {
                var number: OpaquePointer?
                guard EVP_PKEY_get_bn_param(pointer, name, &number) == 1, let number else { return [] }
                defer { BN_free(number) }
                var bytes = [UInt8](repeating: 0, count: Int((BN_num_bits(number) + 7) / 8))
                _ = BN_bn2bin(number, &bytes)
                return bytes
            }
            return [("kty", "RSA"), ("n", b64url(parameter("n"))), ("e", b64url(parameter("e"))), ("kid", keyID), ("alg", "PS512")]
        }
    }
}
