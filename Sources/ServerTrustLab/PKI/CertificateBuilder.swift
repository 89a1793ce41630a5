package import ServerTrust
internal import COpenSSL
internal import CServerTrustShims
internal import CServerTrustLabShims

/// Turns a ``CertificateSpec`` into a signed certificate with OpenSSL.
///
/// The certificate is built as an `X509*`, signed, DER-encoded and parsed back with
/// `Certificate.init(derEncoded:)`, so tests exercise exactly the public parsing path a
/// server's certificates take.
package enum CertificateBuilder {
    /// Signs `spec` with `issuerKey`. `issuer` is nil for a self-signed certificate.
    package static func build(_ spec: CertificateSpec, issuer: Certificate?, issuerKey: LabKey) throws -> Certificate {
        let x509 = try check(X509_new(), "X509_new")
        defer { X509_free(x509) }
        try check(X509_set_version(x509, 2), "X509_set_version")  // v3

        let serial = try OpenSSLEncoding.serialNumber(hex: spec.serialNumber)
        defer { ASN1_INTEGER_free(openSSLPointer(serial)) }
        try check(X509_set_serialNumber(x509, openSSLPointer(serial)), "X509_set_serialNumber")

        try withName(spec.subject) { try check(X509_set_subject_name(x509, $0), "X509_set_subject_name") }
        guard ASN1_TIME_set(X509_getm_notBefore(x509), OpenSSLEncoding.timeT(spec.notBefore)) != nil,
            ASN1_TIME_set(X509_getm_notAfter(x509), OpenSSLEncoding.timeT(spec.notAfter)) != nil
        else { throw LabPKIError("setting the validity period") }
        try check(X509_set_pubkey(x509, spec.subjectKey.pkey), "X509_set_pubkey")

        if let issuer {
            try withX509(issuer) { issuerX509 in
                try check(X509_set_issuer_name(x509, X509_get_subject_name(issuerX509)), "X509_set_issuer_name")
                try addExtensions(spec, to: x509, issuer: issuerX509)
            }
        } else {
            try check(X509_set_issuer_name(x509, X509_get_subject_name(x509)), "X509_set_issuer_name")
            try addExtensions(spec, to: x509, issuer: x509)
        }

        guard X509_sign(x509, issuerKey.pkey, issuerKey.signingDigest) > 0 else {
            throw LabPKIError("signing the certificate of \(spec.subject)")
        }
        return try Certificate(derEncoded: OpenSSLEncoding.der { i2d_X509(x509, $0) })
    }

    /// Calls `body` with an `X509*` parsed from `certificate` (ServerTrust keeps its own private).
    package static func withX509<T>(_ certificate: Certificate, _ body: (OpaquePointer) throws -> T) throws -> T {
        let der = certificate.derEncoded
        let x509 = try der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return try check(d2i_X509(nil, &cursor, buffer.count), "d2i_X509")
        }
        defer { X509_free(x509) }
        return try body(x509)
    }

    /// Calls `body` with an `X509_NAME*` holding `name`'s attributes.
    static func withName<T>(_ name: LabName, _ body: (OpaquePointer) throws -> T) throws -> T {
        let x509Name = try check(X509_NAME_new(), "X509_NAME_new")
        defer { X509_NAME_free(x509Name) }
        for attribute in name.attributes {
            let value = Array(attribute.value.utf8)
            try check(
                X509_NAME_add_entry_by_txt(x509Name, attribute.field, MBSTRING_UTF8, value, Int32(value.count), -1, 0),
                "adding \(attribute.field)=\(attribute.value) to a name")
        }
        return try body(x509Name)
    }

    private static func addExtensions(_ spec: CertificateSpec, to x509: OpaquePointer, issuer: OpaquePointer) throws {
        var ctx = X509V3_CTX()
        X509V3_set_ctx(&ctx, issuer, x509, nil, nil, 0)
        func add(_ nid: Int32, _ value: String) throws {
            let ext = try check(X509V3_EXT_conf_nid(nil, &ctx, nid, value), "building extension \(nid) = \(value)")
            defer { X509_EXTENSION_free(ext) }
            try check(X509_add_ext(x509, ext, -1), "adding extension \(value)")
        }

        if spec.isCA {
            try add(NID_basic_constraints, (spec.basicConstraintsCritical ? "critical," : "") + "CA:TRUE" + (spec.pathLength.map { ",pathlen:\($0)" } ?? ""))
        } else {
            try add(NID_basic_constraints, "CA:FALSE")
        }
        let keyUsage = spec.effectiveKeyUsage
        if !keyUsage.isEmpty { try add(NID_key_usage, "critical," + keyUsage.map(\.name).joined(separator: ",")) }
        if !spec.extendedKeyUsage.isEmpty {
            try add(NID_ext_key_usage, spec.extendedKeyUsage.map(\.name).joined(separator: ","))
        }
        if spec.includeKeyIdentifiers {
            try add(NID_subject_key_identifier, "hash")
            // The subject's own identifier must exist first: a self-signed certificate is its issuer.
            try add(NID_authority_key_identifier, "keyid:always")
        }
        if !spec.dnsNames.isEmpty || !spec.ipAddresses.isEmpty {
            try addSubjectAltName(dns: spec.dnsNames, ip: spec.ipAddresses, to: x509)
        }
        let constraints = spec.permittedDNSNames.map { "permitted;DNS:\($0)" } + spec.excludedDNSNames.map { "excluded;DNS:\($0)" }
        if !constraints.isEmpty { try add(NID_name_constraints, "critical," + constraints.joined(separator: ",")) }
        if let url = spec.ocspURL { try add(NID_info_access, "OCSP;URI:\(url)") }
        if let url = spec.crlURL { try add(NID_crl_distribution_points, "URI:\(url)") }
        // TLS feature status_request encodes as 30 03 02 01 05 (RFC 7633).
        if spec.mustStaple { try add(NID_tlsfeature, "status_request") }
        for custom in spec.customExtensions {
            // X509V3_EXT_conf's generic form: an OID and the value's DER as hex.
            let hex = custom.value.map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }.joined(separator: ":")
            let value = (custom.critical ? "critical," : "") + "DER:" + hex
            let ext = try check(X509V3_EXT_conf(nil, &ctx, custom.oid, value), "building extension \(custom.oid) = \(value)")
            defer { X509_EXTENSION_free(ext) }
            try check(X509_add_ext(x509, ext, -1), "adding extension \(custom.oid)")
        }
    }

    /// Built name by name rather than from a configuration string, so a DNS name may hold any
    /// bytes (a comma, an embedded NUL) a test wants to throw at the parser.
    private static func addSubjectAltName(dns: [String], ip: [String], to x509: OpaquePointer) throws {
        let names = try check(GENERAL_NAMES_new(), "GENERAL_NAMES_new")
        defer { CServerTrustShims_GENERAL_NAMES_free(names) }
        for name in dns {
            let bytes = Array(name.utf8)
            let ia5 = try check(ASN1_IA5STRING_new(), "ASN1_IA5STRING_new")
            guard ASN1_STRING_set(ia5, bytes, Int32(bytes.count)) == 1 else {
                ASN1_IA5STRING_free(ia5)
                throw LabPKIError("ASN1_STRING_set(\(name))")
            }
            try push(names, type: GEN_DNS, value: UnsafeMutableRawPointer(ia5))
        }
        for address in ip {
            guard let octets = a2i_IPADDRESS(address) else { throw LabPKIError("\"\(address)\" is not an IP address") }
            try push(names, type: GEN_IPADD, value: UnsafeMutableRawPointer(octets))
        }
        try check(X509_add1_ext_i2d(x509, NID_subject_alt_name, UnsafeMutableRawPointer(names), 0, UInt(X509V3_ADD_DEFAULT)), "adding subjectAltName")
    }

    /// Wraps `value` (whose ownership passes to the name) in a GENERAL_NAME pushed onto `names`.
    private static func push(_ names: OpaquePointer, type: Int32, value: UnsafeMutableRawPointer) throws {
        guard let name = GENERAL_NAME_new() else {
            ASN1_STRING_free(openSSLPointer(value))
            throw LabPKIError("GENERAL_NAME_new")
        }
        GENERAL_NAME_set0_value(name, type, value)
        guard CServerTrustLabShims_sk_GENERAL_NAME_push(names, name) > 0 else {
            GENERAL_NAME_free(name)
            throw LabPKIError("sk_GENERAL_NAME_push")
        }
    }
}
