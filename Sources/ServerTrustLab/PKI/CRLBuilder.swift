public import ServerTrust
public import Foundation
internal import COpenSSL

extension LabCA {
    /// A v2 CRL signed by this CA, DER-encoded.
    ///
    /// - Parameters:
    ///   - revoked: the entries. Default none.
    ///   - thisUpdate: default an hour ago.
    ///   - nextUpdate: default seven days from now; nil omits it.
    ///   - crlNumber: the cRLNumber extension. Default 1.
    public func makeCRLDER(
        revoked: [RevokedCertificate] = [],
        thisUpdate: Date = Date(timeIntervalSinceNow: -3600),
        nextUpdate: Date? = Date(timeIntervalSinceNow: 7 * 86400),
        crlNumber: Int = 1
    ) throws -> [UInt8] {
        let crl = try check(X509_CRL_new(), "X509_CRL_new")
        defer { X509_CRL_free(crl) }
        try check(X509_CRL_set_version(crl, 1), "X509_CRL_set_version")  // v2
        try setTime(thisUpdate) { X509_CRL_set1_lastUpdate(crl, openSSLPointer($0)) }
        if let nextUpdate { try setTime(nextUpdate) { X509_CRL_set1_nextUpdate(crl, openSSLPointer($0)) } }
        for entry in revoked { try add(entry, to: crl) }
        try check(X509_CRL_sort(crl), "X509_CRL_sort")

        try CertificateBuilder.withX509(certificate) { issuer in
            try check(X509_CRL_set_issuer_name(crl, X509_get_subject_name(issuer)), "X509_CRL_set_issuer_name")
            var ctx = X509V3_CTX()
            X509V3_set_ctx(&ctx, issuer, nil, nil, crl, 0)
            let aki = try check(X509V3_EXT_conf_nid(nil, &ctx, NID_authority_key_identifier, "keyid:always"), "CRL authorityKeyIdentifier")
            defer { X509_EXTENSION_free(aki) }
            try check(X509_CRL_add_ext(crl, aki, -1), "X509_CRL_add_ext")
        }
        let number = try check(ASN1_INTEGER_new(), "ASN1_INTEGER_new")
        defer { ASN1_INTEGER_free(number) }
        try check(ASN1_INTEGER_set(number, crlNumber), "ASN1_INTEGER_set")
        try check(X509_CRL_add1_ext_i2d(crl, NID_crl_number, number.openSSLRaw, 0, 0), "adding cRLNumber")

        guard X509_CRL_sign(crl, key.pkey, key.signingDigest) > 0 else { throw LabPKIError("signing the CRL of \(name)") }
        return try OpenSSLEncoding.der { i2d_X509_CRL(crl, $0) }
    }

    /// A v2 CRL signed by this CA, parsed by ServerTrust's `CertificateRevocationList.init(bytes:)`.
    ///
    /// Parameters and defaults as ``makeCRLDER(revoked:thisUpdate:nextUpdate:crlNumber:)``.
    public func makeCRL(
        revoked: [RevokedCertificate] = [],
        thisUpdate: Date = Date(timeIntervalSinceNow: -3600),
        nextUpdate: Date? = Date(timeIntervalSinceNow: 7 * 86400),
        crlNumber: Int = 1
    ) throws -> CertificateRevocationList {
        try CertificateRevocationList(
            bytes: makeCRLDER(revoked: revoked, thisUpdate: thisUpdate, nextUpdate: nextUpdate, crlNumber: crlNumber))
    }

    private func add(_ entry: RevokedCertificate, to crl: OpaquePointer) throws {
        let revoked = try check(X509_REVOKED_new(), "X509_REVOKED_new")
        var adopted = false
        defer { if !adopted { X509_REVOKED_free(revoked) } }
        let serial = try OpenSSLEncoding.serialNumber(hex: entry.serialNumber)
        defer { ASN1_INTEGER_free(openSSLPointer(serial)) }
        try check(X509_REVOKED_set_serialNumber(revoked, openSSLPointer(serial)), "X509_REVOKED_set_serialNumber")
        try setTime(entry.revocationDate) { X509_REVOKED_set_revocationDate(revoked, openSSLPointer($0)) }
        if let reason = entry.reason {
            let code = try check(ASN1_ENUMERATED_new(), "ASN1_ENUMERATED_new")
            defer { ASN1_ENUMERATED_free(code) }
            try check(ASN1_ENUMERATED_set(code, reason), "ASN1_ENUMERATED_set")
            try check(X509_REVOKED_add1_ext_i2d(revoked, NID_crl_reason, code.openSSLRaw, 0, 0), "adding CRLReason")
        }
        try check(X509_CRL_add0_revoked(crl, revoked), "X509_CRL_add0_revoked")
        adopted = true
    }

    /// `set` gets an `ASN1_TIME` as a raw pointer (opaque from OpenSSL 4: `OpenSSLObjectPointer`).
    private func setTime(_ date: Date, _ set: (UnsafeMutableRawPointer) -> Int32) throws {
        let time = try check(ASN1_TIME_set(nil, OpenSSLEncoding.timeT(date)), "ASN1_TIME_set")
        defer { ASN1_TIME_free(time) }
        try check(set(time.openSSLRaw), "setting a CRL time")
    }
}
