internal import COpenSSL

/// An Ed25519 private key that signs responses (an intermediate key) or intermediate key
/// certificates (the root key).
///
/// Kept in unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), the form
/// `servertrust keys create-root` and `keys issue-intermediate` write with mode 0600 and
/// `openssl genpkey -algorithm ed25519` produces. Deliberately not `Equatable` and not printable:
/// key material is never compared or logged.
public struct SigningKey: Sendable, CustomStringConvertible {
    let key: Ed25519.Key

    private init(key: Ed25519.Key) {
        self.key = key
    }

    /// A fresh key from OpenSSL's random generator.
    /// - Throws: `ResponseSignatureError.Code.openSSLFailure`.
    public static func generate() throws(ResponseSignatureError) -> SigningKey {
        SigningKey(key: try Ed25519.Key.generate())
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
        let key = Ed25519.Key(takingOwnership: parsed)
        guard key.isEd25519 else {
            throw ResponseSignatureError(.malformedKey, "The private key is \(describeKeyType(parsed)), not Ed25519.")
        }
        self.key = key
    }

    /// A key from its 32-byte Ed25519 seed (RFC 8032's private key).
    /// - Throws: `ResponseSignatureError.Code.malformedKey` unless `raw` is 32 bytes.
    public init(rawRepresentation raw: [UInt8]) throws(ResponseSignatureError) {
        guard let key = Ed25519.Key.privateKey(raw: raw) else {
            throw ResponseSignatureError(.malformedKey, "An Ed25519 private key is 32 bytes; got \(raw.count).")
        }
        self.key = key
    }

    /// The key as unencrypted PKCS#8 PEM. Store it readable by its owner only.
    public var pemRepresentation: String {
        let pem = withMemoryBIO { bio in
            PEM_write_bio_PKCS8PrivateKey(bio, key.pointer, nil, nil, 0, nil, nil) == 1
        }
        guard let pem else { preconditionFailure("OpenSSL cannot write an Ed25519 key as PEM: \(drainOpenSSLErrors())") }
        return String(decoding: pem, as: UTF8.self)
    }

    /// The public half.
    public var verificationKey: VerificationKey { VerificationKey(validatedRaw: key.rawPublicKey) }

    /// The 64-byte Ed25519 signature of `message`.
    public func signature(for message: [UInt8]) throws(ResponseSignatureError) -> [UInt8] {
        try key.sign(message)
    }

    public var description: String { "SigningKey(Ed25519, public \(verificationKey.base64))" }
}
