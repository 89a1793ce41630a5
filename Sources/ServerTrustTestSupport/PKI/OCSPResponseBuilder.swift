public import ServerTrust
public import Foundation
internal import COpenSSL
public import ServerTrustLab

/// Builds DER OCSP responses with OpenSSL (`OCSP_basic_add1_status`, `OCSP_basic_sign`,
/// `OCSP_response_create`), correct by default and broken in exactly the way a test asks.
///
/// ```swift
/// let der = try OCSPResponseBuilder(signer: ca)
///     .adding(.revoked(reason: .keyCompromise, date: .days(-2)), for: leaf.certificate, issuedBy: ca)
///     .build()
/// ```
///
/// Every setter returns a modified copy, so a test starts from a good response and changes the
/// one thing it is about. OpenSSL stamps producedAt with the real clock; ``producedAt`` replaces
/// it, and ``signingKey`` or ``corruptsSignature`` break the signature, by re-signing the
/// encoded response body.
public struct OCSPResponseBuilder: Sendable {
    /// The certStatus of a single response.
    public enum CertificateStatus: Hashable, Sendable {
        case good
        /// `reason: nil` omits revocationReason.
        case revoked(reason: RevocationReason?, date: Date)
        case unknown
    }

    /// The hash of a CertID.
    public enum CertificateIDHash: Hashable, Sendable {
        case sha1
        case sha256
    }

    /// How the response names its signer (RFC 6960 §4.2.2.3).
    public enum ResponderID: Hashable, Sendable {
        case byName
        case byKey
    }

    /// One SingleResponse.
    public struct SingleResponse: Sendable {
        /// The certificate the response is about.
        public var certificate: Certificate
        /// The issuer whose name and key go into the CertID.
        public var issuer: Certificate
        public var status: CertificateStatus
        /// Default an hour ago.
        public var thisUpdate: Date
        /// Default a day from now; nil omits it.
        public var nextUpdate: Date?
        /// Default SHA-1.
        public var hash: CertificateIDHash
        /// A critical extension (by dotted OID, with empty content) added to this single response.
        public var criticalExtensionOID: String?
        /// SCTs (TLS encoding) in the single response's SCT list extension
        /// (1.3.6.1.4.1.11129.2.4.5, RFC 6962 §3.3); nil omits it.
        public var signedCertificateTimestamps: [[UInt8]]? = nil
    }

    /// The certificate whose name or key the responder ID carries, and whose key signs.
    public var signerCertificate: Certificate
    /// The key that signs (must belong to ``signerCertificate``; see ``signingKey``).
    public var signerKey: LabKey
    /// The single responses, in order.
    public var responses: [SingleResponse] = []
    /// Default ``ResponderID/byName``.
    public var responderID: ResponderID = .byName
    /// Certificates included in the response; a delegated signer's builder starts with its own.
    public var includedCertificates: [Certificate] = []
    /// producedAt; nil (the default) keeps OpenSSL's stamp of the real clock.
    public var producedAt: Date?
    /// A nonce extension with these bytes, as `OCSP_basic_add1_nonce` writes it. Default none.
    public var nonce: [UInt8]?
    /// A critical response extension (by dotted OID, empty content). Default none.
    public var criticalResponseExtensionOID: String?
    /// Signs with this key instead of ``signerKey`` (the responder ID still names
    /// ``signerCertificate``): a response "signed by the wrong key". Default nil.
    public var signingKey: LabKey?
    /// Flips a bit of the signature after signing. Default false.
    public var corruptsSignature = false

    /// A response the CA signs itself.
    public init(signer ca: LabCA) {
        signerCertificate = ca.certificate
        signerKey = ca.key
    }

    /// A response signed by a delegated responder (made by ``LabCA/issueOCSPResponder(commonName:hasOCSPSigningEKU:key:notBefore:notAfter:)``
    /// or any other ``LabCA``), which includes its certificate.
    public init(delegatedResponder responder: LabCA) {
        signerCertificate = responder.certificate
        signerKey = responder.key
        includedCertificates = [responder.certificate]
    }

    /// Adds a single response about `certificate`, issued by `issuer`.
    ///
    /// - Parameters:
    ///   - thisUpdate: default an hour ago.
    ///   - nextUpdate: default a day from now; nil omits it.
    ///   - hash: the CertID hash. Default SHA-1.
    ///   - criticalExtensionOID: a critical extension on this single response. Default none.
    ///   - signedCertificateTimestamps: SCTs for the SCT list extension (non-critical), as a CA
    ///     that logs its certificates staples them. Default none.
    public func adding(
        _ status: CertificateStatus,
        for certificate: Certificate,
        issuedBy issuer: LabCA,
        thisUpdate: Date = Date(timeIntervalSinceNow: -3600),
        nextUpdate: Date? = Date(timeIntervalSinceNow: 86400),
        hash: CertificateIDHash = .sha1,
        criticalExtensionOID: String? = nil,
        signedCertificateTimestamps: [[UInt8]]? = nil
    ) -> OCSPResponseBuilder {
        var copy = self
        copy.responses.append(
            SingleResponse(
                certificate: certificate, issuer: issuer.certificate, status: status, thisUpdate: thisUpdate,
                nextUpdate: nextUpdate, hash: hash, criticalExtensionOID: criticalExtensionOID,
                signedCertificateTimestamps: signedCertificateTimestamps))
        return copy
    }

    /// A copy with `change` applied, for the settings that have no `adding` form.
    public func with(_ change: (inout OCSPResponseBuilder) -> Void) -> OCSPResponseBuilder {
        var copy = self
        change(&copy)
        return copy
    }

    /// The DER OCSPResponse, status successful.
    public func build() throws -> [UInt8] {
        let basic = try check(OCSP_BASICRESP_new(), "OCSP_BASICRESP_new")
        defer { OCSP_BASICRESP_free(basic) }
        for response in responses { try add(response, to: basic) }
        if var nonce {
            try check(OCSP_basic_add1_nonce(basic, &nonce, Int32(nonce.count)), "OCSP_basic_add1_nonce")
        }
        if let oid = criticalResponseExtensionOID {
            let ext = try Self.criticalExtension(oid)
            defer { X509_EXTENSION_free(ext) }
            try check(OCSP_BASICRESP_add_ext(basic, ext, -1), "OCSP_BASICRESP_add_ext")
        }
        for certificate in includedCertificates {
            try CertificateBuilder.withX509(certificate) { try check(OCSP_basic_add1_cert(basic, $0), "OCSP_basic_add1_cert") }
        }
        var flags = UInt(OCSP_NOCERTS)  // certificates are added above, exactly as asked
        if responderID == .byKey { flags |= UInt(OCSP_RESPID_KEY) }
        try CertificateBuilder.withX509(signerCertificate) { signer in
            try check(OCSP_basic_sign(basic, signer, signerKey.pkey, signerKey.signingDigest, nil, flags), "OCSP_basic_sign")
        }
        if let producedAt {
            // OCSP_basic_sign always stamps the real clock; overwrite the stamp, then re-sign below.
            let stamp = try check(OCSP_resp_get0_produced_at(basic), "OCSP_resp_get0_produced_at")
            _ = try check(ASN1_GENERALIZEDTIME_set(openSSLPointer(stamp.openSSLRaw), OpenSSLEncoding.timeT(producedAt)), "setting producedAt")
        }
        var body = try OpenSSLEncoding.der { i2d_OCSP_BASICRESP(basic, $0) }
        if producedAt != nil || signingKey != nil || corruptsSignature {
            body = try Self.resign(body, key: signingKey ?? signerKey, corrupt: corruptsSignature)
        }
        return try Self.successfulResponse(wrapping: body)
    }

    /// An error response (no body): `tryLater`, `malformedRequest`, …
    public static func errorResponse(_ status: OCSPResponseStatus) throws -> [UInt8] {
        let response = try check(OCSP_response_create(Int32(status.rawValue), nil), "OCSP_response_create")
        defer { OCSP_RESPONSE_free(response) }
        return try OpenSSLEncoding.der { i2d_OCSP_RESPONSE(response, $0) }
    }

    /// `count` random bytes: not an OCSP response.
    public static func garbage(count: Int = 256) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255) }
    }

    /// A DER SEQUENCE header announcing `count` bytes followed by that many zero bytes: larger
    /// than any response should be.
    package static func oversized(count: Int = OCSPResponse.maximumDERSize + 1) -> [UInt8] {
        DERWriter.sequence(header: count) + [UInt8](repeating: 0, count: count)
    }

    // MARK: - Building

    private func add(_ response: SingleResponse, to basic: OpaquePointer) throws {
        let digest = response.hash == .sha1 ? EVP_sha1() : EVP_sha256()
        let id = try CertificateBuilder.withX509(response.certificate) { subject in
            try CertificateBuilder.withX509(response.issuer) { issuer in
                try check(OCSP_cert_to_id(digest, subject, issuer), "OCSP_cert_to_id")
            }
        }
        defer { OCSP_CERTID_free(id) }
        // ASN1_TIMEs as raw pointers (opaque from OpenSSL 4: OpenSSLObjectPointer).
        let thisUpdate = try Self.time(response.thisUpdate)
        defer { ASN1_TIME_free(openSSLPointer(thisUpdate)) }
        let nextUpdate = try response.nextUpdate.map(Self.time)
        defer { if let nextUpdate { ASN1_TIME_free(openSSLPointer(nextUpdate)) } }
        var revocationTime: UnsafeMutableRawPointer?
        defer { if let revocationTime { ASN1_TIME_free(openSSLPointer(revocationTime)) } }
        let status: Int32
        var reason: Int32 = OCSP_REVOKED_STATUS_NOSTATUS
        switch response.status {
        case .good:
            status = V_OCSP_CERTSTATUS_GOOD
        case .revoked(let revocationReason, let date):
            status = V_OCSP_CERTSTATUS_REVOKED
            revocationTime = try Self.time(date)
            if let revocationReason { reason = Int32(revocationReason.rawValue) }
        case .unknown:
            status = V_OCSP_CERTSTATUS_UNKNOWN
        }
        let single = try check(
            OCSP_basic_add1_status(
                basic, id, status, reason, revocationTime.map { openSSLPointer($0) }, openSSLPointer(thisUpdate), nextUpdate.map { openSSLPointer($0) }),
            "OCSP_basic_add1_status")
        if let oid = response.criticalExtensionOID {
            let ext = try Self.criticalExtension(oid)
            defer { X509_EXTENSION_free(ext) }
            try check(OCSP_SINGLERESP_add_ext(single, ext, -1), "OCSP_SINGLERESP_add_ext")
        }
        if let scts = response.signedCertificateTimestamps {
            let ext = try Self.extensionWithValue(SCTListEncoding.ocspExtensionOID, critical: false, value: SCTListEncoding.extensionValue(scts))
            defer { X509_EXTENSION_free(ext) }
            try check(OCSP_SINGLERESP_add_ext(single, ext, -1), "OCSP_SINGLERESP_add_ext (SCT list)")
        }
    }

    private static func time(_ date: Date) throws -> UnsafeMutableRawPointer {
        try check(ASN1_TIME_set(nil, OpenSSLEncoding.timeT(date)), "ASN1_TIME_set").openSSLRaw
    }

    /// A critical extension `oid` whose value is an empty OCTET STRING's encoding.
    private static func criticalExtension(_ oid: String) throws -> OpaquePointer {
        try extensionWithValue(oid, critical: true, value: [0x04, 0x00])
    }

    /// An extension `oid` whose extnValue holds `value` (a DER encoding).
    private static func extensionWithValue(_ oid: String, critical: Bool, value content: [UInt8]) throws -> OpaquePointer {
        let object = try check(OBJ_txt2obj(oid, 1), "OBJ_txt2obj(\(oid))")
        defer { ASN1_OBJECT_free(object) }
        let value = try check(ASN1_OCTET_STRING_new(), "ASN1_OCTET_STRING_new")
        defer { ASN1_OCTET_STRING_free(value) }
        try check(ASN1_OCTET_STRING_set(value, content, Int32(content.count)), "ASN1_OCTET_STRING_set")
        return try check(X509_EXTENSION_create_by_OBJ(nil, object, critical ? 1 : 0, value), "X509_EXTENSION_create_by_OBJ")
    }

    /// Re-signs a DER BasicOCSPResponse's tbsResponseData with `key`, keeping its
    /// signatureAlgorithm and certificates (so `key` should be of the same type as the signer's).
    private static func resign(_ body: [UInt8], key: LabKey, corrupt: Bool) throws -> [UInt8] {
        let parts = try DERWriter.children(ofSequence: body)
        guard parts.count >= 3 else { throw LabPKIError("a BasicOCSPResponse has at least three parts") }
        var signature = try sign(parts[0], with: key)
        if corrupt { signature[signature.count / 2] ^= 0x01 }
        let bitString = DERWriter.element(tag: 0x03, content: [0x00] + signature)
        return DERWriter.element(tag: 0x30, content: parts[0] + parts[1] + bitString + parts.dropFirst(3).flatMap { $0 })
    }

    private static func sign(_ message: [UInt8], with key: LabKey) throws -> [UInt8] {
        let context = try check(EVP_MD_CTX_new(), "EVP_MD_CTX_new")
        defer { EVP_MD_CTX_free(context) }
        try check(EVP_DigestSignInit(context, nil, key.signingDigest, nil, key.pkey), "EVP_DigestSignInit")
        var length = 0
        try check(EVP_DigestSign(context, nil, &length, message, message.count), "EVP_DigestSign (length)")
        var signature = [UInt8](repeating: 0, count: length)
        try check(EVP_DigestSign(context, &signature, &length, message, message.count), "EVP_DigestSign")
        return Array(signature.prefix(length))
    }

    private static func successfulResponse(wrapping body: [UInt8]) throws -> [UInt8] {
        let basic = try body.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return try check(d2i_OCSP_BASICRESP(nil, &cursor, buffer.count), "d2i_OCSP_BASICRESP")
        }
        defer { OCSP_BASICRESP_free(basic) }
        let response = try check(OCSP_response_create(OCSP_RESPONSE_STATUS_SUCCESSFUL, basic), "OCSP_response_create")
        defer { OCSP_RESPONSE_free(response) }
        return try OpenSSLEncoding.der { i2d_OCSP_RESPONSE(response, $0) }
    }
}

extension LabCA {
    /// A delegated OCSP responder certified by this CA (RFC 6960 §4.2.2.2).
    ///
    /// - Parameters:
    ///   - commonName: default "Test OCSP Responder".
    ///   - hasOCSPSigningEKU: include id-kp-OCSPSigning, without which the delegation is not
    ///     valid. Default true.
    ///   - key: default a fresh P-256 key.
    ///   - notBefore: default an hour ago.
    ///   - notAfter: default 30 days from now.
    public func issueOCSPResponder(
        commonName: String = "Test OCSP Responder",
        hasOCSPSigningEKU: Bool = true,
        key: LabKey = .ecP256(),
        notBefore: Date = Date(timeIntervalSinceNow: -3600),
        notAfter: Date = Date(timeIntervalSinceNow: 30 * 86400)
    ) throws -> LabCA {
        try issueSigner(
            CertificateSpec(
                subject: LabName(commonName: commonName), subjectKey: key, notBefore: notBefore, notAfter: notAfter,
                keyUsage: [.digitalSignature], extendedKeyUsage: hasOCSPSigningEKU ? [.ocspSigning] : []))
    }

    /// A response from this CA about `certificate` (which it issued), with one single response.
    ///
    /// Defaults as ``OCSPResponseBuilder/adding(_:for:issuedBy:thisUpdate:nextUpdate:hash:criticalExtensionOID:signedCertificateTimestamps:)``.
    public func makeOCSPResponseDER(
        _ status: OCSPResponseBuilder.CertificateStatus = .good,
        for certificate: Certificate,
        thisUpdate: Date = Date(timeIntervalSinceNow: -3600),
        nextUpdate: Date? = Date(timeIntervalSinceNow: 86400),
        signedCertificateTimestamps: [[UInt8]]? = nil
    ) throws -> [UInt8] {
        try OCSPResponseBuilder(signer: self)
            .adding(
                status, for: certificate, issuedBy: self, thisUpdate: thisUpdate, nextUpdate: nextUpdate,
                signedCertificateTimestamps: signedCertificateTimestamps)
            .build()
    }
}

/// Just enough DER to split a SEQUENCE into its elements and to write one back.
enum DERWriter {
    static func element(tag: UInt8, content: [UInt8]) -> [UInt8] {
        [tag] + length(content.count) + content
    }

    static func sequence(header count: Int) -> [UInt8] { [0x30] + length(count) }

    static func length(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var remaining = count
        while remaining > 0 {
            bytes.insert(UInt8(remaining & 0xFF), at: 0)
            remaining >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    /// The complete encodings (tag, length, content) of the elements of a DER SEQUENCE.
    static func children(ofSequence der: [UInt8]) throws -> [[UInt8]] {
        let (contentStart, contentLength) = try header(der, at: 0)
        guard der.first == 0x30, contentStart + contentLength == der.count else {
            throw LabPKIError("not a single DER SEQUENCE")
        }
        var children: [[UInt8]] = []
        var offset = contentStart
        while offset < der.count {
            let (start, length) = try header(der, at: offset)
            children.append(Array(der[offset..<(start + length)]))
            offset = start + length
        }
        return children
    }

    /// The content (without tag and length) of the single DER element `der`.
    static func content(ofElement der: [UInt8]) throws -> [UInt8] {
        let (start, length) = try header(der, at: 0)
        guard start + length == der.count else { throw LabPKIError("not a single DER element") }
        return Array(der[start...])
    }

    /// Where the content of the element at `offset` starts, and its length (single-byte tags).
    private static func header(_ der: [UInt8], at offset: Int) throws -> (Int, Int) {
        guard offset + 1 < der.count else { throw LabPKIError("truncated DER") }
        let first = der[offset + 1]
        if first < 0x80 { return (offset + 2, Int(first)) }
        let count = Int(first & 0x7F)
        guard (1...4).contains(count), offset + 2 + count <= der.count else { throw LabPKIError("bad DER length") }
        let length = der[(offset + 2)..<(offset + 2 + count)].reduce(0) { $0 << 8 | Int($1) }
        guard offset + 2 + count + length <= der.count else { throw LabPKIError("truncated DER") }
        return (offset + 2 + count, length)
    }
}
