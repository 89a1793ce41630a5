internal import COpenSSL

/// An Ed25519 public key: a signed-response root compiled into the client, or an intermediate
/// key taken from an `IntermediateKeyCertificate`.
///
/// The v1 format's view of a ``SignaturePublicKey``: Ed25519 only, compared by its raw bytes and
/// named by a key ID, while every signature check goes through ``publicKey``, the package's one
/// verifier. Written as base64 of its 32 raw bytes (the form `servertrust keys root-public
/// --swift` prints); base64 DER SubjectPublicKeyInfo and PEM `PUBLIC KEY` are accepted too, so
/// `openssl pkey -pubout` output can be pasted as is.
public struct VerificationKey: Hashable, Sendable, CustomStringConvertible {
    /// The 32 raw public-key bytes (RFC 8032).
    public let rawRepresentation: [UInt8]
    /// The same key as RFC 9421 and the TUF client use it (``SignatureAlgorithm/ed25519``).
    public let publicKey: SignaturePublicKey

    /// An Ed25519 signature is 64 bytes.
    package static let signatureLength = 64

    /// The public half of an Ed25519 key this package made or read.
    package init(ed25519 publicKey: SignaturePublicKey) {
        guard let raw = publicKey.ed25519RawRepresentation else { preconditionFailure("not an Ed25519 public key") }
        rawRepresentation = raw
        self.publicKey = publicKey
    }

    /// A key from its 32 raw bytes.
    /// - Throws: ``ResponseSignatureError/Code/malformedKey`` unless `raw` is 32 bytes.
    public init(rawRepresentation raw: [UInt8]) throws(ResponseSignatureError) {
        guard raw.count == 32, let key = try? SignaturePublicKey(ed25519RawRepresentation: raw) else {
            throw ResponseSignatureError(.malformedKey, "An Ed25519 public key is 32 bytes; got \(raw.count).")
        }
        rawRepresentation = raw
        publicKey = key
    }

    /// A key from a DER SubjectPublicKeyInfo.
    /// - Throws: ``ResponseSignatureError/Code/malformedKey`` for bad DER, trailing bytes, or a
    ///   key that is not Ed25519.
    public init(subjectPublicKeyInfoDER der: [UInt8]) throws(ResponseSignatureError) {
        let parsed: (key: OpaquePointer, consumed: Int)? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let key = d2i_PUBKEY(nil, &cursor, buffer.count), let cursor, let base = buffer.baseAddress else { return nil }
            return (key, cursor - base)
        }
        guard let parsed else {
            _ = drainOpenSSLErrors()
            throw ResponseSignatureError(.malformedKey, "The data is not a DER SubjectPublicKeyInfo.")
        }
        defer { EVP_PKEY_free(parsed.key) }
        guard parsed.consumed == der.count else {
            throw ResponseSignatureError(.malformedKey, "The SubjectPublicKeyInfo is followed by \(der.count - parsed.consumed) bytes.")
        }
        guard EVP_PKEY_get_base_id(parsed.key) == EVP_PKEY_ED25519, let raw = SignaturePublicKey.ed25519RawRepresentation(of: parsed.key) else {
            throw ResponseSignatureError(.malformedKey, "The public key is \(describeKeyType(parsed.key)), not Ed25519.")
        }
        try self.init(rawRepresentation: raw)
    }

    /// A key from base64 of its 32 raw bytes, base64 of a DER SubjectPublicKeyInfo, or a PEM
    /// `PUBLIC KEY` block.
    /// - Throws: ``ResponseSignatureError/Code/malformedKey``.
    public init(base64 text: String) throws(ResponseSignatureError) {
        let body = text.split(whereSeparator: \.isNewline)
            .map { $0.trimmingASCIIWhitespace() }
            .filter { !$0.hasPrefix("-----") }
            .joined()
        guard body.utf8.count <= 4096, let bytes = StrictBase64.decode(body.utf8) else {
            throw ResponseSignatureError(.malformedKey, "The Ed25519 public key is not valid base64 (standard alphabet, = padding).")
        }
        if bytes.count == 32 {
            try self.init(rawRepresentation: bytes)
        } else if bytes.first == 0x30 {
            try self.init(subjectPublicKeyInfoDER: bytes)
        } else {
            throw ResponseSignatureError(
                .malformedKey, "The key decodes to \(bytes.count) bytes: neither a raw Ed25519 public key (32 bytes) nor a DER SubjectPublicKeyInfo.")
        }
    }

    /// Base64 of the 32 raw bytes: the form to compile into a client.
    public var base64: String { StrictBase64.encode(rawRepresentation) }

    /// The key as a DER SubjectPublicKeyInfo.
    public var subjectPublicKeyInfoDER: [UInt8] {
        // id-Ed25519 (RFC 8410): SEQUENCE { SEQUENCE { OID 1.3.101.112 } BIT STRING }.
        [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00] + rawRepresentation
    }

    /// The first 8 bytes of SHA-256 over the raw key: how an intermediate certificate names the
    /// root that signed it.
    public var keyID: [UInt8] { Array(sha256(rawRepresentation).prefix(8)) }

    /// ``keyID`` in lowercase hex, as failure messages show it.
    public var keyIDHex: String { hex(keyID) }

    /// Whether `signature` is this key's Ed25519 signature of `message`.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        publicKey.isValidSignature(signature, for: message, algorithm: .ed25519)
    }

    public static func == (lhs: VerificationKey, rhs: VerificationKey) -> Bool { lhs.rawRepresentation == rhs.rawRepresentation }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawRepresentation) }

    public var description: String { "VerificationKey(Ed25519 \(base64), id \(keyIDHex))" }
}

package func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
}

extension StringProtocol {
    /// Without leading and trailing spaces, tabs and line breaks.
    package func trimmingASCIIWhitespace() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0.isNewline }
        let text = Substring(self)
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else { return "" }
        return text[first...last]
    }
}
