import COpenSSL
import Foundation
import ServerTrust

/// The Certificate Transparency fixtures (Fixtures/CertificateTransparency, README there), read
/// from the source tree.
enum CTFixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/CertificateTransparency")

    static func bytes(_ name: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: directory.appendingPathComponent(name))) }
    static func certificate(_ name: String) throws -> Certificate { try Certificate(pemEncoded: String(decoding: try bytes(name), as: UTF8.self)) }

    /// The log list naming Google's RFC 6962 test log, which signed every fixture SCT.
    static func logList() throws -> CTLogList { try CTLogList(json: try bytes("log_list.json")) }
    /// The test log's ID.
    static let testLogID = [UInt8](Data(base64Encoded: "3xwuwRUAlFJHqWFoMl3cXHlZ6PfG04j8AC4LvT9012Q=")!)

    /// A day after `sct` was issued: an evaluation time at which it is valid.
    static func justAfter(_ sct: SignedCertificateTimestamp) -> Date { sct.timestamp.addingTimeInterval(86_400) }
}

/// A CT log made in the test: it signs SCTs over a certificate (the `x509_entry` of RFC 6962
/// §3.2, what TLS-extension and OCSP SCTs sign) with an ECDSA P-256 or RSA key, with any
/// extensions, so the tests can show OpenSSL's verification covers them.
final class CTFixtureLog: @unchecked Sendable {
    enum KeyType { case ecdsaP256, rsa2048 }

    private let key: OpaquePointer
    let keyType: KeyType
    /// SubjectPublicKeyInfo DER.
    let publicKey: [UInt8]

    deinit { EVP_PKEY_free(key) }

    init(_ type: KeyType) {
        keyType = type
        let context = EVP_PKEY_CTX_new_from_name(nil, type == .rsa2048 ? "RSA" : "EC", nil)!
        defer { EVP_PKEY_CTX_free(context) }
        precondition(EVP_PKEY_keygen_init(context) == 1)
        switch type {
        case .ecdsaP256: precondition(EVP_PKEY_CTX_set_group_name(context, "P-256") == 1)
        case .rsa2048: precondition(EVP_PKEY_CTX_set_rsa_keygen_bits(context, 2048) == 1)
        }
        var generated: OpaquePointer?
        precondition(EVP_PKEY_keygen(context, &generated) == 1)
        key = generated!
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_PUBKEY(key, &out)
        publicKey = Array(UnsafeBufferPointer(start: out!, count: Int(length)))
        CRYPTO_free(out, #fileID, #line)
    }

    var id: [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        _ = SHA256(publicKey, publicKey.count, &digest)
        return digest
    }

    func log(name: String, operator operatorName: String, state: CTLogList.State?) -> CTLogList.Log {
        CTLogList.Log(name: name, key: publicKey, operatorName: operatorName, state: state, temporalInterval: nil, isTiled: false)
    }

    /// An SCT in its TLS encoding over `certificate` (x509_entry).
    /// - Parameters:
    ///   - signedExtensions: the extensions the signature covers.
    ///   - presentedExtensions: the extensions the SCT carries (default the signed ones).
    ///   - signatureAlgorithm: the SCT's (hash 4 = SHA-256, signature 3 = ECDSA / 1 = RSA); default the key's.
    func sct(
        for certificate: Certificate, at timestamp: Date, signedExtensions: [UInt8] = [], presentedExtensions: [UInt8]? = nil,
        signatureAlgorithm: UInt8? = nil
    ) -> [UInt8] {
        let milliseconds = UInt64(timestamp.timeIntervalSince1970 * 1000)
        let der = certificate.derEncoded
        var signed: [UInt8] = [0, 0] + Self.u64(milliseconds) + [0, 0]
        signed += [UInt8(der.count >> 16 & 0xFF), UInt8(der.count >> 8 & 0xFF), UInt8(der.count & 0xFF)] + der
        signed += Self.u16(signedExtensions.count) + signedExtensions
        let signature = sign(signed)
        let extensions = presentedExtensions ?? signedExtensions
        var sct: [UInt8] = [0] + id + Self.u64(milliseconds) + Self.u16(extensions.count) + extensions
        sct += [4, signatureAlgorithm ?? (keyType == .rsa2048 ? 1 : 3)] + Self.u16(signature.count) + signature
        return sct
    }

    private func sign(_ message: [UInt8]) -> [UInt8] {
        let context = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(context) }
        precondition(EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1)
        var length = 0
        precondition(EVP_DigestSign(context, nil, &length, message, message.count) == 1)
        var signature = [UInt8](repeating: 0, count: length)
        precondition(EVP_DigestSign(context, &signature, &length, message, message.count) == 1)
        return Array(signature.prefix(length))
    }

    static func u16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
    static func u64(_ value: UInt64) -> [UInt8] { (0..<8).reversed().map { UInt8(value >> (UInt64($0) * 8) & 0xFF) } }
    /// A TLS SCT list (RFC 6962 §3.3) of `scts`.
    static func list(_ scts: [[UInt8]]) -> [UInt8] {
        let body = scts.flatMap { u16($0.count) + $0 }
        return u16(body.count) + body
    }
}
