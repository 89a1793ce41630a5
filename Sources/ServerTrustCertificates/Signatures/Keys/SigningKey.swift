internal import COpenSSL

/// An Ed25519 private key that signs responses (an intermediate key) or intermediate key
/// certificates (the root key).
///
/// The v1 format's view of a ``SignaturePrivateKey``: Ed25519 only, and throwing
/// ``ResponseSignatureError`` as the rest of v1 does; ``privateKey`` is the same key for RFC 9421.
/// Kept in unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), the form
/// `servertrust keys create-root` and `keys issue-intermediate` write with mode 0600 and
/// `openssl genpkey -algorithm ed25519` produces. Deliberately not `Equatable` and not printable:
/// key material is never compared or logged.
public struct SigningKey: Sendable, CustomStringConvertible {
    /// The same key as RFC 9421's `MessageSignatureSigner` takes it (``SignatureAlgorithm/ed25519``).
    public let privateKey: SignaturePrivateKey

    private init(_ privateKey: SignaturePrivateKey) {
        self.privateKey = privateKey
    }

    /// A fresh key from OpenSSL's random generator.
    /// - Throws: `ResponseSignatureError.Code.openSSLFailure`.
    public static func generate() throws(ResponseSignatureError) -> SigningKey {
        do {
            return SigningKey(try SignaturePrivateKey.generate(.ed25519))
        } catch {
            throw ResponseSignatureError(.openSSLFailure, "Generating an Ed25519 key failed: \(error.reason).")
        }
    }

    /// Parses a PEM private key. Other PEM blocks around it (an intermediate certificate) are
    /// skipped.
    ///
    /// - Throws: `ResponseSignatureError.Code.malformedKey` for a missing, encrypted or
    ///   unparseable key, or one that is not Ed25519.
    public init(pem: String) throws(ResponseSignatureError) {
        let parsed: OpaquePointer
        do {
            parsed = try PrivateKeyPEM.read(pem)
        } catch .tooLarge {
            throw ResponseSignatureError(.malformedKey, "The PEM text is over 1 MiB.")
        } catch {
            throw ResponseSignatureError(.malformedKey, "No unencrypted PEM PRIVATE KEY block could be read.")
        }
        guard EVP_PKEY_get_base_id(parsed) == EVP_PKEY_ED25519 else {
            defer { EVP_PKEY_free(parsed) }
            throw ResponseSignatureError(.malformedKey, "The private key is \(describeKeyType(parsed)), not Ed25519.")
        }
        do {
            self.init(try SignaturePrivateKey(takingOwnership: parsed))
        } catch {
            throw ResponseSignatureError(.malformedKey, "The Ed25519 private key cannot be used: \(error.reason).")
        }
    }

    /// A key from its 32-byte Ed25519 seed (RFC 8032's private key).
    /// - Throws: `ResponseSignatureError.Code.malformedKey` unless `raw` is 32 bytes.
    public init(rawRepresentation raw: [UInt8]) throws(ResponseSignatureError) {
        do {
            self.init(try SignaturePrivateKey(ed25519RawRepresentation: raw))
        } catch {
            throw ResponseSignatureError(.malformedKey, "An Ed25519 private key is 32 bytes; got \(raw.count).")
        }
    }

    /// The key as unencrypted PKCS#8 PEM. Store it readable by its owner only.
    public var pemRepresentation: String { privateKey.pemRepresentation }

    /// The public half.
    public var verificationKey: VerificationKey { VerificationKey(ed25519: privateKey.publicKey) }

    /// The 64-byte Ed25519 signature of `message`.
    /// - Throws: `ResponseSignatureError.Code.openSSLFailure` when OpenSSL fails.
    public func signature(for message: [UInt8]) throws(ResponseSignatureError) -> [UInt8] {
        do {
            return try privateKey.signature(for: message, algorithm: .ed25519)
        } catch {
            throw ResponseSignatureError(.openSSLFailure, "Signing with the Ed25519 key failed: \(error.reason).")
        }
    }

    public var description: String { "SigningKey(Ed25519, public \(verificationKey.base64))" }
}
