import COpenSSL
import Foundation
import ServerTrust
import ServerTrustTestSupport

/// OpenSSL's own CT verifier (`SCT_validate`), as the independent judge of the SCTs the test
/// logs make: a log whose SCTs OpenSSL accepts signs exactly the RFC 6962 structures.
enum OpenSSLSCTValidation {
    /// OpenSSL's verdict on one SCT (TLS encoding) from `source` about `certificate`.
    static func status(
        of sct: [UInt8], source: sct_source_t, certificate: Certificate, issuer: Certificate, logs: [TestCTLog], at time: Date
    ) throws -> sct_validation_status_t {
        let parsed = try sct.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return try unwrap(o2i_SCT(nil, &cursor, buffer.count), "o2i_SCT")
        }
        defer { SCT_free(parsed) }
        guard SCT_set_source(parsed, source) == 1 else { throw Failure("SCT_set_source") }
        return try validate([parsed], certificate: certificate, issuer: issuer, logKeys: logs.map(\.publicKeyDER), at: time)[0]
    }

    /// OpenSSL's verdicts on the SCTs of a `SignedCertificateTimestampList` from `source`; nil
    /// when OpenSSL cannot decode the list.
    static func statuses(
        ofList list: [UInt8], source: sct_source_t, certificate: Certificate, issuer: Certificate, logKeys: [[UInt8]], at time: Date
    ) throws -> [sct_validation_status_t]? {
        let parsed = list.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return o2i_SCT_LIST(nil, &cursor, buffer.count)
        }
        guard let parsed else { return nil }
        defer { SCT_LIST_free(parsed) }
        let scts = (0..<OPENSSL_sk_num(parsed)).map { OpaquePointer(OPENSSL_sk_value(parsed, $0)!) }
        for sct in scts { guard SCT_set_source(sct, source) == 1 else { throw Failure("SCT_set_source") } }
        return try validate(scts, certificate: certificate, issuer: issuer, logKeys: logKeys, at: time)
    }

    /// OpenSSL's verdicts on the SCTs of the first single response of a DER OCSP response; nil
    /// when OpenSSL cannot decode the response.
    static func statuses(
        ofOCSPResponse der: [UInt8], certificate: Certificate, issuer: Certificate, logKeys: [[UInt8]], at time: Date
    ) throws -> [sct_validation_status_t]? {
        let response = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_OCSP_RESPONSE(nil, &cursor, buffer.count)
        }
        guard let response else { return nil }
        defer { OCSP_RESPONSE_free(response) }
        guard let basic = OCSP_response_get1_basic(response) else { return nil }
        defer { OCSP_BASICRESP_free(basic) }
        guard let single = OCSP_resp_get0(basic, 0) else { return nil }
        guard let raw = OCSP_SINGLERESP_get1_ext_d2i(single, NID_ct_cert_scts, nil, nil) else { return [] }
        let list = OpaquePointer(raw)
        defer { SCT_LIST_free(list) }
        let scts = (0..<OPENSSL_sk_num(list)).map { OpaquePointer(OPENSSL_sk_value(list, $0)!) }
        return try validate(scts, certificate: certificate, issuer: issuer, logKeys: logKeys, at: time)
    }

    /// OpenSSL's verdicts on the SCTs embedded in `certificate`, as OpenSSL itself extracts them.
    static func embeddedStatuses(
        certificate: Certificate, issuer: Certificate, logs: [TestCTLog], at time: Date
    ) throws -> [sct_validation_status_t] {
        try embeddedStatuses(certificate: certificate, issuer: issuer, logKeys: logs.map(\.publicKeyDER), at: time)
    }

    static func embeddedStatuses(
        certificate: Certificate, issuer: Certificate, logKeys: [[UInt8]], at time: Date
    ) throws -> [sct_validation_status_t] {
        try withX509(certificate) { x509 in
            let list = OpaquePointer(try unwrap(X509_get_ext_d2i(x509, NID_ct_precert_scts, nil, nil), "X509_get_ext_d2i(SCT list)"))
            defer { SCT_LIST_free(list) }
            let scts = (0..<OPENSSL_sk_num(list)).map { OpaquePointer(OPENSSL_sk_value(list, $0)!) }
            return try validate(scts, certificate: certificate, issuer: issuer, logKeys: logKeys, at: time)
        }
    }

    /// Whether `certificate` has the embedded SCT list extension.
    static func hasEmbeddedSCTs(_ certificate: Certificate) throws -> Bool {
        try withX509(certificate) { X509_get_ext_by_NID($0, NID_ct_precert_scts, -1) >= 0 }
    }

    /// The TBSCertificate of `certificate` without the extension `nid`, as OpenSSL re-encodes it
    /// (`X509_delete_ext`, `i2d_re_X509_tbs`): its own reconstruction of a precertificate.
    static func tbs(of certificate: Certificate, removing nid: Int32) throws -> [UInt8] {
        try withX509(certificate) { x509 in
            let index = X509_get_ext_by_NID(x509, nid, -1)
            guard index >= 0, let removed = X509_delete_ext(x509, index) else { throw Failure("extension \(nid) not found") }
            X509_EXTENSION_free(removed)
            let length = i2d_re_X509_tbs(x509, nil)
            var bytes = [UInt8](repeating: 0, count: Int(length))
            _ = bytes.withUnsafeMutableBufferPointer { buffer in
                var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
                return i2d_re_X509_tbs(x509, &cursor)
            }
            return bytes
        }
    }

    /// An OpenSSL CT log file (`CTLOG_STORE_load_file`) naming `logs`.
    static func logFile(_ logs: [TestCTLog]) -> String { logFile(keys: logs.map(\.publicKeyDER)) }

    /// An OpenSSL CT log file naming the logs of these SubjectPublicKeyInfo DER keys.
    static func logFile(keys: [[UInt8]]) -> String {
        let names = keys.indices.map { "log\($0)" }
        return "enabled_logs = \(names.joined(separator: ","))\n"
            + zip(names, keys).map { "[\($0)]\ndescription = \($0)\nkey = \(Data($1).base64EncodedString())\n" }.joined()
    }

    private static func validate(
        _ scts: [OpaquePointer], certificate: Certificate, issuer: Certificate, logKeys: [[UInt8]], at time: Date
    ) throws -> [sct_validation_status_t] {
        let store = try unwrap(CTLOG_STORE_new(), "CTLOG_STORE_new")
        defer { CTLOG_STORE_free(store) }
        let path = try LabPKI.writeTemporaryFile(Array(logFile(keys: logKeys).utf8), name: "ct_log_list.cnf")
        defer { LabPKI.removeTemporaryFile(path) }
        guard CTLOG_STORE_load_file(store, path) == 1 else { throw Failure("CTLOG_STORE_load_file") }
        let context = try unwrap(CT_POLICY_EVAL_CTX_new(), "CT_POLICY_EVAL_CTX_new")
        defer { CT_POLICY_EVAL_CTX_free(context) }
        return try withX509(certificate) { leaf in
            try withX509(issuer) { issuer in
                guard CT_POLICY_EVAL_CTX_set1_cert(context, leaf) == 1, CT_POLICY_EVAL_CTX_set1_issuer(context, issuer) == 1 else {
                    throw Failure("CT_POLICY_EVAL_CTX_set1_cert/issuer")
                }
                CT_POLICY_EVAL_CTX_set_shared_CTLOG_STORE(context, store)
                CT_POLICY_EVAL_CTX_set_time(context, TestCTLog.timestamp(time))
                return scts.map { sct in
                    _ = SCT_validate(sct, context)
                    return SCT_get_validation_status(sct)
                }
            }
        }
    }

    private static func withX509<T>(_ certificate: Certificate, _ body: (OpaquePointer) throws -> T) throws -> T {
        let der = certificate.derEncoded
        let x509 = try der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return try unwrap(d2i_X509(nil, &cursor, buffer.count), "d2i_X509")
        }
        defer { X509_free(x509) }
        return try body(x509)
    }

    private static func unwrap<T>(_ value: T?, _ what: String) throws -> T {
        guard let value else { throw Failure(what) }
        return value
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ what: String) { description = "\(what) failed" }
    }
}
