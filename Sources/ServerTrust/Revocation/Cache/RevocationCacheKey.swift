internal import COpenSSL
internal import CServerTrustShims

/// What a ``RevocationCache`` entry answers for.
///
/// OCSP entries are keyed by the certificate ID (RFC 6960 §4.1.1, with SHA-1 as RFC 5019
/// responders use): the SHA-1 of the issuer's name, the SHA-1 of its key, the serial number.
/// CRL entries are keyed by the issuer's name and key and the distribution point URL, so every
/// certificate of an issuer shares one CRL, and a CRL is never used for an issuer other than
/// the one it was verified against.
struct RevocationCacheKey: Hashable, Sendable, CustomStringConvertible {
    let method: RevocationMethod
    let material: [UInt8]

    /// The OCSP key of `certificate` issued by `issuer`; `nil` when OpenSSL cannot form the ID.
    static func ocsp(certificate: Certificate, issuer: Certificate) -> RevocationCacheKey? {
        guard let id = OCSP_cert_to_id(EVP_sha1(), certificate.x509, issuer.x509) else {
            _ = drainOpenSSLErrors()
            return nil
        }
        defer { OCSP_CERTID_free(id) }
        var nameHash: UnsafeRawPointer?
        var keyHash: UnsafeRawPointer?
        var serial: UnsafeRawPointer?
        guard CServerTrustShims_OCSP_id_get0_info(&nameHash, &keyHash, &serial, id) == 1, let nameHash, let keyHash, let serial else {
            return nil
        }
        // The serial's type distinguishes a negative serial (invalid, but parsed) from its absolute value.
        let serialType = ASN1_STRING_type(openSSLPointer(UnsafeMutableRawPointer(mutating: serial)))
        let material = bytes(of: nameHash) + bytes(of: keyHash) + [UInt8(truncatingIfNeeded: serialType)] + bytes(of: serial)
        return RevocationCacheKey(method: .ocsp, material: material)
    }

    /// The CRL key of the distribution point `url` for certificates issued by `issuer`.
    static func crl(issuer: Certificate, url: String) -> RevocationCacheKey {
        var nameDER: UnsafePointer<UInt8>?
        var nameLength = 0
        _ = X509_NAME_get0_der(X509_get_subject_name(issuer.x509), &nameDER, &nameLength)
        let name = nameDER.map { Array(UnsafeBufferPointer(start: $0, count: nameLength)) } ?? []
        return RevocationCacheKey(
            method: .crl, material: sha256(name) + sha256(issuer.subjectPublicKeyInfoDER) + Array(url.utf8))
    }

    /// The file an entry is kept in: method and the hex SHA-256 of the key, so no URL or name
    /// ever reaches the file system.
    var fileName: String {
        (method == .ocsp ? "ocsp-" : "crl-") + sha256(material).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined() + ".der"
    }

    var description: String { fileName }

    /// An ASN1_STRING's bytes (opaque from OpenSSL 4: OpenSSLObjectPointer).
    private static func bytes(of string: UnsafeRawPointer) -> [UInt8] {
        let raw = UnsafeMutableRawPointer(mutating: string)
        guard let data = ASN1_STRING_get0_data(openSSLPointer(raw)) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(openSSLPointer(raw)))))
    }
}
