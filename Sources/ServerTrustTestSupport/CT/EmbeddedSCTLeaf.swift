public import Foundation
internal import COpenSSL
public import ServerTrust
public import ServerTrustLab

/// A leaf issued the way a CA logs it (RFC 6962 §3.1): a precertificate carrying the critical
/// poison extension, SCTs for it, then the final certificate with the SCT list extension and
/// otherwise the same TBSCertificate, extension order included.
public struct EmbeddedSCTLeaf: Sendable {
    /// The final certificate, with the SCT list extension.
    public let certificate: Certificate
    /// The precertificate the logs were shown: same TBS plus the poison extension, signed by the CA.
    public let precertificate: Certificate
    /// The precertificate's TBSCertificate without the poison extension: what the SCTs sign.
    public let tbsWithoutPoison: [UInt8]
    /// The SCTs embedded in ``certificate``, in order.
    public let signedCertificateTimestamps: [[UInt8]]
    /// The leaf's private key.
    public let key: LabKey
    /// The CA that signed the leaf and the precertificate.
    public let issuer: LabCA

    /// What a server sends: the leaf, then the intermediates, nearest first.
    public var chain: [Certificate] { [certificate] + issuer.chain }
    /// ``chain`` as a PEM bundle.
    public var pemChain: String { LabPKI.pemBundle(chain) }
    /// The root the leaf chains to.
    public var root: Certificate { issuer.root }
    /// The identity an in-process `LocalTLSServer` serves.
    public var identity: LocalTLSServer.Identity { .init(chain: chain, privateKeyPEM: key.pemPrivateKey) }
}

/// What a log is shown of a precertificate, for making its SCT.
public struct Precertificate: Sendable {
    /// The precertificate, poison extension included, signed by the issuing CA.
    public let certificate: Certificate
    /// Its TBSCertificate without the poison extension.
    public let tbsWithoutPoison: [UInt8]
    /// The issuing CA's SubjectPublicKeyInfo, DER.
    public let issuerPublicKeyDER: [UInt8]
}

extension TestCTLog {
    /// An SCT for `precertificate`, as the log returns it to the CA.
    public func precertificateSCT(
        for precertificate: Precertificate, at timestamp: Date, extensions: [UInt8] = [], forgery: Forgery? = nil
    ) throws -> [UInt8] {
        try precertificateSCT(
            tbsWithoutPoison: precertificate.tbsWithoutPoison, issuerPublicKeyDER: precertificate.issuerPublicKeyDER,
            at: timestamp, extensions: extensions, forgery: forgery)
    }
}

extension LabCA {
    /// A server certificate with SCTs from `logs` embedded, each log having signed the
    /// precertificate at `sctTimestamp`.
    ///
    /// - Parameters:
    ///   - logs: the logs, in the order their SCTs are embedded.
    ///   - dnsNames: subjectAltName DNS names.
    ///   - key: default a fresh P-256 key.
    ///   - notBefore: default an hour ago.
    ///   - lifetime: notAfter − notBefore; the policy asks 2 SCTs up to 180 days, 3 beyond. Default 90 days.
    ///   - sctTimestamp: default `notBefore`.
    ///   - sctExtensions: every SCT's `extensions` bytes. Default none.
    ///   - serialNumber: hexadecimal; default 16 random bytes.
    ///   - finalSerialNumber: a different serial for the final certificate only, so the SCTs sign
    ///     a TBS that is not the final certificate's. Default nil (the same certificate).
    public func issueLeafWithEmbeddedSCTs(
        from logs: [TestCTLog],
        dnsNames: [String] = [],
        key: LabKey = .ecP256(),
        notBefore: Date = Date(timeIntervalSinceNow: -3600),
        lifetime: TimeInterval = 90 * 86400,
        sctTimestamp: Date? = nil,
        sctExtensions: [UInt8] = [],
        serialNumber: String? = nil,
        finalSerialNumber: String? = nil
    ) throws -> EmbeddedSCTLeaf {
        let spec = CertificateSpec(
            subject: LabName(commonName: dnsNames.first ?? "Test Leaf"), subjectKey: key, serialNumber: serialNumber,
            notBefore: notBefore, notAfter: notBefore.addingTimeInterval(lifetime), dnsNames: dnsNames)
        var finalSpec: CertificateSpec?
        if let finalSerialNumber {
            finalSpec = spec
            finalSpec?.serialNumber = finalSerialNumber
        }
        return try issueWithEmbeddedSCTs(spec, finalSpec: finalSpec) { precertificate in
            try logs.map { try $0.precertificateSCT(for: precertificate, at: sctTimestamp ?? notBefore, extensions: sctExtensions) }
        }
    }

    /// Issues `spec` with embedded SCTs: builds the precertificate, asks `scts` for the SCTs to
    /// embed (any, forged, duplicated, from any log, in any order), then signs the final
    /// certificate.
    ///
    /// - Parameters:
    ///   - spec: the certificate.
    ///   - finalSpec: when given, the final certificate is built from it instead (a changed
    ///     serial or subjectAltName), so the embedded SCTs sign a TBS other than the final
    ///     certificate's: an attack a verifier must catch. Give `spec` an explicit serial
    ///     number, or the two differ in their serials too. Default nil.
    ///   - scts: the SCT list to embed, made from the precertificate.
    public func issueWithEmbeddedSCTs(
        _ spec: CertificateSpec,
        finalSpec: CertificateSpec? = nil,
        scts: (Precertificate) throws -> [[UInt8]]
    ) throws -> EmbeddedSCTLeaf {
        let tbs = try CertificateSurgery.tbs(of: issue(spec))
        let precertificate = try CertificateSurgery.signed(
            CertificateSurgery.appendingExtension(
                to: tbs, oid: SCTListEncoding.poisonExtensionOID, critical: true, value: [0x05, 0x00]),
            by: self)
        let request = Precertificate(
            certificate: precertificate, tbsWithoutPoison: tbs, issuerPublicKeyDER: certificate.subjectPublicKeyInfoDER)
        let list = try scts(request)
        let finalTBS = try finalSpec.map { try CertificateSurgery.tbs(of: issue($0)) } ?? tbs
        let final = try CertificateSurgery.signed(
            CertificateSurgery.appendingExtension(
                to: finalTBS, oid: SCTListEncoding.certificateExtensionOID, critical: false,
                value: SCTListEncoding.extensionValue(list)),
            by: self)
        return EmbeddedSCTLeaf(
            certificate: final, precertificate: precertificate, tbsWithoutPoison: tbs, signedCertificateTimestamps: list,
            key: spec.subjectKey, issuer: self)
    }
}

/// Edits a certificate's DER: its TBSCertificate out, an extension appended, signed again.
enum CertificateSurgery {
    /// The TBSCertificate of `certificate`, DER.
    static func tbs(of certificate: Certificate) throws -> [UInt8] {
        try DERWriter.children(ofSequence: certificate.derEncoded)[0]
    }

    /// `tbs` with the extension `oid` appended after its last extension (`tbs` must have
    /// extensions: lab certificates always do).
    static func appendingExtension(to tbs: [UInt8], oid: String, critical: Bool, value: [UInt8]) throws -> [UInt8] {
        var fields = try DERWriter.children(ofSequence: tbs)
        guard let index = fields.lastIndex(where: { $0.first == 0xA3 }) else {
            throw LabPKIError("the TBSCertificate has no extensions to append to")
        }
        let extensions = try DERWriter.children(ofSequence: DERWriter.content(ofElement: fields[index]))
        let object = try check(OBJ_txt2obj(oid, 1), "OBJ_txt2obj(\(oid))")
        defer { ASN1_OBJECT_free(object) }
        let oidDER = try OpenSSLEncoding.der { i2d_ASN1_OBJECT(object, $0) }
        let added = DERWriter.element(
            tag: 0x30, content: oidDER + (critical ? [0x01, 0x01, 0xFF] : []) + DERWriter.element(tag: 0x04, content: value))
        fields[index] = DERWriter.element(tag: 0xA3, content: DERWriter.element(tag: 0x30, content: extensions.flatMap { $0 } + added))
        return DERWriter.element(tag: 0x30, content: fields.flatMap { $0 })
    }

    /// A certificate of `tbs` signed with `ca`'s key (whose algorithm `tbs` already names).
    static func signed(_ tbs: [UInt8], by ca: LabCA) throws -> Certificate {
        let algorithm = try DERWriter.children(ofSequence: tbs)[2]
        let signature = try ca.key.signature(over: tbs)
        let der = DERWriter.element(tag: 0x30, content: tbs + algorithm + DERWriter.element(tag: 0x03, content: [0x00] + signature))
        return try Certificate(derEncoded: der)
    }
}
