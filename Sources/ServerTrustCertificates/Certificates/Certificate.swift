public import Foundation
package import COpenSSL
internal import CServerTrustShims

/// An X.509 certificate parsed by OpenSSL.
///
/// Owns exactly one `X509*`, freed in `deinit`. Instances are immutable: OpenSSL allows
/// concurrent read access to an `X509`, so the class is `@unchecked Sendable`.
public final class Certificate: @unchecked Sendable {
    /// The largest DER certificate accepted (a leaf with ten thousand SANs is ≈ 300 KB).
    public static let maximumDERSize = 1 << 20

    package let x509: OpaquePointer

    /// Adopts an `X509*` whose reference the caller hands over.
    package init(takingOwnership x509: OpaquePointer) {
        self.x509 = x509
    }

    /// Wraps a borrowed `X509*`, taking a reference of our own.
    package init(borrowing x509: OpaquePointer) {
        X509_up_ref(x509)
        self.x509 = x509
    }

    deinit { X509_free(x509) }

    /// Parses one DER-encoded certificate.
    ///
    /// - Throws: ``TrustError/Code/malformedCertificate`` if the bytes are empty, too large,
    ///   not a certificate, or followed by trailing data.
    public convenience init(derEncoded der: [UInt8]) throws {
        guard !der.isEmpty else {
            throw TrustError(.malformedCertificate, "The certificate data is empty.")
        }
        guard der.count <= Certificate.maximumDERSize else {
            throw TrustError(
                .malformedCertificate,
                "The certificate is \(der.count) bytes, over the \(Certificate.maximumDERSize)-byte limit.")
        }
        clearOpenSSLErrors()
        let parsed: (OpaquePointer?, Int) = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let x509 = d2i_X509(nil, &cursor, buffer.count)
            let consumed = cursor.map { $0 - buffer.baseAddress! } ?? 0
            return (x509, consumed)
        }
        guard let x509 = parsed.0 else {
            var evidence = TrustError.Evidence()
            evidence.openSSLErrors = drainOpenSSLErrors()
            throw TrustError(
                .malformedCertificate, "The data is not a DER-encoded X.509 certificate.", evidence: evidence)
        }
        guard parsed.1 == der.count else {
            X509_free(x509)
            throw TrustError(
                .malformedCertificate,
                "The DER certificate is followed by \(der.count - parsed.1) bytes of trailing data.")
        }
        self.init(takingOwnership: x509)
    }

    /// Parses a base64 string holding one DER certificate (the form pins are compiled in as).
    public convenience init(base64Encoded base64: String) throws {
        guard let data = Data(base64Encoded: base64, options: .ignoreUnknownCharacters), !data.isEmpty else {
            throw TrustError(.malformedCertificate, "The certificate is not valid base64.")
        }
        try self.init(derEncoded: [UInt8](data))
    }

    /// Parses a PEM text holding exactly one certificate.
    ///
    /// - Throws: ``TrustError/Code/malformedCertificate`` when there is no certificate, more
    ///   than one, or a block that does not decode.
    public convenience init(pemEncoded pem: String) throws {
        let blocks = try PEMBlocks.certificates(in: pem)
        guard blocks.count == 1 else {
            throw TrustError(
                .malformedCertificate,
                blocks.isEmpty
                    ? "No \"-----BEGIN CERTIFICATE-----\" block was found in the PEM text."
                    : "Expected one certificate in the PEM text, found \(blocks.count).")
        }
        try self.init(derEncoded: blocks[0])
    }

    /// Parses every certificate of a PEM bundle, in order.
    ///
    /// - Throws: ``TrustError/Code/malformedCertificate`` naming the position of the first block
    ///   that fails, or when the text holds no certificate at all.
    public static func certificates(pemBundle pem: String) throws -> [Certificate] {
        let blocks = try PEMBlocks.certificates(in: pem)
        guard !blocks.isEmpty else {
            throw TrustError(.malformedCertificate, "No \"-----BEGIN CERTIFICATE-----\" block was found in the PEM text.")
        }
        return try blocks.enumerated().map { index, der in
            do {
                return try Certificate(derEncoded: der)
            } catch let error as TrustError {
                throw TrustError(
                    error.code, "Certificate \(index + 1) of \(blocks.count) in the bundle: \(error.reason)",
                    evidence: error.evidence)
            }
        }
    }

    /// Reads certificates from a file: a PEM bundle, or a single DER certificate.
    public static func certificates(contentsOfFile path: String) throws -> [Certificate] {
        let bytes = try readFile(path)
        if let text = String(bytes: bytes, encoding: .utf8), text.contains("-----BEGIN") {
            do {
                return try certificates(pemBundle: text)
            } catch let error as TrustError {
                throw TrustError(error.code, "\(path): \(error.reason)", evidence: error.evidence)
            }
        }
        do {
            return [try Certificate(derEncoded: bytes)]
        } catch let error as TrustError {
            throw TrustError(error.code, "\(path): \(error.reason)", evidence: error.evidence)
        }
    }

    /// Calls `body` with the raw `X509*`; the pointer must not escape.
    package func withX509<Result>(_ body: (OpaquePointer) throws -> Result) rethrows -> Result {
        try body(x509)
    }
}

// MARK: - Encodings and fingerprints

extension Certificate {
    /// The DER encoding.
    public var derEncoded: [UInt8] {
        let length = i2d_X509(x509, nil)
        guard length > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        bytes.withUnsafeMutableBufferPointer { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            _ = i2d_X509(x509, &cursor)
        }
        return bytes
    }

    /// The PEM encoding.
    public var pemEncoded: String {
        let body = Data(derEncoded).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN CERTIFICATE-----\n\(body)\n-----END CERTIFICATE-----\n"
    }

    /// SHA-256 of the DER encoding (the certificate fingerprint).
    public var sha256Fingerprint: [UInt8] { sha256(derEncoded) }

    /// The DER encoding of the SubjectPublicKeyInfo.
    public var subjectPublicKeyInfoDER: [UInt8] {
        guard let spki = X509_get_X509_PUBKEY(x509) else { return [] }
        let length = i2d_X509_PUBKEY(spki, nil)
        guard length > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        bytes.withUnsafeMutableBufferPointer { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            _ = i2d_X509_PUBKEY(spki, &cursor)
        }
        return bytes
    }

    /// The public key.
    public var publicKey: PublicKey { PublicKey(validatedSPKI: subjectPublicKeyInfoDER) }

    /// The SPKI pin: `sha256/` + base64(SHA-256(SubjectPublicKeyInfo DER)), as HPKP and curl define it.
    public var spkiPin: Pin { Pin(sha256Digest: sha256(subjectPublicKeyInfoDER)) }
}

// MARK: - Names, dates, extensions

extension Certificate {
    /// The subject distinguished name in RFC 2253 form, e.g. `CN=api.example.com,O=Example`.
    public var subject: String { distinguishedName(X509_get_subject_name(x509)) }

    /// The issuer distinguished name in RFC 2253 form.
    public var issuer: String { distinguishedName(X509_get_issuer_name(x509)) }

    /// Whether subject and issuer are the same name (a root or a self-issued certificate).
    public var isSelfIssued: Bool { X509_NAME_cmp(X509_get_subject_name(x509), X509_get_issuer_name(x509)) == 0 }

    /// Whether this certificate names itself as its issuer (names and key identifiers) and its
    /// signature verifies with its own public key: proof that whoever holds that key chose its
    /// fields, which a copy signed with another key cannot give.
    package var isSelfSignedWithVerifiedSignature: Bool {
        clearOpenSSLErrors()
        defer { _ = drainOpenSSLErrors() }  // a failed verification leaves its reason on the queue
        return X509_self_signed(x509, 1) == 1
    }

    /// The serial number as upper-case hexadecimal.
    public var serialNumber: String {
        guard let serial = X509_get0_serialNumber(x509), let bn = ASN1_INTEGER_to_BN(serial, nil) else { return "" }
        defer { BN_free(bn) }
        guard let hex = BN_bn2hex(bn) else { return "" }
        defer { CRYPTO_free(hex, #fileID, #line) }
        return String(cString: hex)
    }

    /// The start of the validity period.
    public var notValidBefore: Date { asn1Date(X509_get0_notBefore(x509)) ?? .distantFuture }

    /// The end of the validity period.
    public var notValidAfter: Date { asn1Date(X509_get0_notAfter(x509)) ?? .distantPast }

    /// DNS names of the subjectAltName extension, as written in the certificate.
    public var dnsNames: [String] { subjectAlternativeNames().dns }

    /// IP addresses of the subjectAltName extension, in text form.
    public var ipAddresses: [String] { subjectAlternativeNames().ip }

    /// The signature algorithm, e.g. `ecdsa-with-SHA256` or `sha256WithRSAEncryption`.
    public var signatureAlgorithm: String {
        let nid = X509_get_signature_nid(x509)
        guard nid != NID_undef, let name = OBJ_nid2ln(nid) else { return "unknown" }
        return String(cString: name)
    }

    /// The key type, e.g. `RSA`, `EC P-256`, `Ed25519`.
    public var keyType: String { publicKey.keyType }

    /// The key size in bits.
    public var keySize: Int { publicKey.keySize }

    /// OCSP responder URLs from the Authority Information Access extension.
    public var ocspURLs: [String] {
        guard let stack = X509_get1_ocsp(x509) else { return [] }
        defer { X509_email_free(stack) }
        return (0..<CServerTrustShims_sk_OPENSSL_STRING_num(stack)).compactMap { index in
            CServerTrustShims_sk_OPENSSL_STRING_value(stack, index).map { String(cString: $0) }
        }
    }

    /// Whether the extension `oid` (dotted) is present and, if so, marked critical: nil when
    /// the certificate has none, or when `oid` is not a dotted OID. A certificate with the
    /// extension twice (which RFC 5280 forbids, and OpenSSL refuses to validate) reads as the
    /// first occurrence.
    package func extensionCriticality(oid: String) -> Bool? {
        guard let object = OBJ_txt2obj(oid, 1) else { return nil }
        defer { ASN1_OBJECT_free(object) }
        let index = X509_get_ext_by_OBJ(x509, object, -1)
        guard index >= 0, let ext = X509_get_ext(x509, index) else { return nil }
        return X509_EXTENSION_get_critical(ext) != 0
    }

    private func subjectAlternativeNames() -> (dns: [String], ip: [String]) {
        guard let raw = X509_get_ext_d2i(x509, NID_subject_alt_name, nil, nil) else { return ([], []) }
        let names = OpaquePointer(raw)
        defer { CServerTrustShims_GENERAL_NAMES_free(names) }
        var dns: [String] = []
        var ip: [String] = []
        for index in 0..<CServerTrustShims_sk_GENERAL_NAME_num(names) {
            guard let name = CServerTrustShims_sk_GENERAL_NAME_value(names, index) else { continue }
            switch name.pointee.type {
            case GEN_DNS:
                if let string = name.pointee.d.dNSName { dns.append(asn1StringText(string)) }
            case GEN_IPADD:
                if let string = name.pointee.d.iPAddress { ip.append(ipAddressText(string)) }
            default:
                continue
            }
        }
        return (dns, ip)
    }
}

extension Certificate: Hashable {
    public static func == (lhs: Certificate, rhs: Certificate) -> Bool {
        lhs === rhs || X509_cmp(lhs.x509, rhs.x509) == 0
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(sha256Fingerprint) }
}

extension Certificate: CustomStringConvertible {
    public var description: String { "Certificate(\(subject), \(spkiPin))" }
}

// MARK: - Helpers

package func distinguishedName(_ name: OpaquePointer?) -> String {
    guard let name else { return "" }
    let flags = CServerTrustShims_XN_FLAG_RFC2253_UTF8()
    let bytes = withMemoryBIO { bio in X509_NAME_print_ex(bio, name, 0, flags) >= 0 } ?? []
    return String(decoding: bytes, as: UTF8.self)
}

package func asn1Date<Time: OpenSSLObjectPointer>(_ time: Time?) -> Date? {
    guard let time else { return nil }
    var parts = tm()
    guard ASN1_TIME_to_tm(openSSLPointer(time.openSSLRaw), &parts) == 1 else { return nil }
    return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
}

/// Text of an ASN1_STRING with non-printable bytes escaped, so an embedded NUL cannot truncate
/// or disguise a name in a message.
package func asn1StringText<Pointer: OpenSSLObjectPointer>(_ pointer: Pointer) -> String {
    let string = pointer.openSSLRaw
    guard let data = ASN1_STRING_get0_data(openSSLPointer(string)) else { return "" }
    let bytes = UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(openSSLPointer(string))))
    var text = ""
    for byte in bytes {
        if byte >= 0x20 && byte < 0x7F {
            text.unicodeScalars.append(Unicode.Scalar(byte))
        } else {
            text += String(format: "\\x%02X", byte)
        }
    }
    return text
}

func ipAddressText<Pointer: OpenSSLObjectPointer>(_ pointer: Pointer) -> String {
    let string = pointer.openSSLRaw
    guard let data = ASN1_STRING_get0_data(openSSLPointer(string)) else { return "" }
    let count = Int(ASN1_STRING_length(openSSLPointer(string)))
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    switch count {
    case 4:
        return bytes.map(String.init).joined(separator: ".")
    case 16:
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let ok = bytes.withUnsafeBytes { inet_ntop(AF_INET6, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        return ok != nil ? decodeCString(buffer) : bytes.map { String(format: "%02x", $0) }.joined()
    default:
        return "<\(count)-byte address>"
    }
}

package func readFile(_ path: String) throws -> [UInt8] {
    guard let handle = FileHandle(forReadingAtPath: path) else {
        throw TrustError(.unreadableInput, "Cannot open \(path).")
    }
    defer { try? handle.close() }
    do {
        return [UInt8](try handle.readToEnd() ?? Data())
    } catch {
        throw TrustError(.unreadableInput, "Cannot read \(path): \(error.localizedDescription)")
    }
}
