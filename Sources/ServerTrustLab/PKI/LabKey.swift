public import ServerTrust
import Foundation
internal import COpenSSL

/// A private key generated in the process, for lab certificates, CRLs and OCSP responses.
///
/// Owns one `EVP_PKEY*`, freed in `deinit`. The key is never modified after generation and
/// OpenSSL 3 creates a fresh `EVP_PKEY_CTX` for every signature, so concurrent use from several
/// threads is safe: `@unchecked Sendable`.
///
/// Making a key does not throw: OpenSSL fails to generate or encode a key of a supported
/// algorithm only when it is itself broken, and then the process stops with OpenSSL's errors
/// (`preconditionFailure`).
public final class LabKey: @unchecked Sendable, CustomStringConvertible {
    /// The kinds of key the builder can make.
    public enum Algorithm: Hashable, Sendable {
        /// ECDSA over P-256.
        case ecP256
        /// ECDSA over P-384.
        case ecP384
        /// RSA with a modulus of `bits` bits.
        case rsa(bits: Int)
        /// Ed25519.
        case ed25519
    }

    /// What kind of key this is.
    public let algorithm: Algorithm
    package let pkey: OpaquePointer

    private init(algorithm: Algorithm) {
        self.algorithm = algorithm
        pkey = Self.generate(algorithm)
    }

    deinit { EVP_PKEY_free(pkey) }

    /// A fresh ECDSA P-256 key.
    public static func ecP256() -> LabKey { LabKey(algorithm: .ecP256) }

    /// A fresh ECDSA P-384 key.
    public static func ecP384() -> LabKey { LabKey(algorithm: .ecP384) }

    /// A fresh Ed25519 key.
    public static func ed25519() -> LabKey { LabKey(algorithm: .ed25519) }

    /// An RSA key of `bits` bits, shared process-wide.
    ///
    /// RSA generation takes tens to hundreds of milliseconds, so keys are cached per size and
    /// `variant`: the same arguments always return the same key. Ask for another `variant` when a
    /// test needs two different RSA keys of one size.
    /// - Parameters:
    ///   - bits: the modulus size. Default 2048.
    ///   - variant: which of the cached keys of that size. Default 0.
    public static func rsa(bits: Int = 2048, variant: Int = 0) -> LabKey {
        let slot = RSASlot(bits: bits, variant: variant)
        if let cached = rsaCache.withLock({ $0[slot] }) { return cached }
        // Generate outside the lock so different sizes are made concurrently; a rare duplicate
        // generation is harmless because the first key stored wins.
        let key = LabKey(algorithm: .rsa(bits: bits))
        return rsaCache.withLock { cache in
            if let cached = cache[slot] { return cached }
            cache[slot] = key
            return key
        }
    }

    private struct RSASlot: Hashable { let bits: Int; let variant: Int }
    private static let rsaCache = Locked<[RSASlot: LabKey]>([:])

    /// Whether this is an RSA key (leaves then default to keyEncipherment in their key usage).
    public var isRSA: Bool {
        if case .rsa = algorithm { return true }
        return false
    }

    /// The public half, as ServerTrust sees it.
    public var publicKey: PublicKey {
        do {
            let spki = try OpenSSLEncoding.der { i2d_PUBKEY(pkey, $0) }
            return try PublicKey(subjectPublicKeyInfoDER: spki)
        } catch {
            preconditionFailure("OpenSSL cannot encode a key it generated: \(error)")
        }
    }

    /// The SPKI pin of the public key.
    public var pin: Pin { publicKey.pin }

    /// The private key as a PEM `PRIVATE KEY` (unencrypted PKCS#8) block.
    public var pemPrivateKey: String {
        let bytes = try? OpenSSLEncoding.bioOutput { bio in
            PEM_write_bio_PKCS8PrivateKey(bio, pkey, nil, nil, 0, nil, nil)
        }
        guard let bytes else { preconditionFailure("OpenSSL cannot write a key it generated as PEM") }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The private key as unencrypted PKCS#8 DER.
    public var derPrivateKey: [UInt8] {
        let bytes = try? OpenSSLEncoding.bioOutput { bio in
            i2d_PKCS8PrivateKey_bio(bio, pkey, nil, nil, 0, nil, nil)
        }
        guard let bytes else { preconditionFailure("OpenSSL cannot write a key it generated as DER") }
        return bytes
    }

    /// The digest to sign with: SHA-256, or none for Ed25519, which hashes internally.
    package var signingDigest: OpaquePointer? { algorithm == .ed25519 ? nil : EVP_sha256() }

    /// `LabKey(ecP256, sha256/…)`: the algorithm and the public key's pin, never the private key.
    public var description: String { "LabKey(\(algorithm), \(pin))" }

    private static func generate(_ algorithm: Algorithm) -> OpaquePointer {
        let name: String
        switch algorithm {
        case .ecP256, .ecP384: name = "EC"
        case .rsa: name = "RSA"
        case .ed25519: name = "ED25519"
        }
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, name, nil) else {
            preconditionFailure("EVP_PKEY_CTX_new_from_name(\(name)) failed: \(drainLabOpenSSLErrors())")
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        var ok = EVP_PKEY_keygen_init(ctx) == 1
        switch algorithm {
        case .ecP256: ok = ok && EVP_PKEY_CTX_set_group_name(ctx, "P-256") == 1
        case .ecP384: ok = ok && EVP_PKEY_CTX_set_group_name(ctx, "P-384") == 1
        case .rsa(let bits): ok = ok && EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, Int32(bits)) == 1
        case .ed25519: break
        }
        var key: OpaquePointer?
        ok = ok && EVP_PKEY_generate(ctx, &key) == 1
        guard ok, let key else {
            preconditionFailure("generating a \(algorithm) key failed: \(drainLabOpenSSLErrors())")
        }
        return key
    }
}
