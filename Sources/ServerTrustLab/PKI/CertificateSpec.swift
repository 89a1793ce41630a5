public import Foundation

/// Everything that goes into one lab certificate; the issuer supplies the rest.
///
/// The defaults describe a well-formed end-entity certificate valid from an hour ago for 30
/// days; change one field to make the one defect a test is about.
public struct CertificateSpec: Sendable {
    /// A keyUsage bit, by its OpenSSL configuration name.
    public struct KeyUsage: Hashable, Sendable {
        let name: String
        /// The `digitalSignature` bit.
        public static let digitalSignature = KeyUsage(name: "digitalSignature")
        /// The `nonRepudiation` bit.
        public static let nonRepudiation = KeyUsage(name: "nonRepudiation")
        /// The `keyEncipherment` bit.
        public static let keyEncipherment = KeyUsage(name: "keyEncipherment")
        /// The `dataEncipherment` bit.
        public static let dataEncipherment = KeyUsage(name: "dataEncipherment")
        /// The `keyAgreement` bit.
        public static let keyAgreement = KeyUsage(name: "keyAgreement")
        /// The `keyCertSign` bit.
        public static let keyCertSign = KeyUsage(name: "keyCertSign")
        /// The `cRLSign` bit.
        public static let cRLSign = KeyUsage(name: "cRLSign")
    }

    /// An extendedKeyUsage purpose.
    public struct ExtendedKeyUsage: Hashable, Sendable {
        let name: String
        /// A purpose by dotted OID, for purposes OpenSSL has no name for.
        public init(oid: String) { name = oid }
        private init(name: String) { self.name = name }
        /// TLS server authentication.
        public static let serverAuth = ExtendedKeyUsage(name: "serverAuth")
        /// TLS client authentication.
        public static let clientAuth = ExtendedKeyUsage(name: "clientAuth")
        /// Code signing.
        public static let codeSigning = ExtendedKeyUsage(name: "codeSigning")
        /// E-mail protection.
        public static let emailProtection = ExtendedKeyUsage(name: "emailProtection")
        /// OCSP response signing (a delegated responder).
        public static let ocspSigning = ExtendedKeyUsage(name: "OCSPSigning")
        /// Any purpose.
        public static let anyExtendedKeyUsage = ExtendedKeyUsage(name: "anyExtendedKeyUsage")
    }

    /// An extension ServerTrustLab has no property for (a vendor's marker, say), by dotted OID.
    public struct CustomExtension: Sendable {
        /// The extension's OID, dotted.
        public let oid: String
        public let critical: Bool
        /// The DER of the extension's value (the contents of its OCTET STRING).
        public let value: [UInt8]

        /// An extension with `value` (default: an ASN.1 NULL, as marker extensions carry).
        public init(oid: String, critical: Bool = false, value: [UInt8] = [0x05, 0x00]) {
            self.oid = oid
            self.critical = critical
            self.value = value
        }
    }

    /// The subject name.
    public var subject: LabName
    /// The key the certificate certifies (its public half goes into the certificate).
    public var subjectKey: LabKey
    /// Hexadecimal; nil (the default) draws 16 random bytes.
    public var serialNumber: String?
    /// Default: an hour ago.
    public var notBefore: Date
    /// Default: 30 days from now.
    public var notAfter: Date
    /// basicConstraints cA (critical when true). Default false.
    public var isCA: Bool
    /// basicConstraints pathLenConstraint; only meaningful for a CA. Default none.
    public var pathLength: Int?
    /// Whether a CA's basicConstraints is marked critical. Default true; some real CAs (Apple's
    /// test CA for App Store signed data among them) mark it non-critical.
    public var basicConstraintsCritical: Bool
    /// Extensions added after the ones above, in order. Default none.
    public var customExtensions: [CustomExtension]
    /// nil (the default) picks keyCertSign + cRLSign + digitalSignature for a CA, and
    /// digitalSignature (+ keyEncipherment for RSA) otherwise; `[]` omits the extension.
    public var keyUsage: [KeyUsage]?
    /// `[]` omits the extension. Default `[.serverAuth]`.
    public var extendedKeyUsage: [ExtendedKeyUsage]
    /// subjectAltName dNSName entries; the extension is omitted when these and
    /// ``ipAddresses`` are both empty.
    public var dnsNames: [String]
    /// subjectAltName iPAddress entries in text form (IPv4 or IPv6).
    public var ipAddresses: [String]
    /// nameConstraints permitted dNSName subtrees (`example.com` covers it and its subdomains).
    public var permittedDNSNames: [String]
    /// nameConstraints excluded dNSName subtrees.
    public var excludedDNSNames: [String]
    /// Authority Information Access OCSP responder URL.
    public var ocspURL: String?
    /// CRL distribution point URL.
    public var crlURL: String?
    /// Adds the TLS feature extension requiring status_request (OCSP must-staple).
    public var mustStaple: Bool
    /// Adds subjectKeyIdentifier and authorityKeyIdentifier. Default true.
    public var includeKeyIdentifiers: Bool

    /// A specification with the defaults described on each property.
    public init(
        subject: LabName,
        subjectKey: LabKey,
        serialNumber: String? = nil,
        notBefore: Date = Date(timeIntervalSinceNow: -3600),
        notAfter: Date = Date(timeIntervalSinceNow: 30 * 86400),
        isCA: Bool = false,
        pathLength: Int? = nil,
        keyUsage: [KeyUsage]? = nil,
        extendedKeyUsage: [ExtendedKeyUsage] = [.serverAuth],
        dnsNames: [String] = [],
        ipAddresses: [String] = [],
        permittedDNSNames: [String] = [],
        excludedDNSNames: [String] = [],
        ocspURL: String? = nil,
        crlURL: String? = nil,
        mustStaple: Bool = false,
        includeKeyIdentifiers: Bool = true,
        basicConstraintsCritical: Bool = true,
        customExtensions: [CustomExtension] = []
    ) {
        self.subject = subject
        self.subjectKey = subjectKey
        self.serialNumber = serialNumber
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.isCA = isCA
        self.pathLength = pathLength
        self.keyUsage = keyUsage
        self.extendedKeyUsage = extendedKeyUsage
        self.dnsNames = dnsNames
        self.ipAddresses = ipAddresses
        self.permittedDNSNames = permittedDNSNames
        self.excludedDNSNames = excludedDNSNames
        self.ocspURL = ocspURL
        self.crlURL = crlURL
        self.mustStaple = mustStaple
        self.includeKeyIdentifiers = includeKeyIdentifiers
        self.basicConstraintsCritical = basicConstraintsCritical
        self.customExtensions = customExtensions
    }

    /// The key usage actually written: the explicit one, or the default for the certificate kind.
    var effectiveKeyUsage: [KeyUsage] {
        if let keyUsage { return keyUsage }
        if isCA { return [.keyCertSign, .cRLSign, .digitalSignature] }
        return subjectKey.isRSA ? [.digitalSignature, .keyEncipherment] : [.digitalSignature]
    }
}
