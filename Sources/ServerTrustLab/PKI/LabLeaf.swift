public import ServerTrust
public import Foundation

/// An end-entity certificate, its key, and the chain a server would send with it.
public struct LabLeaf: Sendable {
    /// The leaf certificate.
    public let certificate: Certificate
    /// The leaf's private key.
    public let key: LabKey
    /// The CA that signed the leaf.
    public let issuer: LabCA

    /// What a server sends: the leaf, then the intermediates, nearest first; never the root.
    public var chain: [Certificate] { [certificate] + issuer.chain }

    /// ``chain`` as a PEM bundle, the form a TLS server loads.
    public var pemChain: String { LabPKI.pemBundle(chain) }

    /// The root this leaf chains to.
    public var root: Certificate { issuer.root }

    /// A ServerTrust `PeerTrust` for ``chain`` as presented by a server.
    ///
    /// - Parameters:
    ///   - anchors: default the leaf's own root.
    ///   - validationTime: default now.
    ///   - revocationLists: CRLs added to the default anchors; ignored when `anchors` is given.
    public func serverTrust(
        anchors: TrustAnchors? = nil,
        validationTime: Date = Date(),
        revocationLists: [CertificateRevocationList] = []
    ) throws -> PeerTrust {
        PeerTrust(
            presentedChain: chain,
            anchors: try anchors ?? issuer.trustAnchors(revocationLists: revocationLists),
            validationTime: validationTime)
    }

    init(certificate: Certificate, key: LabKey, issuer: LabCA) {
        self.certificate = certificate
        self.key = key
        self.issuer = issuer
    }
}
