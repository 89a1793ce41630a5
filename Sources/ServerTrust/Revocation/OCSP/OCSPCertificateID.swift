internal import COpenSSL

/// Whether a single response is about a given certificate (RFC 6960 §4.1.1 CertID).
///
/// The CertID is recomputed for the certificate and its issuer with the hash algorithm the
/// response's CertID names — SHA-1 (what RFC 5019 responders use) or SHA-2 — and compared
/// field by field (algorithm, issuer name hash, issuer key hash, serial number). Any other
/// algorithm (MD5, unknown OIDs) matches nothing.
struct OCSPCertificateID {
    let certificate: Certificate
    let issuer: Certificate

    func matches(_ single: OpaquePointer) -> Bool {
        guard let id = OCSP_SINGLERESP_get0_id(single) else { return false }
        var algorithm: OpaquePointer?
        guard OCSP_id_get0_info(nil, &algorithm, nil, nil, id) == 1, let algorithm,
            let digest = Self.digest(nid: OBJ_obj2nid(algorithm))
        else { return false }
        guard let expected = OCSP_cert_to_id(digest, certificate.x509, issuer.x509) else {
            _ = drainOpenSSLErrors()
            return false
        }
        defer { OCSP_CERTID_free(expected) }
        return OCSP_id_cmp(expected, id) == 0
    }

    private static func digest(nid: Int32) -> OpaquePointer? {
        switch nid {
        case NID_sha1: EVP_sha1()
        case NID_sha256: EVP_sha256()
        case NID_sha384: EVP_sha384()
        case NID_sha512: EVP_sha512()
        default: nil
        }
    }
}
