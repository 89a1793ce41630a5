import Foundation
internal import COpenSSL
internal import CServerTrustShims

/// A client certificate and its private key, presented to servers that ask for one (mutual TLS).
///
/// Loaded and checked once, when the configuration is built: the certificate chain must parse,
/// the key must parse (decrypted with the passphrase when it is encrypted), and the key must be
/// the certificate's own (`X509_check_private_key`). Every problem is a `TrustError` with a
/// code naming it — `TrustError.Code.unreadableInput` (a missing file),
/// `TrustError.Code.malformedCertificate`, `TrustError.Code.malformedPrivateKey`,
/// `TrustError.Code.privateKeyPassphraseRequired`,
/// `TrustError.Code.privateKeyPassphraseIncorrect`, `TrustError.Code.privateKeyMismatch` —
/// so a bad identity fails at start-up rather than in the first handshake that needs it.
///
/// The key is held only as OpenSSL's parsed `EVP_PKEY`, owned by this object and freed in
/// `deinit`; the PEM text it came from is not kept, and a key file's bytes are wiped
/// (`OPENSSL_cleanse`) once parsed. ``description``, ``debugDescription`` and the mirror show the
/// certificate's subject and SPKI pin only, so logging an identity (or a configuration holding
/// one) never prints key material.
///
/// Immutable after `init`: OpenSSL only reads the certificate and key objects while installing
/// them on an `SSL_CTX`, which takes references of its own, hence `@unchecked Sendable`.
public final class ClientIdentity: @unchecked Sendable {
    /// The client certificate (the leaf).
    public let certificate: Certificate
    /// The certificates sent after the leaf, in order, so the server can build a path to the
    /// client CA it trusts. Empty when the server holds the intermediates itself.
    public let intermediates: [Certificate]
    /// The `EVP_PKEY*`, owned.
    private let privateKey: OpaquePointer

    /// Adopts `privateKey`, which the caller has checked is `certificate`'s key.
    private init(certificate: Certificate, intermediates: [Certificate], takingOwnershipOf privateKey: OpaquePointer) {
        self.certificate = certificate
        self.intermediates = intermediates
        self.privateKey = privateKey
    }

    deinit { EVP_PKEY_free(privateKey) }

    /// Loads an identity from PEM files, as curl's `--cert` and `--key`.
    ///
    /// - Parameters:
    ///   - certificateFile: the client certificate, then any intermediates (PEM), or one DER certificate.
    ///   - privateKeyFile: the private key as PEM (`PRIVATE KEY`, `ENCRYPTED PRIVATE KEY`,
    ///     `RSA PRIVATE KEY`, `EC PRIVATE KEY`, encrypted or not). Default nil: the key is in
    ///     `certificateFile`.
    ///   - passphrase: decrypts an encrypted key. Default nil: the key must not be encrypted.
    /// - Throws: `TrustError` with the code naming the problem (see the type's discussion).
    public convenience init(certificateFile: String, privateKeyFile: String? = nil, passphrase: String? = nil) throws {
        let chain = try Certificate.certificates(contentsOfFile: certificateFile)
        var keyBytes = try readSecretFile(privateKeyFile ?? certificateFile)
        defer { wipe(&keyBytes) }
        let key = try Self.parsePrivateKey(pem: keyBytes, passphrase: passphrase, source: privateKeyFile ?? certificateFile)
        try self.init(chain: chain, adoptingKey: key)
    }

    /// Makes an identity from PEM text: the certificate chain (leaf first) and the private key.
    ///
    /// The key text is the caller's to erase; this initialiser wipes its own copy once parsed.
    /// - Throws: `TrustError` with the code naming the problem (see the type's discussion).
    public convenience init(certificatePEM: String, privateKeyPEM: String, passphrase: String? = nil) throws {
        let chain = try Certificate.certificates(pemBundle: certificatePEM)
        var keyBytes = Array(privateKeyPEM.utf8)
        defer { wipe(&keyBytes) }
        let key = try Self.parsePrivateKey(pem: keyBytes, passphrase: passphrase, source: "the private key PEM")
        try self.init(chain: chain, adoptingKey: key)
    }

    /// Takes ownership of `key` and checks that it belongs to `chain`'s leaf; frees it on failure.
    convenience init(chain: [Certificate], adoptingKey key: OpaquePointer) throws {
        guard let leaf = chain.first else {
            EVP_PKEY_free(key)
            throw TrustError(.malformedCertificate, "The client identity holds no certificate.")
        }
        clearOpenSSLErrors()
        guard X509_check_private_key(leaf.x509, key) == 1 else {
            _ = drainOpenSSLErrors()  // OpenSSL's text ("key values mismatch") adds nothing to ours
            let keyPin = Self.publicKeyPin(of: key)
            EVP_PKEY_free(key)
            throw TrustError(
                .privateKeyMismatch,
                "The private key (public key \(keyPin.map(String.init(describing:)) ?? "unreadable")) is not the key of the client certificate \"\(leaf.subject)\" (\(leaf.spkiPin)); check that the key and certificate files belong together.")
        }
        self.init(certificate: leaf, intermediates: Array(chain.dropFirst()), takingOwnershipOf: key)
    }

    /// Calls `body` with the leaf's `X509*`, the intermediates' `X509*`s and the `EVP_PKEY*`.
    /// The pointers must not escape; OpenSSL functions that keep them take references of their own.
    ///
    /// Package access: raw OpenSSL pointers are not part of the public API.
    package func withUnsafeOpenSSLObjects<Result>(
        _ body: (_ certificate: OpaquePointer, _ intermediates: [OpaquePointer], _ privateKey: OpaquePointer) throws -> Result
    ) rethrows -> Result {
        try body(certificate.x509, intermediates.map(\.x509), privateKey)
    }

    /// The SPKI pin of a key's public half: what a mismatch message shows for the key side.
    static func publicKeyPin(of key: OpaquePointer) -> Pin? {
        let length = i2d_PUBKEY(key, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_PUBKEY(key, &cursor)
        }
        return written == length ? Pin(sha256Digest: sha256(der)) : nil
    }
}

extension ClientIdentity: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The certificate's subject and SPKI pin; never key material.
    public var description: String { "ClientIdentity(\(certificate.subject), \(certificate.spkiPin))" }

    /// ``description`` plus the intermediates' subjects and pins; never key material.
    public var debugDescription: String {
        guard !intermediates.isEmpty else { return description }
        return "ClientIdentity(\(certificate.subject), \(certificate.spkiPin), intermediates: [\(intermediates.map { "\($0.subject), \($0.spkiPin)" }.joined(separator: "; "))])"
    }

    /// The certificates only: `dump` and debuggers never reach the key.
    public var customMirror: Mirror {
        Mirror(self, children: ["certificate": certificate, "intermediates": intermediates], displayStyle: .class)
    }
}
