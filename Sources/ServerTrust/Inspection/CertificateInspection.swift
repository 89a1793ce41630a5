package import Foundation

/// Everything an inspection shows about one certificate: one element of the `presentedChain`
/// and `validatedChain` arrays of `servertrust inspect --json`.
///
/// Fields: `subject`, `issuer`, `serialNumber` (hexadecimal), `notBefore`, `notAfter`,
/// `daysLeft` (whole days from the inspection's time to notAfter, negative once expired),
/// `dnsNames`, `ipAddresses`, `keyType`, `keySize`, `signatureAlgorithm`, `spkiPin`
/// (`sha256/<base64>`), `sha256` (the certificate's fingerprint, lowercase hex), `ocspURLs`,
/// `crlURLs`, `selfIssued`.
package struct CertificateInspection: Sendable, Encodable {
    package let subject: String
    package let issuer: String
    package let serialNumber: String
    package let notBefore: Date
    package let notAfter: Date
    package let daysLeft: Int
    package let dnsNames: [String]
    package let ipAddresses: [String]
    package let keyType: String
    package let keySize: Int
    package let signatureAlgorithm: String
    package let spkiPin: String
    package let sha256: String
    package let ocspURLs: [String]
    package let crlURLs: [String]
    package let selfIssued: Bool

    /// - Parameters:
    ///   - certificate: the certificate to describe.
    ///   - now: the instant days left are counted from.
    package init(_ certificate: Certificate, now: Date) {
        subject = certificate.subject
        issuer = certificate.issuer
        serialNumber = certificate.serialNumber
        notBefore = certificate.notValidBefore
        notAfter = certificate.notValidAfter
        daysLeft = Int((certificate.notValidAfter.timeIntervalSince(now) / 86_400).rounded(.down))
        dnsNames = certificate.dnsNames
        ipAddresses = certificate.ipAddresses
        keyType = certificate.keyType
        keySize = certificate.keySize
        signatureAlgorithm = certificate.signatureAlgorithm
        spkiPin = certificate.spkiPin.description
        sha256 = certificate.sha256Fingerprint.map { String(format: "%02x", $0) }.joined()
        ocspURLs = certificate.ocspURLs
        crlURLs = certificate.crlDistributionPoints
        selfIssued = certificate.isSelfIssued
    }
}
