public import Foundation

/// A pin-validation failure report in the JSON format of RFC 7469 section 3, with three fields
/// of ours: `evaluator`, `reason` (the `TrustError.Code`) and `mode`
/// (``EnforcementMode``), plus `message`, the human-readable reason.
///
/// ```json
/// { "date-time": "2026-11-23T09:15:00Z", "hostname": "api.example.com", "port": 443,
///   "effective-expiration-date": "2027-06-01T00:00:00Z", "include-subdomains": false,
///   "noted-hostname": "api.example.com",
///   "served-certificate-chain": ["-----BEGIN CERTIFICATE-----\n…"],
///   "validated-certificate-chain": ["-----BEGIN CERTIFICATE-----\n…"],
///   "known-pins": ["pin-sha256=\"…\""],
///   "evaluator": "PinSetTrustEvaluator", "reason": "pinMismatch", "mode": "enforced",
///   "message": "No certificate of the validated chain …" }
/// ```
///
/// RFC 7469's fields keep their meaning: `noted-hostname` is the host the policy was configured
/// for (the pattern's suffix for `*.`/`**.` patterns, which set `include-subdomains`);
/// `effective-expiration-date` is the pin set's, or `null` when the policy has no date;
/// `validated-certificate-chain` is empty when no chain validated.
public struct TrustFailureReport: Hashable, Sendable {
    public var dateTime: Date
    public var hostname: String
    public var port: Int
    public var effectiveExpirationDate: Date?
    public var includeSubdomains: Bool
    public var notedHostname: String
    public var servedCertificateChain: [Certificate]
    public var validatedCertificateChain: [Certificate]
    public var knownPins: [Pin]
    public var evaluator: String
    public var reason: TrustError.Code
    public var message: String
    public var mode: EnforcementMode

    public init(
        dateTime: Date, hostname: String, port: Int, effectiveExpirationDate: Date?, includeSubdomains: Bool,
        notedHostname: String, servedCertificateChain: [Certificate], validatedCertificateChain: [Certificate],
        knownPins: [Pin], evaluator: String, reason: TrustError.Code, message: String, mode: EnforcementMode
    ) {
        self.dateTime = dateTime
        self.hostname = hostname
        self.port = port
        self.effectiveExpirationDate = effectiveExpirationDate
        self.includeSubdomains = includeSubdomains
        self.notedHostname = notedHostname
        self.servedCertificateChain = servedCertificateChain
        self.validatedCertificateChain = validatedCertificateChain
        self.knownPins = knownPins
        self.evaluator = evaluator
        self.reason = reason
        self.message = message
        self.mode = mode
    }

    /// What makes two reports "identical" for deduplication: everything but the time and the
    /// prose.
    package var deduplicationKey: String {
        [
            hostname, String(port), notedHostname, String(includeSubdomains), evaluator, reason.description, mode.description,
            servedCertificateChain.map { Data($0.sha256Fingerprint).base64EncodedString() }.joined(separator: ","),
            knownPins.map(\.description).joined(separator: ","),
        ].joined(separator: "|")
    }

    /// The JSON object, keys sorted, slashes unescaped.
    package func jsonData() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Only strings, an integer, booleans, arrays of strings and null: encoding cannot fail.
        return (try? encoder.encode(self)) ?? Data("{}".utf8)
    }

    static func rfc3339(_ date: Date) -> String { date.formatted(Date.ISO8601FormatStyle()) }
}

/// RFC 7469's field names, with dates as RFC 3339 strings, pins as `pin-sha256="…"` and
/// certificates as PEM; `effective-expiration-date` is `null` when the policy has no date.
extension TrustFailureReport: Encodable {
    private enum CodingKeys: String, CodingKey {
        case dateTime = "date-time"
        case hostname, port
        case effectiveExpirationDate = "effective-expiration-date"
        case includeSubdomains = "include-subdomains"
        case notedHostname = "noted-hostname"
        case servedCertificateChain = "served-certificate-chain"
        case validatedCertificateChain = "validated-certificate-chain"
        case knownPins = "known-pins"
        case evaluator, reason, message, mode
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.rfc3339(dateTime), forKey: .dateTime)
        try container.encode(hostname, forKey: .hostname)
        try container.encode(port, forKey: .port)
        if let effectiveExpirationDate {
            try container.encode(Self.rfc3339(effectiveExpirationDate), forKey: .effectiveExpirationDate)
        } else {
            try container.encodeNil(forKey: .effectiveExpirationDate)
        }
        try container.encode(includeSubdomains, forKey: .includeSubdomains)
        try container.encode(notedHostname, forKey: .notedHostname)
        try container.encode(servedCertificateChain.map(\.pemEncoded), forKey: .servedCertificateChain)
        try container.encode(validatedCertificateChain.map(\.pemEncoded), forKey: .validatedCertificateChain)
        try container.encode(knownPins.map { "pin-sha256=\"\($0.base64)\"" }, forKey: .knownPins)
        try container.encode(evaluator, forKey: .evaluator)
        try container.encode(reason.description, forKey: .reason)
        try container.encode(message, forKey: .message)
        try container.encode(mode.description, forKey: .mode)
    }
}
