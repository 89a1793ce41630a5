public import Foundation

/// Everything an inspection shows about one certificate: one element of the `presentedChain`
/// and `validatedChain` arrays of `servertrust inspect --json`.
///
/// Fields: `subject`, `issuer`, `serialNumber` (hexadecimal), `notBefore`, `notAfter`,
/// `daysLeft` (whole days from the inspection's time to notAfter, negative once expired),
/// `dnsNames`, `ipAddresses`, `keyType`, `keySize`, `signatureAlgorithm`, `spkiPin`
/// (`sha256/<base64>`), `sha256` (the certificate's fingerprint, lowercase hex), `ocspURLs`,
/// `crlURLs`, `selfIssued`.
public struct CertificateInspection: Sendable, Encodable {
    public let subject: String
    public let issuer: String
    public let serialNumber: String
    public let notBefore: Date
    public let notAfter: Date
    public let daysLeft: Int
    public let dnsNames: [String]
    public let ipAddresses: [String]
    public let keyType: String
    public let keySize: Int
    public let signatureAlgorithm: String
    public let spkiPin: String
    public let sha256: String
    public let ocspURLs: [String]
    public let crlURLs: [String]
    public let selfIssued: Bool

    /// - Parameters:
    ///   - certificate: the certificate to describe.
    ///   - now: the instant days left are counted from.
    public init(_ certificate: Certificate, now: Date) {
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
