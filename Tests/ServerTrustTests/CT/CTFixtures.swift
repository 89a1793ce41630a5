import Foundation
import ServerTrust
import ServerTrustTestSupport

/// The Certificate Transparency fixtures (Fixtures/CT, a folder per source, README there),
/// read from the source tree.
enum CTFixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/CT")

    /// `name` is a path under Fixtures/CT: `openssl/embeddedSCTs1.pem`, `conscrypt/files/cert.pem`.
    static func bytes(_ name: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: directory.appendingPathComponent(name))) }
    static func certificate(_ name: String) throws -> Certificate { try Certificate(pemEncoded: String(decoding: try bytes(name), as: UTF8.self)) }

    /// The log list naming Google's RFC 6962 test log, which signed every fixture SCT.
    static func logList() throws -> CTLogList { try CTLogList(json: try bytes("test-log-list/log_list.json")) }
    /// The test log's ID.
    static let testLogID = [UInt8](Data(base64Encoded: "3xwuwRUAlFJHqWFoMl3cXHlZ6PfG04j8AC4LvT9012Q=")!)

    /// A day after `sct` was issued: an evaluation time at which it is valid.
    static func justAfter(_ sct: SignedCertificateTimestamp) -> Date { sct.timestamp.addingTimeInterval(86_400) }
}

/// What the CT unit tests ask of TestSupport's `TestCTLog` (the one test log) beyond its own
/// API: a log of either key kind without a name, its entry in a `CTLogList`, and SCTs over a
/// certificate whose presented extensions or signature algorithm differ from what was signed.
extension TestCTLog {
    /// A log with a fresh key of `kind`, named by the list entry a test makes (``log(name:operator:state:)``).
    convenience init(_ kind: KeyKind) {
        do {
            try self.init(description: "Unit test log", operatorName: "Unit tests", keyKind: kind)
        } catch {
            preconditionFailure("a P-256 or RSA-2048 key makes a test log: \(error)")
        }
    }

    /// This log's entry in a list.
    func log(name: String, operator operatorName: String, state: CTLogList.State?) -> CTLogList.Log {
        CTLogList.Log(name: name, key: publicKeyDER, operatorName: operatorName, state: state, temporalInterval: nil, isTiled: false)
    }

    /// An SCT in its TLS encoding over `certificate` (x509_entry).
    ///
    /// - Parameters:
    ///   - signedExtensions: the extensions the signature covers.
    ///   - presentedExtensions: the extensions the SCT carries (default the signed ones).
    ///   - signatureAlgorithm: the SCT's signature byte (3 = ECDSA, 1 = RSA); default the key's.
    func sct(
        for certificate: Certificate, at timestamp: Date, signedExtensions: [UInt8] = [], presentedExtensions: [UInt8]? = nil,
        signatureAlgorithm: UInt8? = nil
    ) -> [UInt8] {
        let signed: [UInt8]
        do {
            signed = try certificateSCT(for: certificate.derEncoded, at: timestamp, extensions: signedExtensions)
        } catch {
            preconditionFailure("a test log signs: \(error)")
        }
        // version(1) log_id(32) timestamp(8) extensions<2> hash(1) signature(1) signature<2>
        let extensionsEnd = 43 + signedExtensions.count
        let presented = presentedExtensions ?? signedExtensions
        var sct = Array(signed[0..<41]) + [UInt8(presented.count >> 8), UInt8(presented.count & 0xFF)] + presented
        sct += signed[extensionsEnd...]
        if let signatureAlgorithm { sct[43 + presented.count + 1] = signatureAlgorithm }
        return sct
    }
}
