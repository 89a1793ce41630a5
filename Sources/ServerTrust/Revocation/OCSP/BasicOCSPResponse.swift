import Foundation
internal import COpenSSL
internal import CServerTrustShims

/// The body of a successful OCSP response (`BasicOCSPResponse`, RFC 6960 §4.2.1), unverified.
///
/// Owns exactly one `OCSP_BASICRESP*`. Immutable after parsing, and verification only reads
/// it, hence `@unchecked Sendable`.
final class BasicOCSPResponse: @unchecked Sendable {
    let pointer: OpaquePointer
    /// Whether the signature verified under a signer's key (by SubjectPublicKeyInfo DER): a
    /// cached response is verified again at every use, and the signature is the costly part.
    private let signatureMemo = Locked<[[UInt8]: Bool]>([:])

    init(takingOwnership pointer: OpaquePointer) { self.pointer = pointer }
    deinit { OCSP_BASICRESP_free(pointer) }

    /// `verify()`'s answer for `signer`, computed once per signer key: the bytes and the key
    /// determine it.
    func signatureVerifies(under signer: Certificate, _ verify: () -> Bool) -> Bool {
        let key = signer.subjectPublicKeyInfoDER
        if let known = signatureMemo.withLock({ $0[key] }) { return known }
        let verified = verify()
        signatureMemo.withLock { $0[key] = verified }
        return verified
    }

    var producedAt: Date? { asn1Date(OCSP_resp_get0_produced_at(pointer)) }

    /// The certificates the responder included (typically its own delegated certificate).
    var certificates: [Certificate] {
        guard let stack = OCSP_resp_get0_certs(pointer) else { return [] }
        return (0..<CServerTrustShims_sk_X509_num(stack)).compactMap { index in
            CServerTrustShims_sk_X509_value(stack, index).map { Certificate(borrowing: $0) }
        }
    }

    /// The single responses, in order.
    var singleResponses: [OpaquePointer] {
        (0..<OCSP_resp_count(pointer)).compactMap { OCSP_resp_get0(pointer, $0) }
    }

    /// Whether the responder ID (RFC 6960 §4.2.2.3) names `certificate`: by subject name, or by
    /// the SHA-1 of its public key bits.
    func responderIDMatches(_ certificate: Certificate) -> Bool {
        var keyHashPointer: UnsafeRawPointer?
        var name: OpaquePointer?
        guard CServerTrustShims_OCSP_resp_get0_id(pointer, &keyHashPointer, &name) == 1 else { return false }
        if let name {
            return X509_NAME_cmp(name, X509_get_subject_name(certificate.x509)) == 0
        }
        // An ASN1_OCTET_STRING, opaque from OpenSSL 4 (OpenSSLObjectPointer).
        guard let keyHash = keyHashPointer.map({ UnsafeMutableRawPointer(mutating: $0) }), let bits = X509_get0_pubkey_bitstr(certificate.x509),
            let expected = ASN1_STRING_get0_data(openSSLPointer(keyHash)), ASN1_STRING_length(openSSLPointer(keyHash)) == SHA_DIGEST_LENGTH,
            let keyData = ASN1_STRING_get0_data(bits)
        else { return false }
        var digest = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
        _ = SHA1(keyData, Int(ASN1_STRING_length(bits)), &digest)
        return digest.elementsEqual(UnsafeBufferPointer(start: expected, count: Int(SHA_DIGEST_LENGTH)))
    }

    /// The response-level extensions marked critical, as (NID, dotted OID).
    var criticalExtensions: [(nid: Int32, oid: String)] {
        (0..<OCSP_BASICRESP_get_ext_count(pointer)).compactMap { index in
            criticalExtension(OCSP_BASICRESP_get_ext(pointer, index))
        }
    }
}

/// The extensions of a single response marked critical, as (NID, dotted OID).
func criticalExtensions(ofSingleResponse single: OpaquePointer) -> [(nid: Int32, oid: String)] {
    (0..<OCSP_SINGLERESP_get_ext_count(single)).compactMap { index in
        criticalExtension(OCSP_SINGLERESP_get_ext(single, index))
    }
}

private func criticalExtension(_ extension: OpaquePointer?) -> (nid: Int32, oid: String)? {
    guard let `extension`, X509_EXTENSION_get_critical(`extension`) != 0 else { return nil }
    let object = X509_EXTENSION_get_object(`extension`)
    var buffer = [CChar](repeating: 0, count: 128)
    _ = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
    return (OBJ_obj2nid(object), decodeCString(buffer))
}
