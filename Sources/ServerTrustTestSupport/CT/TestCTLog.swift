public import Foundation
import Synchronization
public import ServerTrustLab

/// A Certificate Transparency log in the test process: a key, a log ID, and RFC 6962 v1 SCTs
/// signed on demand — never a Merkle tree, since a TLS client only ever checks the promise.
///
/// ```swift
/// let log = try TestCTLog(description: "Test Log A", operatorName: "Operator A")
/// let sct = try log.certificateSCT(for: leaf.certificate.derEncoded, at: issued)
/// ```
///
/// SCTs are returned in their TLS encoding (RFC 6962 §3.2): `sct_version` v1, the 32-byte log
/// ID, the timestamp in milliseconds, `extensions<0..2^16-1>`, and a `digitally-signed` struct
/// (hash SHA-256, signature ECDSA or RSA, `signature<0..2^16-1>`). A ``Forgery`` makes one that
/// a correct verifier must refuse.
public final class TestCTLog: Sendable {
    /// The log's key type: the two RFC 6962 allows.
    public enum KeyKind: Sendable {
        /// ECDSA over P-256 (signature algorithm 3).
        case p256
        /// RSA with a 2048-bit modulus, PKCS#1 v1.5 (signature algorithm 1).
        case rsa2048
    }

    /// How an SCT is made wrong, for the tests that show a verifier refuses it.
    public enum Forgery: Sendable {
        /// Signed with another key; everything else, log ID included, names this log.
        case signedWith(LabKey)
        /// One bit of the signature flipped after signing.
        case flippedSignatureBit
    }

    /// The log's description, as a log list names it.
    public let description: String
    /// The name of the operator running the log.
    public let operatorName: String
    /// The key kind.
    public let keyKind: KeyKind
    /// The log's private key.
    public let key: LabKey
    /// The log's public key, DER SubjectPublicKeyInfo (a log list's `key`, base64).
    public let publicKeyDER: [UInt8]
    /// SHA-256 of ``publicKeyDER`` (a log list's `log_id`, base64).
    public let logID: [UInt8]

    /// A log with a fresh key.
    ///
    /// - Parameters:
    ///   - description: the log's name in a log list.
    ///   - operatorName: its operator's name; the policy counts distinct operators.
    ///   - keyKind: default P-256. Every RSA log gets a key of its own (generating one takes a
    ///     fraction of a second).
    public convenience init(description: String, operatorName: String, keyKind: KeyKind = .p256) throws {
        let key: LabKey
        switch keyKind {
        case .p256: key = .ecP256()
        case .rsa2048: key = .rsa(bits: 2048, variant: Self.nextRSAVariant.add(1, ordering: .relaxed).newValue)
        }
        try self.init(description: description, operatorName: operatorName, key: key)
    }

    /// A log signing with `key`, which must be ECDSA P-256 or RSA: two logs made with one key
    /// share a log ID, which is what a test of duplicate SCTs wants.
    public init(description: String, operatorName: String, key: LabKey) throws {
        switch key.algorithm {
        case .ecP256: keyKind = .p256
        case .rsa(bits: 2048): keyKind = .rsa2048
        default: throw LabPKIError("a CT log key is ECDSA P-256 or RSA-2048, not \(key.algorithm)")
        }
        self.description = description
        self.operatorName = operatorName
        self.key = key
        publicKeyDER = key.publicKey.subjectPublicKeyInfoDER
        logID = sha256(publicKeyDER)
    }

    /// An SCT for an `x509_entry`: the certificate as the server presents it, for delivery in
    /// the TLS extension or an OCSP response.
    ///
    /// - Parameters:
    ///   - certificateDER: the certificate, DER.
    ///   - at: the SCT's timestamp (milliseconds since 1970, rounded down).
    ///   - extensions: the SCT's `extensions` bytes (without their length). Default none.
    ///   - forgery: default none.
    public func certificateSCT(
        for certificateDER: [UInt8], at timestamp: Date, extensions: [UInt8] = [], forgery: Forgery? = nil
    ) throws -> [UInt8] {
        try sct(entryType: 0, entry: TLSEncoding.vector(certificateDER, lengthBytes: 3), at: timestamp, extensions: extensions, forgery: forgery)
    }

    /// An SCT for a `precert_entry`, as embedded in the final certificate.
    ///
    /// - Parameters:
    ///   - tbsWithoutPoison: the precertificate's TBSCertificate, DER, without the poison
    ///     extension — which is the final certificate's without the SCT list extension.
    ///   - issuerPublicKeyDER: the issuing CA's SubjectPublicKeyInfo, DER (its SHA-256 is the
    ///     `issuer_key_hash`).
    ///   - at: the SCT's timestamp.
    ///   - extensions: the SCT's `extensions` bytes. Default none.
    ///   - forgery: default none.
    public func precertificateSCT(
        tbsWithoutPoison: [UInt8], issuerPublicKeyDER: [UInt8], at timestamp: Date, extensions: [UInt8] = [],
        forgery: Forgery? = nil
    ) throws -> [UInt8] {
        let entry = sha256(issuerPublicKeyDER) + TLSEncoding.vector(tbsWithoutPoison, lengthBytes: 3)
        return try sct(entryType: 1, entry: entry, at: timestamp, extensions: extensions, forgery: forgery)
    }

    /// The static-ct-api `leaf_index` SCT extension (c2sp.org/static-ct-api): extension_type 0,
    /// then `extension_data<0..2^16-1>` holding the index as a 5-byte big-endian integer.
    /// `index` must be below 2^40.
    public static func leafIndexExtension(_ index: UInt64) -> [UInt8] {
        precondition(index < (UInt64(1) << 40), "a leaf_index is a 40-bit integer")
        return [0x00] + TLSEncoding.vector(TLSEncoding.integer(index, byteCount: 5), lengthBytes: 2)
    }

    /// The SCT's timestamp for `date`: milliseconds since 1970, rounded down.
    public static func timestamp(_ date: Date) -> UInt64 {
        UInt64(max(0, (date.timeIntervalSince1970 * 1000).rounded(.down)))
    }

    // MARK: - Signing

    private static let nextRSAVariant = Atomic<Int>(0x4354_0000)

    /// RFC 6962 §3.2: the signed struct, then the SCT around its signature.
    private func sct(entryType: UInt16, entry: [UInt8], at date: Date, extensions: [UInt8], forgery: Forgery?) throws -> [UInt8] {
        let version: [UInt8] = [0]  // v1
        let timestamp = TLSEncoding.integer(Self.timestamp(date), byteCount: 8)
        let extensionsVector = TLSEncoding.vector(extensions, lengthBytes: 2)
        let signed = version + [0] /* certificate_timestamp */ + timestamp
            + TLSEncoding.integer(UInt64(entryType), byteCount: 2) + entry + extensionsVector
        var signature: [UInt8]
        switch forgery {
        case .signedWith(let other): signature = try other.signature(over: signed)
        case .flippedSignatureBit, nil: signature = try key.signature(over: signed)
        }
        if case .flippedSignatureBit = forgery { signature[signature.count / 2] ^= 0x01 }
        let algorithms: [UInt8] = [4 /* sha256 */, keyKind == .p256 ? 3 /* ecdsa */ : 1 /* rsa */]
        return version + logID + timestamp + extensionsVector + algorithms + TLSEncoding.vector(signature, lengthBytes: 2)
    }
}
