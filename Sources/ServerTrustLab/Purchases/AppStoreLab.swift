public import Foundation
public import ServerTrust

/// An Apple-like PKI for App Store signed data, made the way Apple's published test chain is:
/// a root, an intermediate (Apple's WWDR) carrying the marker extension
/// 1.2.840.113635.100.6.2.1 and a P-256 leaf carrying 1.2.840.113635.100.6.11.1, with
/// basicConstraints not critical and no key identifiers; and a minter of compact JWS over it.
///
/// Every part can be made wrong on its own (a marker absent or critical, an expired leaf), and
/// ``jws(payload:algorithm:chain:signingKey:header:)`` can sign with any header, chain or key,
/// so each test stages one attack.
public struct AppStoreLab: Sendable {
    /// How a marker extension is written.
    public enum Marker: Sendable {
        case present
        case absent
        case critical
    }

    public static let intermediateMarkerOID = "1.2.840.113635.100.6.2.1"
    public static let leafMarkerOID = "1.2.840.113635.100.6.11.1"

    public let root: LabCA
    public let intermediate: LabCA
    public let leaf: Certificate
    /// The leaf's key, which signs the JWS.
    public let leafKey: LabKey

    /// The PKI; by default the CAs are valid from a year ago, the leaf from a day ago, each for
    /// years, both markers are present and not critical, and no certificate names an OCSP
    /// responder or CRL (`leafOCSPURL`, `intermediateOCSPURL` and `leafCRLURL` add them; the
    /// intermediate answers for the leaf, the root for the intermediate).
    public init(
        rootName: String = "Lab Apple Root CA - G3",
        intermediateMarker: Marker = .present,
        leafMarker: Marker = .present,
        leafNotBefore: Date = Date(timeIntervalSinceNow: -86_400),
        leafNotAfter: Date = Date(timeIntervalSinceNow: 2 * 365 * 86_400),
        leafKey: LabKey = .ecP256(),
        leafOCSPURL: String? = nil,
        intermediateOCSPURL: String? = nil,
        leafCRLURL: String? = nil
    ) throws {
        root = try LabPKI.makeRoot(
            CertificateSpec(
                subject: LabName(commonName: rootName, organization: "Apple Inc."), subjectKey: .ecP384(),
                notBefore: Date(timeIntervalSinceNow: -365 * 86_400), notAfter: Date(timeIntervalSinceNow: 20 * 365 * 86_400),
                isCA: true, extendedKeyUsage: [], includeKeyIdentifiers: false, basicConstraintsCritical: false))
        intermediate = try root.issueSigner(
            CertificateSpec(
                subject: LabName(commonName: "Lab Apple Worldwide Developer Relations Certification Authority", organization: "Apple Inc."),
                subjectKey: .ecP384(), notBefore: Date(timeIntervalSinceNow: -365 * 86_400), notAfter: Date(timeIntervalSinceNow: 10 * 365 * 86_400),
                isCA: true, pathLength: 0, extendedKeyUsage: [], ocspURL: intermediateOCSPURL, includeKeyIdentifiers: false,
                basicConstraintsCritical: false, customExtensions: Self.extensions(Self.intermediateMarkerOID, intermediateMarker)))
        leaf = try intermediate.issue(
            CertificateSpec(
                subject: LabName(commonName: "Lab Prod ECC Mac App Store and iTunes Store Receipt Signing", organization: "Apple Inc."),
                subjectKey: leafKey, notBefore: leafNotBefore, notAfter: leafNotAfter, keyUsage: [.digitalSignature],
                extendedKeyUsage: [], ocspURL: leafOCSPURL, crlURL: leafCRLURL, includeKeyIdentifiers: false,
                customExtensions: Self.extensions(Self.leafMarkerOID, leafMarker)))
        self.leafKey = leafKey
    }

    private static func extensions(_ oid: String, _ marker: Marker) -> [CertificateSpec.CustomExtension] {
        switch marker {
        case .present: [CertificateSpec.CustomExtension(oid: oid)]
        case .absent: []
        case .critical: [CertificateSpec.CustomExtension(oid: oid, critical: true)]
        }
    }

    /// The `x5c` chain as the App Store sends it: leaf, intermediate, root.
    public var chain: [Certificate] { [leaf, intermediate.certificate, root.certificate] }

    /// A compact JWS of `payload` (JSON text, used as given).
    ///
    /// - Parameters:
    ///   - payload: the JSON text, used as given.
    ///   - algorithm: the header's `alg`; the signature is ES256 whatever it says.
    ///   - chain: the header's `x5c`; default ``chain``.
    ///   - signingKey: default the leaf's key.
    ///   - header: the header's JSON text instead of the one built from `algorithm` and `chain`.
    public func jws(
        payload: String, algorithm: String = "ES256", chain: [Certificate]? = nil, signingKey: LabKey? = nil, header: String? = nil
    ) throws -> String {
        let x5c = (chain ?? self.chain).map { "\"" + Data($0.derEncoded).base64EncodedString() + "\"" }.joined(separator: ",")
        let headerText = header ?? "{\"alg\":\"\(algorithm)\",\"x5c\":[\(x5c)]}"
        let input = Self.base64URL(Array(headerText.utf8)) + "." + Self.base64URL(Array(payload.utf8))
        let key = try SignaturePrivateKey(pem: (signingKey ?? leafKey).pemPrivateKey)
        let signature = try key.signature(for: Array(input.utf8), algorithm: .ecdsaP256SHA256Raw)
        return input + "." + Self.base64URL(signature)
    }

    /// base64url without padding (RFC 7515 section 2).
    public static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// A transaction payload for `bundleID` in `environment`, signed at `signedDate`, with
    /// `extra` members (JSON text, each `"key": value`) appended.
    public static func transactionJSON(
        bundleID: String = "com.example.app", environment: String = "Sandbox", signedDate: Date = Date(), transactionID: String = "2000000123456789",
        extra: [String] = []
    ) -> String {
        let milliseconds = Int64((signedDate.timeIntervalSince1970 * 1000).rounded())
        let members = [
            "\"transactionId\":\"\(transactionID)\"", "\"originalTransactionId\":\"\(transactionID)\"", "\"bundleId\":\"\(bundleID)\"",
            "\"productId\":\"com.example.app.gems.100\"", "\"purchaseDate\":\(milliseconds - 5000)", "\"originalPurchaseDate\":\(milliseconds - 5000)",
            "\"quantity\":1", "\"type\":\"Consumable\"", "\"inAppOwnershipType\":\"PURCHASED\"", "\"signedDate\":\(milliseconds)",
            "\"environment\":\"\(environment)\"", "\"transactionReason\":\"PURCHASE\"", "\"storefront\":\"USA\"", "\"storefrontId\":\"143441\"",
            "\"price\":1990", "\"currency\":\"USD\"",
        ] + extra
        return "{" + members.joined(separator: ",") + "}"
    }
}
