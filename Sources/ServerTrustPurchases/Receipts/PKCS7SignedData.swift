package import ServerTrustCertificates
import ServerTrust

/// An App Store receipt's PKCS#7 structure (RFC 2315, RFC 5652): a ContentInfo of id-signedData
/// whose SignedData encapsulates the receipt payload as id-data, read with ``BERReader`` and
/// held to the shape Apple emits.
///
/// - SignedData version 1, its digestAlgorithms SHA-1 or SHA-256 only.
/// - The encapsulated content is id-data and present (a detached signature is refused), an
///   OCTET STRING, primitive or constructed.
/// - certificates `[0] IMPLICIT SET`, X.509 certificates only, in any order (Apple's receipts
///   carry an unsorted SET), at most ``maximumCertificates``.
/// - crls `[1]` refused: Apple's receipts carry none, and the SignedData's certificates and
///   CRLs are outside the signature, so a CRL there would be bytes an attacker may add freely
///   and that this verifier would have to ignore; revocation is the verifier's to fetch.
/// - signerInfos: exactly one (``PurchaseVerificationError/Code/wrongSignerCount``).
///
/// The SignerInfo is read by ``PKCS7SignerInfo``.
package struct PKCS7SignedData: Sendable {
    /// id-signedData, 1.2.840.113549.1.7.2.
    package static let signedDataOID = BERObjectIdentifier("1.2.840.113549.1.7.2")
    /// id-data, 1.2.840.113549.1.7.1.
    package static let dataOID = BERObjectIdentifier("1.2.840.113549.1.7.1")
    /// The most certificates accepted; Apple's receipts carry three (signer, WWDR, root).
    package static let maximumCertificates = 10

    /// The encapsulated content's octets (the receipt payload), segments concatenated.
    package let content: [UInt8]
    /// The SET's certificates, in the order received.
    package let certificates: [ReceiptCertificate]
    /// The one signer.
    package let signer: PKCS7SignerInfo

    /// Reads a ContentInfo of id-signedData from `ber`, each value checked by ``BERReader`` as
    /// it is read (a shallow parse): every field is read to its end but the certificates, whose
    /// DER OpenSSL parses whole, and the values of unknown signed attributes, walked.
    ///
    /// - Throws: ``PurchaseVerificationError/Code/malformedReceipt``, or
    ///   ``PurchaseVerificationError/Code/wrongSignerCount`` for other than one SignerInfo.
    package init(ber: [UInt8], maximumLength: Int = BERReader.maximumLength) throws(PurchaseVerificationError) {
        try self.init(contentInfo: BERReader.parse(ber, maximumLength: maximumLength, deep: false))
    }

    /// Reads a ContentInfo already parsed.
    package init(contentInfo: BERElement) throws(PurchaseVerificationError) {
        let info = try contentInfo.expect(.sequence, "the ContentInfo").children(exactly: 2, what: "the ContentInfo")
        guard info[0].isObjectIdentifier(Self.signedDataOID) else {
            let contentType = try info[0].objectIdentifier("the ContentInfo's contentType")
            throw Self.malformed("the ContentInfo's contentType is \(contentType), not id-signedData (\(Self.signedDataOID))")
        }
        let explicit = try info[1].expect(.contextSpecific(0, constructed: true), "the ContentInfo's content")
            .children(exactly: 1, what: "the ContentInfo's [0] content")
        var fields = try explicit[0].expect(.sequence, "the SignedData").children()

        guard let version = try fields.next() else { throw Self.malformed("the SignedData is empty") }
        let versionNumber = try version.integer("the SignedData's version")
        guard versionNumber == 1 else {
            throw Self.malformed("the SignedData's version is \(versionNumber), not 1 (id-data content, version 1 signers, X.509 certificates)")
        }

        guard let digestSet = try fields.next() else { throw Self.malformed("the SignedData has no digestAlgorithms") }
        var digestReader = try digestSet.expect(.set, "the SignedData's digestAlgorithms").children()
        let digests = try digestReader.all(limit: 4, what: "digest algorithms").map { algorithm throws(PurchaseVerificationError) in
            try Self.digest(of: algorithm, "a digestAlgorithms entry")
        }

        guard let encapsulated = try fields.next() else { throw Self.malformed("the SignedData has no encapContentInfo") }
        content = try Self.content(of: encapsulated)

        guard var next = try fields.next() else { throw Self.malformed("the SignedData has no signerInfos") }
        var certificates: [ReceiptCertificate] = []
        if next.tag == .contextSpecific(0, constructed: true) {
            var reader = try next.children()
            certificates = try reader.all(limit: Self.maximumCertificates, what: "certificates").map { element throws(PurchaseVerificationError) in
                try ReceiptCertificate(element)
            }
            guard let after = try fields.next() else { throw Self.malformed("the SignedData has no signerInfos") }
            next = after
        }
        self.certificates = certificates
        if next.tag.tagClass == .contextSpecific, next.tag.number == 1 {
            throw Self.malformed(
                "the SignedData carries CRLs ([1] at offset \(next.offset)); Apple's receipts carry none, and they would be unsigned bytes")
        }
        var signerReader = try next.expect(.set, "the SignedData's signerInfos").children()
        let signerInfos = try signerReader.all(limit: 16, what: "signer infos")
        guard signerInfos.count == 1 else {
            throw PurchaseVerificationError(
                .wrongSignerCount, "The receipt has \(signerInfos.count) signers (SignerInfo), not exactly one.")
        }
        if let extra = try fields.next() {
            throw Self.malformed("the SignedData has a \(extra.tag) after its signerInfos, at offset \(extra.offset)")
        }
        signer = try PKCS7SignerInfo(signerInfos[0])
        guard digests.contains(signer.digest) else {
            throw Self.malformed("the signer's digest \(signer.digest.rawValue) is not among the SignedData's digestAlgorithms")
        }
    }

    /// The certificate the signer's issuerAndSerialNumber names: issuer name (DER, byte for
    /// byte) and serial number both equal.
    ///
    /// - Throws: ``PurchaseVerificationError/Code/signerCertificateMismatch`` when none does, or
    ///   when two different certificates do.
    package func signerCertificate() throws(PurchaseVerificationError) -> ReceiptCertificate {
        // The serial number first: short, and what tells certificates of one issuer apart.
        let matches = certificates.filter { $0.serialNumber == signer.serialNumber && $0.issuer == signer.issuer }
        guard let first = matches.first else {
            throw PurchaseVerificationError(
                .signerCertificateMismatch,
                "No certificate of the receipt has the issuer and serial number (\(hex(signer.serialNumber))) its signer names.")
        }
        guard matches.allSatisfy({ $0.certificate == first.certificate }) else {
            throw PurchaseVerificationError(
                .signerCertificateMismatch, "Two different certificates of the receipt have the issuer and serial number its signer names.")
        }
        return first
    }

    /// Checks the signer's RSA PKCS#1 v1.5 signature under `certificate`'s key: over the DER of
    /// the signed attributes when present (whose messageDigest must then be the content's
    /// digest), over the content otherwise.
    ///
    /// - Throws: ``PurchaseVerificationError/Code/invalidSignature``.
    package func verifySignature(by certificate: Certificate) throws(PurchaseVerificationError) {
        let key: SignaturePublicKey
        do {
            key = try SignaturePublicKey(subjectPublicKeyInfoDER: certificate.subjectPublicKeyInfoDER)
        } catch {
            throw PurchaseVerificationError(.invalidSignature, "The signer certificate's key cannot verify: \(error.reason)")
        }
        try verifySignature(with: key, of: certificate)
    }

    /// The same with the signer's key already parsed (a verified chain keeps it).
    package func verifySignature(with key: SignaturePublicKey, of certificate: Certificate) throws(PurchaseVerificationError) {
        let message: [UInt8]
        if let attributes = signer.signedAttributes {
            guard signer.digest.hash(content) == attributes.messageDigest else {
                throw PurchaseVerificationError(
                    .invalidSignature, "The signed messageDigest is not the \(signer.digest.rawValue) digest of the receipt's content.")
            }
            message = attributes.signedBytes
        } else {
            message = content
        }
        guard key.kind == .rsa else {
            throw PurchaseVerificationError(.invalidSignature, "The signer certificate's key is \(key.kind.rawValue), not RSA.")
        }
        let valid =
            switch signer.digest {
            case .sha1: key.isValidRSAPKCS1v15SHA1Signature(signer.signature, for: message)
            case .sha256: key.isValidSignature(signer.signature, for: message, algorithm: .rsaPKCS1v15SHA256)
            }
        guard valid else {
            throw PurchaseVerificationError(
                .invalidSignature,
                "The signature is not the signer certificate's (\(certificate.subject)) RSA PKCS#1 v1.5 \(signer.digest.rawValue) signature over the receipt.")
        }
    }

    /// encapContentInfo: SEQUENCE { id-data, [0] EXPLICIT OCTET STRING } with the content present.
    private static func content(of encapsulated: BERElement) throws(PurchaseVerificationError) -> [UInt8] {
        var parts = try encapsulated.expect(.sequence, "the encapContentInfo").children()
        guard let type = try parts.next() else { throw malformed("the encapContentInfo is empty") }
        guard type.isObjectIdentifier(dataOID) else {
            throw malformed("the eContentType is \(try type.objectIdentifier("the eContentType")), not id-data (\(dataOID))")
        }
        guard let explicit = try parts.next() else {
            throw malformed("the encapContentInfo has no content (a detached signature): the receipt payload is missing")
        }
        guard try parts.next() == nil else { throw malformed("the encapContentInfo has more than two elements") }
        let inner = try explicit.expect(.contextSpecific(0, constructed: true), "the eContent").children(exactly: 1, what: "the eContent")
        return try inner[0].octetString("the eContent")
    }

    /// A digest AlgorithmIdentifier: SHA-1 or SHA-256, parameters absent or NULL.
    static func digest(of algorithm: BERElement, _ what: @autoclosure () -> String) throws(PurchaseVerificationError) -> ReceiptDigest {
        let oid = try algorithmIdentifier(algorithm, what())
        if oid.isObjectIdentifier(ReceiptDigest.sha256OID) { return .sha256 }
        if oid.isObjectIdentifier(ReceiptDigest.sha1OID) { return .sha1 }
        throw malformed("\(what()) is \(try oid.objectIdentifier(what())), neither SHA-1 nor SHA-256")
    }

    /// An AlgorithmIdentifier's OBJECT IDENTIFIER, its parameters absent or NULL (all the
    /// algorithms here).
    static func algorithmIdentifier(_ element: BERElement, _ what: @autoclosure () -> String) throws(PurchaseVerificationError) -> BERElement {
        var parts = try element.expect(.sequence, what()).children()
        guard let oid = try parts.next() else { throw malformed("\(what()) at offset \(element.offset) is empty") }
        try oid.expect(.objectIdentifier, what())
        if let parameters = try parts.next() {
            guard parameters.tag == .null, parameters.contentRange.isEmpty else {
                throw malformed("\(what()) at offset \(element.offset) has parameters other than NULL")
            }
            guard try parts.next() == nil else { throw malformed("\(what()) at offset \(element.offset) has more than two elements") }
        }
        return oid
    }

    static func malformed(_ reason: String) -> PurchaseVerificationError {
        PurchaseVerificationError(.malformedReceipt, "Malformed PKCS#7: \(reason).")
    }
}

/// The SignerInfo of a receipt (RFC 5652 section 5.3), as Apple writes it.
///
/// - version 1 with issuerAndSerialNumber. The subjectKeyIdentifier form (version 3) is
///   refused: Apple never uses it, and matching a key identifier trusts an optional extension
///   (Apple's chains do not always carry one) where issuer and serial number are always there.
/// - digestAlgorithm SHA-1 or SHA-256.
/// - signedAttrs optional (Apple's receipts have none); when present, ``SignedAttributes``.
/// - signatureAlgorithm rsaEncryption, or sha1WithRSAEncryption / sha256WithRSAEncryption
///   matching the digest.
/// - no unsignedAttrs: unsigned bytes with nothing to do.
package struct PKCS7SignerInfo: Sendable {
    /// rsaEncryption, 1.2.840.113549.1.1.1.
    static let rsaEncryptionOID = BERObjectIdentifier("1.2.840.113549.1.1.1")
    /// sha1WithRSAEncryption, 1.2.840.113549.1.1.5.
    static let sha1WithRSAOID = BERObjectIdentifier("1.2.840.113549.1.1.5")
    /// sha256WithRSAEncryption, 1.2.840.113549.1.1.11.
    static let sha256WithRSAOID = BERObjectIdentifier("1.2.840.113549.1.1.11")

    /// The issuer name of issuerAndSerialNumber, its DER exactly as received.
    package let issuer: [UInt8]
    /// The serial number's INTEGER content, as received.
    package let serialNumber: [UInt8]
    package let digest: ReceiptDigest
    package let signedAttributes: SignedAttributes?
    package let signature: [UInt8]

    init(_ element: BERElement) throws(PurchaseVerificationError) {
        var fields = try element.expect(.sequence, "the SignerInfo").children()
        guard let version = try fields.next() else { throw PKCS7SignedData.malformed("the SignerInfo is empty") }
        let number = try version.integer("the SignerInfo's version")
        guard number == 1 else {
            throw PKCS7SignedData.malformed(
                "the SignerInfo's version is \(number), not 1: only issuerAndSerialNumber identifies a receipt's signer")
        }
        guard let sid = try fields.next() else { throw PKCS7SignedData.malformed("the SignerInfo has no signer identifier") }
        let issuerAndSerial = try sid.expect(.sequence, "the SignerInfo's issuerAndSerialNumber")
            .children(exactly: 2, what: "the issuerAndSerialNumber")
        let issuerName = try issuerAndSerial[0].expect(.sequence, "the issuerAndSerialNumber's issuer")
        guard !issuerName.isIndefiniteLength else {
            throw PKCS7SignedData.malformed("the issuerAndSerialNumber's issuer at offset \(issuerName.offset) is not DER")
        }
        issuer = Array(issuerName.encodedBytes)
        serialNumber = Array(try issuerAndSerial[1].integerBytes("the issuerAndSerialNumber's serialNumber"))

        guard let digestAlgorithm = try fields.next() else { throw PKCS7SignedData.malformed("the SignerInfo has no digestAlgorithm") }
        digest = try PKCS7SignedData.digest(of: digestAlgorithm, "the SignerInfo's digestAlgorithm")

        guard var next = try fields.next() else { throw PKCS7SignedData.malformed("the SignerInfo has no signatureAlgorithm") }
        if next.tag == .contextSpecific(0, constructed: true) {
            signedAttributes = try SignedAttributes(next)
            guard let after = try fields.next() else { throw PKCS7SignedData.malformed("the SignerInfo has no signatureAlgorithm") }
            next = after
        } else {
            signedAttributes = nil
        }
        let algorithm = try PKCS7SignedData.algorithmIdentifier(next, "the SignerInfo's signatureAlgorithm")
        let withDigest = digest == .sha256 ? Self.sha256WithRSAOID : Self.sha1WithRSAOID
        guard algorithm.isObjectIdentifier(Self.rsaEncryptionOID) || algorithm.isObjectIdentifier(withDigest) else {
            throw PKCS7SignedData.malformed(
                "the SignerInfo's signatureAlgorithm \(try algorithm.objectIdentifier("the SignerInfo's signatureAlgorithm")) is not RSA PKCS#1 v1.5 with its digest \(digest.rawValue)")
        }
        guard let signatureElement = try fields.next() else { throw PKCS7SignedData.malformed("the SignerInfo has no signature") }
        signature = try signatureElement.octetString("the SignerInfo's signature")
        guard !signature.isEmpty else { throw PKCS7SignedData.malformed("the SignerInfo's signature is empty") }
        if let extra = try fields.next() {
            throw PKCS7SignedData.malformed(
                "the SignerInfo has \(extra.tag.number == 1 ? "unsignedAttrs" : "a \(extra.tag)") at offset \(extra.offset); Apple's receipts have none")
        }
    }
}

/// A SignerInfo's signedAttrs: contentType (exactly once, id-data) and messageDigest (exactly
/// once, one OCTET STRING), other attributes allowed and not read, no attribute type twice.
///
/// The signature is over their DER with the `[0]` IMPLICIT tag replaced by SET (`0x31`), RFC
/// 5652 section 5.4: the bytes exactly as received, tag octet replaced, so a definite length is
/// required (DER).
package struct SignedAttributes: Sendable {
    /// id-contentType, 1.2.840.113549.1.9.3.
    static let contentTypeOID = BERObjectIdentifier("1.2.840.113549.1.9.3")
    /// id-messageDigest, 1.2.840.113549.1.9.4.
    static let messageDigestOID = BERObjectIdentifier("1.2.840.113549.1.9.4")

    package let messageDigest: [UInt8]
    /// What the signature is over.
    package let signedBytes: [UInt8]

    init(_ element: BERElement) throws(PurchaseVerificationError) {
        guard !element.isIndefiniteLength else {
            throw PKCS7SignedData.malformed("the signedAttrs at offset \(element.offset) have an indefinite length; they are signed as DER")
        }
        var reader = try element.children()
        var seen: Set<String> = []
        var contentType: String?
        var messageDigest: [UInt8]?
        for attribute in try reader.all(limit: 64, what: "signed attributes") {
            let parts = try attribute.expect(.sequence, "a signed attribute").children(exactly: 2, what: "a signed attribute")
            let type = try parts[0].objectIdentifier("a signed attribute's type")
            guard seen.insert(type).inserted else {
                throw PKCS7SignedData.malformed("the signed attribute \(type) appears twice, the second at offset \(attribute.offset)")
            }
            switch type {
            case Self.contentTypeOID.dotted:
                let values = try parts[1].expect(.set, "the contentType values").children(exactly: 1, what: "the contentType values")
                contentType = try values[0].objectIdentifier("the contentType attribute")
            case Self.messageDigestOID.dotted:
                let values = try parts[1].expect(.set, "the messageDigest values").children(exactly: 1, what: "the messageDigest values")
                messageDigest = try values[0].octetString("the messageDigest attribute")
            default:
                try parts[1].expect(.set, "the values of signed attribute \(type)").validate()
            }
        }
        guard let contentType else { throw PKCS7SignedData.malformed("the signedAttrs have no contentType") }
        guard contentType == PKCS7SignedData.dataOID.dotted else {
            throw PKCS7SignedData.malformed("the signed contentType is \(contentType), not id-data")
        }
        guard let messageDigest else { throw PKCS7SignedData.malformed("the signedAttrs have no messageDigest") }
        self.messageDigest = messageDigest
        var bytes = Array(element.encodedBytes)
        bytes[0] = 0x31
        signedBytes = bytes
    }
}

/// A certificate of the SignedData, with the fields issuerAndSerialNumber is matched on, read
/// from its bytes as received: the issuer and subject names' DER and the serial number's INTEGER
/// content.
package struct ReceiptCertificate: Sendable {
    package let certificate: Certificate
    /// Its DER as received: what a chain is remembered by, without encoding it again.
    package let der: [UInt8]
    package let issuer: [UInt8]
    package let subject: [UInt8]
    package let serialNumber: [UInt8]

    init(_ element: BERElement) throws(PurchaseVerificationError) {
        try element.expect(.sequence, "a certificate of the SignedData (only X.509 certificates are accepted)")
        guard !element.isIndefiniteLength else {
            throw PKCS7SignedData.malformed("the certificate at offset \(element.offset) has an indefinite length; X.509 is DER")
        }
        // Read over the receipt's bytes where they are: the tbsCertificate's first six fields,
        // the rest of the certificate OpenSSL's to parse.
        let (serial, issuer, subject) = try element.input.withUnsafeBufferPointer {
            bytes throws(PurchaseVerificationError) -> (Range<Int>, Range<Int>, Range<Int>) in
            let depth = element.depth + 1
            let outer = element.contentRange
            guard !outer.isEmpty else { throw PKCS7SignedData.malformed("the certificate at offset \(element.offset) is empty") }
            let tbs = try BERReader.value(in: bytes, at: outer.lowerBound, bound: outer.upperBound, depth: depth, deep: false)
            guard tbs.tag == .sequence else {
                throw PKCS7SignedData.malformed("a certificate's tbsCertificate at offset \(tbs.offset) is tagged \(tbs.tag), not SEQUENCE")
            }
            var cursor = tbs.contentRange.lowerBound
            func next() throws(PurchaseVerificationError) -> BERValue? {
                guard cursor < tbs.contentRange.upperBound else { return nil }
                let field = try BERReader.value(in: bytes, at: cursor, bound: tbs.contentRange.upperBound, depth: depth + 1, deep: false)
                cursor = field.endOffset
                return field
            }
            guard var field = try next() else { throw PKCS7SignedData.malformed("the tbsCertificate at offset \(tbs.offset) is empty") }
            if field.tag == .contextSpecific(0, constructed: true) {
                guard let after = try next() else { throw PKCS7SignedData.malformed("the tbsCertificate has no serial number") }
                field = after
            }
            guard field.tag == .integer else {
                throw PKCS7SignedData.malformed("a certificate's serialNumber at offset \(field.offset) is tagged \(field.tag), not INTEGER")
            }
            try BERReader.checkMinimalInteger(bytes[field.contentRange], at: field.offset, "a certificate's serialNumber")
            guard try next() != nil, let issuer = try next(), try next() != nil, let subject = try next() else {
                throw PKCS7SignedData.malformed("the tbsCertificate at offset \(tbs.offset) is truncated")
            }
            guard issuer.tag == .sequence, subject.tag == .sequence else {
                throw PKCS7SignedData.malformed("a certificate's issuer or subject at offset \(issuer.offset) is not a SEQUENCE")
            }
            return (field.contentRange, issuer.offset..<issuer.endOffset, subject.offset..<subject.endOffset)
        }
        serialNumber = Array(element.input[serial])
        self.issuer = Array(element.input[issuer])
        self.subject = Array(element.input[subject])
        der = Array(element.encodedBytes)
        do {
            certificate = try Self.parsed(der, validating: element)
        } catch let error as PurchaseVerificationError {
            throw error
        } catch {
            throw PKCS7SignedData.malformed("the certificate at offset \(element.offset) is not one OpenSSL reads: \(error)")
        }
    }

    /// Certificates OpenSSL has parsed, by their exact DER: a receipt carries the same three
    /// certificates as the last, and `d2i_X509` (its key decoded by OpenSSL 3's provider
    /// decoders) was 70 % of a receipt's verification. The same bytes are the same
    /// certificate, so sharing the parsed one changes nothing a check sees. At most
    /// ``parsedCapacity``; past it the memo starts over.
    private static let memo = Locked<[ChainKey: Certificate]>([:])
    static let parsedCapacity = 64

    /// A certificate not seen before is walked by ``BERReader`` all the way down first (the
    /// receipt was read shallowly); one seen before has the same bytes as one that was.
    private static func parsed(_ der: [UInt8], validating element: BERElement) throws -> Certificate {
        let key = ChainKey(der)
        if let known = memo.withLock({ $0[key] }) { return known }
        try element.validate()
        let certificate = try Certificate(derEncoded: der)
        memo.withLock { memo in
            if memo.count >= parsedCapacity { memo.removeAll(keepingCapacity: true) }
            memo[key] = certificate
        }
        return certificate
    }
}

func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789ABCDEF")
    return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
}
