public import Foundation

/// A pin-validation failure report in the JSON format of RFC 7469 section 3, with three fields
/// of ours: `evaluator`, `reason` (the ``TrustError/Code``) and `mode`
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
    public var deduplicationKey: String {
        [
            hostname, String(port), notedHostname, String(includeSubdomains), evaluator, reason.description, mode.description,
            servedCertificateChain.map { Data($0.sha256Fingerprint).base64EncodedString() }.joined(separator: ","),
            knownPins.map(\.description).joined(separator: ","),
        ].joined(separator: "|")
    }

    /// The JSON object, keys sorted.
    public func jsonData() -> Data {
        let object: [String: Any] = [
            "date-time": Self.rfc3339(dateTime),
            "hostname": hostname,
            "port": port,
            "effective-expiration-date": effectiveExpirationDate.map(Self.rfc3339) ?? NSNull(),
            "include-subdomains": includeSubdomains,
            "noted-hostname": notedHostname,
            "served-certificate-chain": servedCertificateChain.map(\.pemEncoded),
            "validated-certificate-chain": validatedCertificateChain.map(\.pemEncoded),
            "known-pins": knownPins.map { "pin-sha256=\"\($0.base64)\"" },
            "evaluator": evaluator,
            "reason": reason.description,
            "message": message,
            "mode": mode.description,
        ]
        // Only strings, numbers, booleans, arrays and NSNull: serialisation cannot fail.
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
    }

    static func rfc3339(_ date: Date) -> String { date.formatted(Date.ISO8601FormatStyle()) }
}
