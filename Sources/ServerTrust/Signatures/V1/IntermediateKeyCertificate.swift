public import Foundation

/// An intermediate Ed25519 key, its expiry date, and the root key's signature over both.
///
/// Responses are signed with short-lived intermediate keys so the root key can stay offline:
/// the root signs a new intermediate every few weeks (`servertrust keys issue-intermediate`),
/// and the client, which knows only the root, checks this certificate before it trusts a
/// response signature made by the intermediate.
///
/// Compact binary form, 113 bytes (base64: 152 characters), all integers big-endian:
///
/// | offset | length | field |
/// |---|---|---|
/// | 0 | 1 | format, `0x01` |
/// | 1 | 8 | root key ID: the first 8 bytes of SHA-256 over the root's raw public key |
/// | 9 | 32 | the intermediate's raw Ed25519 public key |
/// | 41 | 8 | expiry, seconds since 1970-01-01T00:00:00Z (unsigned) |
/// | 49 | 64 | the root's Ed25519 signature over `"ServerTrust-Intermediate-Key-v1" 0x00` followed by bytes 0–48 |
public struct IntermediateKeyCertificate: Hashable, Sendable, CustomStringConvertible {
    static let format: UInt8 = 1
    static let encodedLength = 113
    static let domain = Array("ServerTrust-Intermediate-Key-v1".utf8) + [0]
    static let pemLabel = "SERVERTRUST INTERMEDIATE KEY CERTIFICATE"
    /// 9999-12-31T23:59:59Z: later expiry dates are refused as nonsense.
    static let latestTime: Int64 = 253_402_300_799

    /// The intermediate key that signs responses.
    public let key: VerificationKey
    /// After this instant the intermediate signs nothing the client accepts.
    public var expires: Date { Date(timeIntervalSince1970: TimeInterval(expiresAt)) }
    /// ``expires`` in seconds since 1970.
    package let expiresAt: Int64
    /// The `VerificationKey.keyID` of the root that signed this certificate.
    package let rootKeyID: [UInt8]
    /// The root's signature.
    package let signature: [UInt8]

    /// The signed part: bytes 0–48.
    private var signedPart: [UInt8] {
        [Self.format] + rootKeyID + key.rawRepresentation + SignedFields.uint64(UInt64(expiresAt))
    }

    /// Signs `key` with `root`, valid until `expires`.
    ///
    /// - Throws: `ResponseSignatureError.Code.invalidConfiguration` for an expiry before 1970
    ///   or after 9999; `ResponseSignatureError.Code.openSSLFailure`.
    public static func issue(for key: VerificationKey, expires: Date, signedBy root: SigningKey) throws(ResponseSignatureError) -> IntermediateKeyCertificate {
        let seconds = expires.timeIntervalSince1970.rounded(.down)
        guard seconds >= 0, seconds <= TimeInterval(latestTime) else {
            throw ResponseSignatureError(.invalidConfiguration, "An intermediate key must expire between 1970 and 9999.")
        }
        let unsigned = IntermediateKeyCertificate(key: key, expiresAt: Int64(seconds), rootKeyID: root.verificationKey.keyID, signature: [])
        let signature = try root.signature(for: domain + unsigned.signedPart)
        return IntermediateKeyCertificate(key: key, expiresAt: unsigned.expiresAt, rootKeyID: unsigned.rootKeyID, signature: signature)
    }

    private init(key: VerificationKey, expiresAt: Int64, rootKeyID: [UInt8], signature: [UInt8]) {
        self.key = key
        self.expiresAt = expiresAt
        self.rootKeyID = rootKeyID
        self.signature = signature
    }

    /// Parses the 113-byte binary form. The root signature is not checked here: see
    /// ``isSigned(by:)``.
    /// - Throws: `ResponseSignatureError.Code.malformedIntermediateCertificate`.
    public init(encoded bytes: [UInt8]) throws(ResponseSignatureError) {
        guard bytes.count == Self.encodedLength else {
            throw ResponseSignatureError(
                .malformedIntermediateCertificate, "An intermediate key certificate is \(Self.encodedLength) bytes; got \(bytes.count).")
        }
        guard bytes[0] == Self.format else {
            throw ResponseSignatureError(.malformedIntermediateCertificate, "Unknown intermediate key certificate format \(bytes[0]).")
        }
        let expiresAt = SignedFields.readUInt64(bytes[41..<49])
        guard expiresAt <= UInt64(Self.latestTime) else {
            throw ResponseSignatureError(.malformedIntermediateCertificate, "The intermediate key certificate's expiry is after 9999.")
        }
        let key: VerificationKey
        do {
            key = try VerificationKey(rawRepresentation: Array(bytes[9..<41]))
        } catch {
            throw ResponseSignatureError(.malformedIntermediateCertificate, "The intermediate key is not an Ed25519 public key.")
        }
        self.init(key: key, expiresAt: Int64(expiresAt), rootKeyID: Array(bytes[1..<9]), signature: Array(bytes[49...]))
    }

    /// Parses base64 of the binary form.
    public init(base64 text: String) throws(ResponseSignatureError) {
        let trimmed = text.trimmingASCIIWhitespace()
        guard trimmed.utf8.count <= 1024, let bytes = StrictBase64.decode(trimmed.utf8) else {
            throw ResponseSignatureError(.malformedIntermediateCertificate, "The intermediate key certificate is not valid base64.")
        }
        try self.init(encoded: bytes)
    }

    /// Finds and parses the `SERVERTRUST INTERMEDIATE KEY CERTIFICATE` PEM block in `text`
    /// (the file `servertrust keys issue-intermediate` writes holds it after the private key).
    public init(pem text: String) throws(ResponseSignatureError) {
        let begin = "-----BEGIN \(Self.pemLabel)-----"
        let end = "-----END \(Self.pemLabel)-----"
        guard let start = text.range(of: begin), let stop = text.range(of: end, range: start.upperBound..<text.endIndex) else {
            throw ResponseSignatureError(.malformedIntermediateCertificate, "No \(Self.pemLabel) PEM block was found.")
        }
        let body = text[start.upperBound..<stop.lowerBound].split(whereSeparator: \.isNewline).map { $0.trimmingASCIIWhitespace() }.joined()
        try self.init(base64: body)
    }

    /// The 113-byte binary form.
    public var encoded: [UInt8] { signedPart + signature }

    /// Base64 of ``encoded``: the form the response header carries.
    public var base64: String { StrictBase64.encode(encoded) }

    /// A PEM block, lines of 64 characters.
    public var pemRepresentation: String {
        var lines = ["-----BEGIN \(Self.pemLabel)-----"]
        var rest = Substring(base64)
        while !rest.isEmpty {
            lines.append(String(rest.prefix(64)))
            rest = rest.dropFirst(64)
        }
        lines.append("-----END \(Self.pemLabel)-----")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Whether `root` signed this certificate (its key ID matches and the signature verifies).
    public func isSigned(by root: VerificationKey) -> Bool {
        rootKeyID == root.keyID && root.isValidSignature(signature, for: Self.domain + signedPart)
    }

    public var description: String {
        "IntermediateKeyCertificate(key \(key.base64), expires \(expires), root id \(hex(rootKeyID)))"
    }
}
