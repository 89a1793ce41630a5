internal import COpenSSL
internal import CServerTrustShims

extension Certificate {
    /// Whether the certificate demands a stapled OCSP response ("OCSP must-staple", RFC 7633):
    /// its TLS feature extension (1.3.6.1.5.5.7.1.24) lists `status_request` (5).
    ///
    /// A client that sees this must treat a missing or unverifiable staple as a failure, not
    /// fall back to soft-fail. An extension that is present but does not decode counts as
    /// must-staple: failing closed costs a connection, failing open loses the protection.
    public var hasMustStaple: Bool {
        guard X509_get_ext_by_NID(x509, NID_tlsfeature, -1) >= 0 else { return false }
        var critical: Int32 = 0
        guard let raw = X509_get_ext_d2i(x509, NID_tlsfeature, &critical, nil) else { return true }
        let features = OpaquePointer(raw)
        defer { TLS_FEATURE_free(features) }
        let statusRequest = 5  // TLS ExtensionType status_request (RFC 6066)
        return (0..<CServerTrustShims_sk_ASN1_INTEGER_num(features)).contains { index in
            guard let feature = CServerTrustShims_sk_ASN1_INTEGER_value(features, index) else { return false }
            return ASN1_INTEGER_get(feature) == statusRequest
        }
    }
}
