public import ServerTrust
public import Foundation

/// A certificate authority made in memory: its certificate, its key, and who issued it.
///
/// Everything a CA signs (certificates here, CRLs in `CRLBuilder.swift`, OCSP responses in a
/// builder of their own) is signed with ``key``; a new kind of signed object is added as an
/// extension in a new file using ``key`` and `CertificateBuilder.withX509(certificate)`.
public final class LabCA: Sendable, CustomStringConvertible {
    /// The CA's certificate (self-signed for a root).
    public let certificate: Certificate
    /// The CA's private key.
    public let key: LabKey
    /// The CA's subject name.
    public let name: LabName
    /// The CA that signed ``certificate``; nil for a root.
    public let issuer: LabCA?

    init(certificate: Certificate, key: LabKey, name: LabName, issuer: LabCA?) {
        self.certificate = certificate
        self.key = key
        self.name = name
        self.issuer = issuer
    }

    /// The certificates a server sends after a leaf this CA issued: this CA's certificate and
    /// its issuers', nearest first, without the root. Empty for a root.
    public var chain: [Certificate] {
        guard let issuer else { return [] }
        return [certificate] + issuer.chain
    }

    /// The self-signed certificate at the top of this CA's chain.
    public var root: Certificate { issuer?.root ?? certificate }

    /// Anchors holding only ``root``.
    public func trustAnchors(revocationLists: [CertificateRevocationList] = []) throws -> TrustAnchors {
        try TrustAnchors([root], revocationLists: revocationLists)
    }

    /// Signs `spec` with this CA's key.
    public func issue(_ spec: CertificateSpec) throws -> Certificate {
        try CertificateBuilder.build(spec, issuer: certificate, issuerKey: key)
    }

    /// Signs `spec` and returns it with its key as a CA that can sign in turn.
    ///
    /// `spec` is used as given — it need not be a CA — so a test can make an end-entity
    /// certificate sign another one and check that validation refuses it.
    public func issueSigner(_ spec: CertificateSpec) throws -> LabCA {
        LabCA(certificate: try issue(spec), key: spec.subjectKey, name: spec.subject, issuer: self)
    }

    /// An intermediate CA.
    ///
    /// - Parameters:
    ///   - commonName: the subject CN. Two intermediates may share a name (and differ in key).
    ///   - key: default a fresh P-256 key.
    ///   - pathLength: basicConstraints pathLenConstraint. Default none.
    ///   - notBefore: default a day ago.
    ///   - notAfter: default five years from now.
    ///   - permittedDNSNames: nameConstraints permitted DNS subtrees. Default none (no extension).
    ///   - serialNumber: hexadecimal; default 16 random bytes.
    public func issueIntermediate(
        commonName: String = "Test Intermediate CA",
        key: LabKey = .ecP256(),
        pathLength: Int? = nil,
        notBefore: Date = Date(timeIntervalSinceNow: -86400),
        notAfter: Date = Date(timeIntervalSinceNow: 5 * 365 * 86400),
        permittedDNSNames: [String] = [],
        serialNumber: String? = nil
    ) throws -> LabCA {
        try issueSigner(
            CertificateSpec(
                subject: LabName(commonName: commonName), subjectKey: key, serialNumber: serialNumber,
                notBefore: notBefore, notAfter: notAfter, isCA: true, pathLength: pathLength,
                extendedKeyUsage: [], permittedDNSNames: permittedDNSNames))
    }

    /// A certificate for `other`'s name and key signed by this CA, returned as a CA: what
    /// `other` issues then chains to this CA's root as well as to its own.
    public func crossSign(
        _ other: LabCA,
        notBefore: Date = Date(timeIntervalSinceNow: -86400),
        notAfter: Date = Date(timeIntervalSinceNow: 5 * 365 * 86400),
        serialNumber: String? = nil
    ) throws -> LabCA {
        try issueSigner(
            CertificateSpec(
                subject: other.name, subjectKey: other.key, serialNumber: serialNumber,
                notBefore: notBefore, notAfter: notAfter, isCA: true, extendedKeyUsage: []))
    }

    /// A server certificate, with the chain a server would send for it.
    ///
    /// - Parameters:
    ///   - dnsNames: subjectAltName DNS names.
    ///   - ipAddresses: subjectAltName IP addresses (IPv4 or IPv6 text).
    ///   - commonName: the subject CN; default the first DNS name or IP address.
    ///   - key: default a fresh P-256 key.
    ///   - notBefore: default an hour ago.
    ///   - notAfter: default 30 days from now.
    ///   - extendedKeyUsage: default `[.serverAuth]`; `[]` omits the extension.
    ///   - isCA: basicConstraints cA. Default false.
    ///   - keyUsage: default digitalSignature, plus keyEncipherment for an RSA key.
    ///   - ocspURL: AIA OCSP responder. Default none.
    ///   - crlURL: CRL distribution point. Default none.
    ///   - mustStaple: TLS feature status_request. Default false.
    ///   - serialNumber: hexadecimal; default 16 random bytes.
    public func issueLeaf(
        dnsNames: [String] = [],
        ipAddresses: [String] = [],
        commonName: String? = nil,
        key: LabKey = .ecP256(),
        notBefore: Date = Date(timeIntervalSinceNow: -3600),
        notAfter: Date = Date(timeIntervalSinceNow: 30 * 86400),
        extendedKeyUsage: [CertificateSpec.ExtendedKeyUsage] = [.serverAuth],
        isCA: Bool = false,
        keyUsage: [CertificateSpec.KeyUsage]? = nil,
        ocspURL: String? = nil,
        crlURL: String? = nil,
        mustStaple: Bool = false,
        serialNumber: String? = nil
    ) throws -> LabLeaf {
        let name = commonName ?? dnsNames.first ?? ipAddresses.first ?? "Test Leaf"
        let spec = CertificateSpec(
            subject: LabName(commonName: name), subjectKey: key, serialNumber: serialNumber,
            notBefore: notBefore, notAfter: notAfter, isCA: isCA, keyUsage: keyUsage,
            extendedKeyUsage: extendedKeyUsage, dnsNames: dnsNames, ipAddresses: ipAddresses,
            ocspURL: ocspURL, crlURL: crlURL, mustStaple: mustStaple)
        return LabLeaf(certificate: try issue(spec), key: key, issuer: self)
    }

    /// `LabCA(CN=…, sha256/…)`: the name and the key's pin, never the key.
    public var description: String { "LabCA(\(name), \(key.pin))" }
}
