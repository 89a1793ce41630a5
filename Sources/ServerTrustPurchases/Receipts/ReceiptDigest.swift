import ServerTrustCertificates

/// The two digests an App Store receipt uses: SHA-1 (older receipts' signatures, and always the
/// device hash, field 5) and SHA-256 (receipts signed since 2023).
package enum ReceiptDigest: String, Hashable, Sendable {
    case sha1 = "SHA-1"
    case sha256 = "SHA-256"

    /// id-sha1, 1.3.14.3.2.26.
    static let sha1OID = BERObjectIdentifier("1.3.14.3.2.26")
    /// id-sha256, 2.16.840.1.101.3.4.2.1.
    static let sha256OID = BERObjectIdentifier("2.16.840.1.101.3.4.2.1")

    /// The digest of `bytes`, OpenSSL's through ServerTrustCertificates.
    package func hash(_ bytes: [UInt8]) -> [UInt8] {
        switch self {
        case .sha1: ServerTrustCertificates.sha1(bytes)
        case .sha256: ServerTrustCertificates.sha256(bytes)
        }
    }
}
