public import Foundation
public import ServerTrust
internal import COpenSSL

/// An Apple-like RSA PKI for legacy App Store receipts, made the way Apple's receipt chain is —
/// a root ("Lab Apple Root CA", RSA-2048), an intermediate (Apple's WWDR) carrying the marker
/// extension 1.2.840.113635.100.6.2.1, an RSA signer carrying 1.2.840.113635.100.6.11.1 — and a
/// minter of PKCS#7 SignedData receipts over it, in DER or in the BER forms Apple emits.
///
/// Every part can be made wrong on its own (a marker absent or critical, a signer expired) and
/// ``receipt(payload:options:)`` can stage each structural attack (two signers, an
/// issuerAndSerialNumber naming another certificate, content altered after signing, trailing
/// bytes), so each test stages one.
public struct ReceiptLab: Sendable {
    public let root: LabCA
    public let intermediate: LabCA
    public let signer: Certificate
    /// The signer's key, which signs the receipts.
    public let signerKey: LabKey

    /// The PKI. Keys are the process-wide cached RSA-2048 keys `keyVariant`, `+ 1` and `+ 2`
    /// (root, intermediate, signer): another `keyVariant` gives a look-alike PKI of the same names
    /// and other keys.
    public init(
        rootName: String = "Lab Apple Root CA",
        keyVariant: Int = 40,
        intermediateMarker: AppStoreLab.Marker = .present,
        signerMarker: AppStoreLab.Marker = .present,
        signerNotBefore: Date = Date(timeIntervalSinceNow: -30 * 86_400),
        signerNotAfter: Date = Date(timeIntervalSinceNow: 365 * 86_400)
    ) throws {
        root = try LabPKI.makeRoot(
            CertificateSpec(
                subject: LabName(commonName: rootName, organization: "Apple Inc."), subjectKey: .rsa(bits: 2048, variant: keyVariant),
                notBefore: Date(timeIntervalSinceNow: -10 * 365 * 86_400), notAfter: Date(timeIntervalSinceNow: 20 * 365 * 86_400),
                isCA: true, extendedKeyUsage: []))
        intermediate = try root.issueSigner(
            CertificateSpec(
                subject: LabName(commonName: "Lab Apple Worldwide Developer Relations Certification Authority", organization: "Apple Inc."),
                subjectKey: .rsa(bits: 2048, variant: keyVariant + 1), notBefore: Date(timeIntervalSinceNow: -5 * 365 * 86_400),
                notAfter: Date(timeIntervalSinceNow: 10 * 365 * 86_400), isCA: true, pathLength: 0, extendedKeyUsage: [],
                customExtensions: Self.extensions(AppStoreLab.intermediateMarkerOID, intermediateMarker)))
        signerKey = .rsa(bits: 2048, variant: keyVariant + 2)
        signer = try intermediate.issue(
            CertificateSpec(
                subject: LabName(commonName: "Lab Mac App Store and iTunes Store Receipt Signing", organization: "Apple Inc."),
                subjectKey: signerKey, notBefore: signerNotBefore, notAfter: signerNotAfter, keyUsage: [.digitalSignature],
                extendedKeyUsage: [], customExtensions: Self.extensions(AppStoreLab.leafMarkerOID, signerMarker)))
    }

    private static func extensions(_ oid: String, _ marker: AppStoreLab.Marker) -> [CertificateSpec.CustomExtension] {
        switch marker {
        case .present: [CertificateSpec.CustomExtension(oid: oid)]
        case .absent: []
        case .critical: [CertificateSpec.CustomExtension(oid: oid, critical: true)]
        }
    }

    /// The certificates as Apple's receipts carry them: signer, intermediate, root.
    public var certificates: [Certificate] { [signer, intermediate.certificate, root.certificate] }

    // MARK: - Payload

    /// One receipt attribute: type, version, value (the bytes inside its OCTET STRING).
    public struct Attribute: Sendable {
        public var type: Int
        public var version: Int
        public var value: [UInt8]

        public init(_ type: Int, version: Int = 1, _ value: [UInt8]) {
            self.type = type
            self.version = version
            self.value = value
        }

        public static func utf8(_ type: Int, _ text: String) -> Attribute { Attribute(type, LabDER.utf8String(text)) }
        public static func ia5(_ type: Int, _ text: String) -> Attribute { Attribute(type, LabDER.ia5String(text)) }
        public static func integer(_ type: Int, _ value: Int64) -> Attribute { Attribute(type, LabDER.integer(value)) }
        public static func date(_ type: Int, _ date: Date?) -> Attribute { ia5(type, date.map(ReceiptLab.rfc3339) ?? "") }
    }

    /// The DER attribute SET of a receipt payload (or of an in-app purchase), in the given order.
    public static func attributeSet(_ attributes: [Attribute]) -> [UInt8] {
        LabDER.set(attributes.map { LabDER.sequence([LabDER.integer(Int64($0.type)), LabDER.integer(Int64($0.version)), LabDER.octetString($0.value)]) })
    }

    /// An in-app purchase's attributes, every documented field set.
    public static func inAppPurchase(
        productID: String = "com.example.app.gems.100", transactionID: String = "2000000123456789", purchaseDate: Date = Date(timeIntervalSince1970: 1_700_000_000),
        quantity: Int64 = 1
    ) -> [Attribute] {
        [
            .integer(1701, quantity), .utf8(1702, productID), .utf8(1703, transactionID), .date(1704, purchaseDate),
            .utf8(1705, "2000000000000001"), .date(1706, Date(timeIntervalSince1970: 1_690_000_000)),
            .date(1708, Date(timeIntervalSince1970: 1_702_592_000)), .integer(1711, 2_000_000_044_556_677), .date(1712, nil),
            .integer(1713, 0), .integer(1719, 1), .utf8(1721, "intro-offer"),
        ]
    }

    /// A receipt payload's attributes, every documented field set: `bundleID`, made at
    /// `creationDate`, for the device `deviceIdentifier` (its SHA-1 hash computed with OpenSSL),
    /// with `inApp` purchases.
    public static func payloadAttributes(
        bundleID: String = "com.example.app", creationDate: Date = Date(timeIntervalSinceNow: -3600), receiptType: String = "Production",
        deviceIdentifier: UUID = UUID(uuidString: "7F2B1C90-3A4D-4E5F-8A6B-1C2D3E4F5A6B") ?? UUID(), opaqueValue: [UInt8] = [0x5F, 0x3C, 0x91, 0x0A, 0x77, 0xE2, 0x10, 0x42],
        inApp: [[Attribute]] = [inAppPurchase()]
    ) -> [Attribute] {
        let bundleValue = LabDER.utf8String(bundleID)
        let uuid = deviceIdentifier.uuid
        let uuidBytes: [UInt8] = [
            uuid.0, uuid.1, uuid.2, uuid.3, uuid.4, uuid.5, uuid.6, uuid.7, uuid.8, uuid.9, uuid.10, uuid.11, uuid.12, uuid.13, uuid.14, uuid.15,
        ]
        return [
            .utf8(0, receiptType), .integer(1, 1_234_567_890), Attribute(2, bundleValue), .utf8(3, "42"), Attribute(4, opaqueValue),
            Attribute(5, sha1(uuidBytes + opaqueValue + bundleValue)), .date(12, creationDate),
        ] + inApp.map { Attribute(17, attributeSet($0)) } + [.utf8(19, "1.0"), .date(21, nil), Attribute(8, version: 2, LabDER.ia5String(""))]
    }

    /// `yyyy-MM-ddTHH:mm:ssZ` in UTC.
    public static func rfc3339(_ date: Date) -> String {
        var time = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    /// OpenSSL's SHA-1 of `bytes`.
    public static func sha1(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 20)
        bytes.withUnsafeBufferPointer { _ = SHA1($0.baseAddress, $0.count, &digest) }
        return digest
    }

    /// OpenSSL's SHA-256 of `bytes`.
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeBufferPointer { _ = SHA256($0.baseAddress, $0.count, &digest) }
        return digest
    }

    // MARK: - PKCS#7

    /// The digest the signer uses.
    public enum Digest: Sendable {
        case sha1, sha256
    }

    /// How ``receipt(payload:options:)`` writes the SignedData; the defaults are a genuine DER
    /// receipt signed with SHA-256 and no signed attributes, as Apple's are.
    public struct Options: Sendable {
        /// Every constructed value of the PKCS#7 structure with an indefinite length, as Apple writes
        /// receipts.
        public var indefiniteLengths = false
        /// The content as a constructed OCTET STRING of segments of this many bytes.
        public var contentSegmentSize: Int?
        /// The certificate SET; default ``certificates`` (signer, intermediate, root).
        public var certificates: [Certificate]?
        public var digest: Digest = .sha256
        /// The signatureAlgorithm: rsaEncryption when false, sha…WithRSAEncryption when true.
        public var signatureAlgorithmNamesDigest = true
        /// signedAttrs with contentType and messageDigest; the signature is then over them.
        public var signedAttributes = false
        /// The messageDigest written instead of the content's digest.
        public var messageDigestOverride: [UInt8]?
        /// More signed attributes (each an Attribute SEQUENCE's DER), after the two.
        public var extraSignedAttributes: [[UInt8]] = []
        /// How many identical SignerInfos.
        public var signerCount = 1
        /// The certificate issuerAndSerialNumber names; default the signer.
        public var signerIdentifier: Certificate?
        /// The key that signs; default the signer's.
        public var signingKey: LabKey?
        /// The content carried, after the signature was made over the payload.
        public var contentAfterSigning: [UInt8]?
        /// Bytes appended after the ContentInfo.
        public var trailingBytes: [UInt8] = []
        /// A `[1]` crls field (with one placeholder element) after the certificates.
        public var includeCRLs = false
        /// The encapsulated content left out (a detached signature).
        public var omitContent = false

        public init() {}
    }

    /// A PKCS#7 SignedData receipt of `payload` signed by the signer (or as `options` say).
    public func receipt(payload: [UInt8], options: Options = Options()) throws -> [UInt8] {
        let indefinite = options.indefiniteLengths
        let digestOID = options.digest == .sha1 ? "1.3.14.3.2.26" : "2.16.840.1.101.3.4.2.1"
        let digestAlgorithm = LabDER.sequence([LabDER.oid(digestOID), LabDER.null])
        let signatureOID =
            options.signatureAlgorithmNamesDigest ? (options.digest == .sha1 ? "1.2.840.113549.1.1.5" : "1.2.840.113549.1.1.11") : "1.2.840.113549.1.1.1"

        var signedAttributes: [UInt8]?
        if options.signedAttributes {
            let digest = options.messageDigestOverride ?? (options.digest == .sha1 ? Self.sha1(payload) : Self.sha256(payload))
            let attributes = LabDER.set([
                LabDER.sequence([LabDER.oid("1.2.840.113549.1.9.3"), LabDER.set([LabDER.oid("1.2.840.113549.1.7.1")])]),
                LabDER.sequence([LabDER.oid("1.2.840.113549.1.9.4"), LabDER.set([LabDER.octetString(digest)])]),
            ] + options.extraSignedAttributes)
            signedAttributes = attributes
        }
        let signature = try Self.sign(signedAttributes ?? payload, key: options.signingKey ?? signerKey, digest: options.digest)
        let identified = options.signerIdentifier ?? signer
        var signerFields = [
            LabDER.integer(1), LabDER.sequence([try Self.issuerDER(of: identified), try Self.serialDER(of: identified)]), digestAlgorithm,
        ]
        if var attributes = signedAttributes {
            attributes[0] = 0xA0
            signerFields.append(attributes)
        }
        signerFields += [LabDER.sequence([LabDER.oid(signatureOID), LabDER.null]), LabDER.octetString(signature)]
        let signerInfo = LabDER.sequence(signerFields)

        let content = options.contentAfterSigning ?? payload
        let octets: [UInt8]
        if let size = options.contentSegmentSize, size > 0 {
            let segments = stride(from: 0, to: content.count, by: size).map { LabDER.octetString(Array(content[$0..<min($0 + size, content.count)])) }
            octets = LabDER.constructed(0x24, segments, indefinite: indefinite)
        } else {
            octets = LabDER.octetString(content)
        }
        var encapsulated = [LabDER.oid("1.2.840.113549.1.7.1")]
        if !options.omitContent { encapsulated.append(LabDER.constructed(0xA0, [octets], indefinite: indefinite)) }

        var signedData = [
            LabDER.integer(1), LabDER.set([digestAlgorithm]), LabDER.constructed(0x30, encapsulated, indefinite: indefinite),
            LabDER.constructed(0xA0, (options.certificates ?? certificates).map(\.derEncoded), indefinite: false),
        ]
        if options.includeCRLs { signedData.append(LabDER.constructed(0xA1, [LabDER.sequence([])], indefinite: false)) }
        signedData.append(LabDER.set(Array(repeating: signerInfo, count: options.signerCount)))
        let contentInfo = LabDER.constructed(
            0x30,
            [
                LabDER.oid("1.2.840.113549.1.7.2"),
                LabDER.constructed(0xA0, [LabDER.constructed(0x30, signedData, indefinite: indefinite)], indefinite: indefinite),
            ], indefinite: indefinite)
        return contentInfo + options.trailingBytes
    }

    /// RSA PKCS#1 v1.5 over `message`: SHA-256 through ServerTrust's `SignaturePrivateKey`,
    /// SHA-1 (which ServerTrust signs nothing with) with OpenSSL here.
    static func sign(_ message: [UInt8], key: LabKey, digest: Digest) throws -> [UInt8] {
        switch digest {
        case .sha256:
            return try SignaturePrivateKey(pem: key.pemPrivateKey).signature(for: message, algorithm: .rsaPKCS1v15SHA256)
        case .sha1:
            let context = try check(EVP_MD_CTX_new(), "EVP_MD_CTX_new")
            defer { EVP_MD_CTX_free(context) }
            try check(EVP_DigestSignInit(context, nil, EVP_sha1(), nil, key.pkey), "EVP_DigestSignInit")
            var length = 0
            try check(EVP_DigestSign(context, nil, &length, message, message.count), "EVP_DigestSign (length)")
            var signature = [UInt8](repeating: 0, count: length)
            try check(EVP_DigestSign(context, &signature, &length, message, message.count), "EVP_DigestSign")
            return Array(signature.prefix(length))
        }
    }

    /// The DER of `certificate`'s issuer name.
    public static func issuerDER(of certificate: Certificate) throws -> [UInt8] {
        try OpenSSLEncoding.der { i2d_X509_NAME(X509_get_issuer_name(certificate.x509), $0) }
    }

    /// The DER INTEGER of `certificate`'s serial number.
    public static func serialDER(of certificate: Certificate) throws -> [UInt8] {
        try OpenSSLEncoding.der { i2d_ASN1_INTEGER(X509_get0_serialNumber(certificate.x509), $0) }
    }
}

/// A small DER (and BER) encoder for the receipts ``ReceiptLab`` mints.
public enum LabDER {
    /// A definite length, minimal.
    public static func length(_ count: Int) -> [UInt8] {
        guard count >= 0x80 else { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var rest = count
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    /// Identifier `tag`, a definite length, `content`.
    public static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] { [tag] + length(content.count) + content }

    /// A constructed value of `children`; with an indefinite length (`0x80` … `00 00`) when asked.
    public static func constructed(_ tag: UInt8, _ children: [[UInt8]], indefinite: Bool) -> [UInt8] {
        indefinite ? [tag, 0x80] + children.flatMap { $0 } + [0, 0] : tlv(tag, children.flatMap { $0 })
    }

    public static func sequence(_ children: [[UInt8]]) -> [UInt8] { tlv(0x30, children.flatMap { $0 }) }
    public static func set(_ children: [[UInt8]]) -> [UInt8] { tlv(0x31, children.flatMap { $0 }) }
    public static func octetString(_ bytes: [UInt8]) -> [UInt8] { tlv(0x04, bytes) }
    public static func utf8String(_ text: String) -> [UInt8] { tlv(0x0C, Array(text.utf8)) }
    public static func ia5String(_ text: String) -> [UInt8] { tlv(0x16, Array(text.utf8)) }
    public static let null: [UInt8] = [0x05, 0x00]

    /// A minimal two's-complement INTEGER.
    public static func integer(_ value: Int64) -> [UInt8] {
        var bytes = withUnsafeBytes(of: value.bigEndian) { Array($0) }
        while bytes.count > 1, (bytes[0] == 0 && bytes[1] & 0x80 == 0) || (bytes[0] == 0xFF && bytes[1] & 0x80 != 0) { bytes.removeFirst() }
        return tlv(0x02, bytes)
    }

    /// An OBJECT IDENTIFIER from its dotted form.
    public static func oid(_ dotted: String) -> [UInt8] {
        let arcs = dotted.split(separator: ".").compactMap { UInt64($0) }
        guard arcs.count >= 2 else { return tlv(0x06, []) }
        var content = base128(arcs[0] * 40 + arcs[1])
        for arc in arcs.dropFirst(2) { content += base128(arc) }
        return tlv(0x06, content)
    }

    private static func base128(_ value: UInt64) -> [UInt8] {
        var bytes = [UInt8(value & 0x7F)]
        var rest = value >> 7
        while rest > 0 {
            bytes.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
            rest >>= 7
        }
        return bytes
    }
}
