public import Foundation
internal import COpenSSL
internal import CServerTrustShims

/// One signed certificate timestamp (RFC 6962 §3.2): a log's promise that it has logged a
/// certificate, parsed but not yet verified.
///
/// A server delivers SCTs in three places (``Source``): embedded in its certificate (signed over
/// the precertificate), in the TLS `signed_certificate_timestamp` extension, or in the stapled
/// OCSP response (both signed over the certificate itself). Parsing is OpenSSL's (`o2i_SCT`);
/// verification against a log's key is `CTLogStore.verify(_:leaf:issuer:at:)`.
public struct SignedCertificateTimestamp: Hashable, Sendable, CustomStringConvertible {
    /// Where the server delivered an SCT, which decides what the log signed.
    public enum Source: String, Hashable, Sendable, CustomStringConvertible {
        /// In the leaf's SCT-list extension (1.3.6.1.4.1.11129.2.4.2), signed over the precertificate.
        case embedded
        /// In the TLS `signed_certificate_timestamp` extension, signed over the certificate.
        case tlsExtension
        /// In the stapled OCSP response's single-response extension (1.3.6.1.4.1.11129.2.4.5),
        /// signed over the certificate.
        case ocspStaple

        public var description: String { rawValue }
    }

    /// The SCT version; 0 is v1, the only version RFC 6962 defines.
    public let version: Int
    /// The log's ID: the SHA-256 of its public key (SubjectPublicKeyInfo DER), 32 bytes.
    public let logID: [UInt8]
    /// When the log issued the SCT, in milliseconds since the epoch, as signed.
    public let timestampMilliseconds: UInt64
    /// The SCT's extensions, signed with it: the static-ct-api logs (Sunlight, TesseraCT) put
    /// a `leaf_index` here; empty for most RFC 6962 logs.
    package let extensions: [UInt8]
    /// The log's signature (the `digitally-signed` body, DER for ECDSA).
    package let signature: [UInt8]
    /// The signature algorithm by OpenSSL's name (`ecdsa-with-SHA256`,
    /// `sha256WithRSAEncryption`), or nil for a pair RFC 6962 does not allow.
    public let signatureAlgorithm: String?
    /// Where it was delivered.
    public let source: Source
    /// The SCT in its TLS encoding (`i2o_SCT`), what `CTLogStore` verifies.
    package let encoded: [UInt8]

    /// The largest SCT list accepted: a TLS extension or an X.509 extension is at most 64 KiB.
    package static let maximumListSize = 1 << 16

    /// When the log issued the SCT.
    public var timestamp: Date { Date(timeIntervalSince1970: TimeInterval(timestampMilliseconds) / 1000) }

    /// The log ID in base64, as log lists spell it.
    public var logIDBase64: String { Data(logID).base64EncodedString() }

    public var description: String {
        "SCT(\(source), log \(logIDBase64), \(timestamp.formatted(.iso8601)))"
    }

    /// Parses one SCT in its TLS encoding (RFC 6962 §3.2, `SignedCertificateTimestamp`).
    ///
    /// - Parameters:
    ///   - bytes: the SCT, as `i2o_SCT` writes it and `HandshakeEvidence` carries it.
    ///   - source: where the server delivered it.
    /// - Throws: `TrustError.Code.unreadableInput` when the bytes are not one whole SCT.
    package init(tlsEncoded bytes: [UInt8], source: Source) throws {
        guard !bytes.isEmpty, bytes.count <= Self.maximumListSize else {
            throw TrustError(.unreadableInput, "An SCT is 1 to \(Self.maximumListSize) bytes, not \(bytes.count).")
        }
        clearOpenSSLErrors()
        let parsed: (OpaquePointer?, Int) = bytes.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let sct = o2i_SCT(nil, &cursor, buffer.count)
            return (sct, cursor.map { $0 - buffer.baseAddress! } ?? 0)
        }
        guard let sct = parsed.0 else {
            var evidence = TrustError.Evidence()
            evidence.openSSLErrors = drainOpenSSLErrors()
            throw TrustError(.unreadableInput, "The \(source) data is not a signed certificate timestamp (RFC 6962 §3.2).", evidence: evidence)
        }
        defer { SCT_free(sct) }
        guard parsed.1 == bytes.count else {
            throw TrustError(.unreadableInput, "The \(source) SCT is followed by \(bytes.count - parsed.1) bytes of trailing data.")
        }
        try self.init(sct, source: source)
    }

    /// Reads the fields of a parsed `SCT*` (borrowed).
    init(_ sct: OpaquePointer, source: Source) throws {
        func bytes(_ get: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>) -> Int) -> [UInt8] {
            var pointer: UnsafeMutablePointer<UInt8>?
            let count = get(&pointer)
            guard count > 0, let pointer else { return [] }
            return Array(UnsafeBufferPointer(start: pointer, count: count))
        }
        version = Int(SCT_get_version(sct).rawValue)
        logID = bytes { SCT_get0_log_id(sct, $0) }
        timestampMilliseconds = SCT_get_timestamp(sct)
        extensions = bytes { SCT_get0_extensions(sct, $0) }
        signature = bytes { SCT_get0_signature(sct, $0) }
        let nid = SCT_get_signature_nid(sct)
        signatureAlgorithm = nid == NID_undef ? nil : OBJ_nid2ln(nid).map { String(cString: $0) }
        self.source = source
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2o_SCT(sct, &out)
        guard length > 0, let out else {
            throw TrustError(.unreadableInput, "The \(source) SCT cannot be encoded again (unknown SCT version \(version)).")
        }
        defer { CRYPTO_free(out, #fileID, #line) }
        encoded = Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// Parses an SCT list in its TLS encoding (`SignedCertificateTimestampList`, RFC 6962
    /// §3.3): a 16-bit length, then each SCT with its own 16-bit length.
    ///
    /// - Parameters:
    ///   - bytes: the list, as a TLS extension carries it.
    ///   - source: where the server delivered it.
    /// - Throws: `TrustError.Code.unreadableInput` when the list does not parse, is empty, or
    ///   has trailing data.
    package static func list(tlsEncoded bytes: [UInt8], source: Source) throws -> [SignedCertificateTimestamp] {
        guard !bytes.isEmpty, bytes.count <= maximumListSize + 2 else {
            throw TrustError(.unreadableInput, "An SCT list is 1 to \(maximumListSize + 2) bytes, not \(bytes.count).")
        }
        clearOpenSSLErrors()
        let parsed: (OpaquePointer?, Int) = bytes.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let list = o2i_SCT_LIST(nil, &cursor, buffer.count)
            return (list, cursor.map { $0 - buffer.baseAddress! } ?? 0)
        }
        guard let list = parsed.0 else {
            var evidence = TrustError.Evidence()
            evidence.openSSLErrors = drainOpenSSLErrors()
            throw TrustError(.unreadableInput, "The \(source) data is not an SCT list (RFC 6962 §3.3).", evidence: evidence)
        }
        defer { SCT_LIST_free(list) }
        guard parsed.1 == bytes.count else {
            throw TrustError(.unreadableInput, "The \(source) SCT list is followed by \(bytes.count - parsed.1) bytes of trailing data.")
        }
        return try elements(of: list, source: source)
    }

    /// The SCTs embedded in `certificate` (its SCT-list extension, 1.3.6.1.4.1.11129.2.4.2);
    /// empty when it has none.
    ///
    /// - Throws: `TrustError.Code.malformedCertificate` when the extension appears twice or
    ///   does not parse: a certificate that garbles its own SCTs is refused, not read as
    ///   having none.
    package static func embedded(in certificate: Certificate) throws -> [SignedCertificateTimestamp] {
        try certificate.withX509 { x509 in
            clearOpenSSLErrors()
            var critical: Int32 = 0
            guard let raw = X509_get_ext_d2i(x509, NID_ct_precert_scts, &critical, nil) else {
                if critical == -1 { return [] }
                var evidence = TrustError.Evidence()
                evidence.openSSLErrors = drainOpenSSLErrors()
                throw TrustError(
                    .malformedCertificate,
                    critical == -2
                        ? "The certificate \(certificate.subject) has two SCT-list extensions."
                        : "The SCT-list extension of \(certificate.subject) does not parse.",
                    evidence: evidence)
            }
            let list = OpaquePointer(raw)
            defer { SCT_LIST_free(list) }
            return try elements(of: list, source: .embedded)
        }
    }

    /// The SCTs in a stapled OCSP response's single responses (extension
    /// 1.3.6.1.4.1.11129.2.4.5); empty when there are none or the response is not successful.
    ///
    /// Every single response is read: an SCT is signed over the certificate it is for, so one
    /// meant for another certificate fails verification and is never counted.
    ///
    /// - Throws: `TrustError.Code.malformedOCSPResponse` when the response, or an SCT
    ///   extension in it, does not parse.
    package static func stapled(inOCSPResponse der: [UInt8]) throws -> [SignedCertificateTimestamp] {
        let response = try OCSPResponse(derEncoded: der)
        guard let basic = response.basic?.pointer else { return [] }
        var found: [SignedCertificateTimestamp] = []
        for index in 0..<OCSP_resp_count(basic) {
            guard let single = OCSP_resp_get0(basic, index) else { continue }
            clearOpenSSLErrors()
            var critical: Int32 = 0
            guard let raw = OCSP_SINGLERESP_get1_ext_d2i(single, NID_ct_cert_scts, &critical, nil) else {
                if critical == -1 { continue }
                var evidence = TrustError.Evidence()
                evidence.openSSLErrors = drainOpenSSLErrors()
                throw TrustError(.malformedOCSPResponse, "The stapled OCSP response's SCT extension does not parse.", evidence: evidence)
            }
            let list = OpaquePointer(raw)
            defer { SCT_LIST_free(list) }
            found += try elements(of: list, source: .ocspStaple)
        }
        return found
    }

    private static func elements(of list: OpaquePointer, source: Source) throws -> [SignedCertificateTimestamp] {
        try (0..<CServerTrustShims_sk_SCT_num(list)).map { index in
            guard let sct = CServerTrustShims_sk_SCT_value(list, index) else {
                throw TrustError(.unreadableInput, "The \(source) SCT list has an empty entry.")
            }
            return try SignedCertificateTimestamp(sct, source: source)
        }
    }
}
