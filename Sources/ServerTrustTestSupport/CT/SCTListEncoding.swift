/// The encodings that carry SCTs to a client (RFC 6962 §3.3).
///
/// The same `SignedCertificateTimestampList` travels in the TLS extension, in an X.509
/// certificate extension and in an OCSP single-response extension; the two ASN.1 carriers wrap it
/// in an OCTET STRING of their own, inside the extension's `extnValue`.
public enum SCTListEncoding {
    /// The X.509v3 extension of a final certificate holding its embedded SCTs.
    public static let certificateExtensionOID = "1.3.6.1.4.1.11129.2.4.2"
    /// The critical extension that makes a precertificate unusable as a certificate.
    public static let poisonExtensionOID = "1.3.6.1.4.1.11129.2.4.3"
    /// The OCSP single-response extension holding SCTs.
    public static let ocspExtensionOID = "1.3.6.1.4.1.11129.2.4.5"
    /// The TLS extension type of `signed_certificate_timestamp` (RFC 6962 §3.3.1).
    public static let tlsExtensionType: UInt16 = 18

    /// `SignedCertificateTimestampList`: a 2-byte length, then each SCT with a 2-byte length.
    public static func list(_ scts: [[UInt8]]) -> [UInt8] {
        TLSEncoding.vector(scts.flatMap { TLSEncoding.vector($0, lengthBytes: 2) }, lengthBytes: 2)
    }

    /// The content of an X.509 or OCSP SCT extension's `extnValue`: the DER OCTET STRING
    /// wrapping ``list(_:)``.
    public static func extensionValue(_ scts: [[UInt8]]) -> [UInt8] {
        DERWriter.element(tag: 0x04, content: list(scts))
    }

    /// The `signed_certificate_timestamp` TLS extension as a server sends it: type 18, a 2-byte
    /// length, then ``list(_:)``.
    public static func tlsExtension(_ scts: [[UInt8]]) -> [UInt8] {
        TLSEncoding.integer(UInt64(tlsExtensionType), byteCount: 2) + TLSEncoding.vector(list(scts), lengthBytes: 2)
    }
}
