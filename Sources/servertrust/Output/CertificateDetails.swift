import Foundation
import ServerTrust

/// Everything `inspect` shows about one certificate, as text lines; the JSON object is the
/// library's ``CertificateInspection``.
struct CertificateDetails {
    let certificate: Certificate
    /// The instant "days left" is counted from.
    let now: Date

    /// Whole days until notAfter; negative once expired.
    var daysLeft: Int { CertificateInspection(certificate, now: now).daysLeft }

    var subjectAlternativeNames: [String] {
        certificate.dnsNames.map { "DNS:" + $0 } + certificate.ipAddresses.map { "IP:" + $0 }
    }

    /// `EC P-256, 256 bits`, `RSA, 2048 bits`.
    var keyDescription: String { "\(certificate.keyType), \(certificate.keySize) bits" }

    var fingerprint: String { certificate.sha256Fingerprint.map { String(format: "%02X", $0) }.joined(separator: ":") }

    /// The validity line: dates, and days left or since expiry, coloured when close.
    func validity(style: TextStyle) -> String {
        let range = "\(JSONText.date(certificate.notValidBefore)) → \(JSONText.date(certificate.notValidAfter))"
        if now < certificate.notValidBefore { return range + " " + style.red("(not valid yet)") }
        let days = daysLeft
        if days < 0 { return range + " " + style.red("(expired \(-days) day\(-days == 1 ? "" : "s") ago)") }
        let left = "(\(days) day\(days == 1 ? "" : "s") left)"
        return range + " " + (days < 30 ? style.yellow(left) : left)
    }

    /// The labelled lines under a certificate's heading.
    func lines(style: TextStyle) -> [String] {
        func list(_ items: [String]) -> String { items.isEmpty ? style.dim("none") : items.joined(separator: ", ") }
        return [
            "issuer      \(certificate.issuer)",
            "validity    \(validity(style: style))",
            "names       \(list(subjectAlternativeNames))",
            "key         \(keyDescription)",
            "signature   \(certificate.signatureAlgorithm)",
            "serial      \(certificate.serialNumber)",
            "SPKI pin    \(style.bold(certificate.spkiPin.description))",
            "SHA-256     \(fingerprint)",
            "OCSP        \(list(certificate.ocspURLs))",
            "CRL         \(list(certificate.crlDistributionPoints))",
        ]
    }
}
