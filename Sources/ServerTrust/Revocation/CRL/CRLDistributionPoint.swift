internal import COpenSSL
internal import CServerTrustShims

/// One DistributionPoint of a certificate's cRLDistributionPoints or freshestCRL extension
/// (RFC 5280 §4.2.1.13, §4.2.1.15), as far as live checking needs it.
struct CRLDistributionPoint: Hashable, Sendable {
    /// The URIs of the fullName, in order; empty for a nameRelativeToCRLIssuer or no name.
    let uris: [String]
    /// The point serves only some revocation reasons, so its CRL alone cannot say "good".
    let hasReasons: Bool
    /// The CRL is issued by someone other than the certificate's issuer (an indirect CRL).
    let hasCRLIssuer: Bool

    /// The `http://` and `https://` URIs a fetcher can be asked for.
    var fetchableURLs: [String] { uris.filter(isFetchableURL) }

    /// Whether this point can give a complete answer from the certificate's own issuer.
    var isUsable: Bool { !hasReasons && !hasCRLIssuer && !fetchableURLs.isEmpty }
}

func isFetchableURL(_ url: String) -> Bool {
    let lowered = url.lowercased()
    return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
}

extension Certificate {
    /// URIs of the CRL distribution points extension: every URI of every point's fullName, in
    /// order, empty ones left out.
    ///
    /// The same parse as live CRL checking uses (`CRLDistributionPoint`), which is why it is
    /// declared here rather than beside the other extensions in ServerTrustCertificates: bytes
    /// outside printable ASCII, which no valid URI holds, show as `\xNN`, as in `dnsNames`.
    public var crlDistributionPoints: [String] {
        distributionPoints.flatMap(\.uris).filter { !$0.isEmpty }
    }

    /// The certificate's cRLDistributionPoints.
    var distributionPoints: [CRLDistributionPoint] { parsedDistributionPoints(nid: NID_crl_distribution_points) }

    /// The certificate's freshestCRL points: where delta CRLs are published.
    var freshestCRLPoints: [CRLDistributionPoint] { parsedDistributionPoints(nid: NID_freshest_crl) }

    /// Whether basicConstraints marks the certificate as a CA.
    var isCA: Bool { X509_get_extension_flags(x509) & UInt32(EXFLAG_CA) != 0 }

    private func parsedDistributionPoints(nid: Int32) -> [CRLDistributionPoint] {
        guard let raw = X509_get_ext_d2i(x509, nid, nil, nil) else { return [] }
        let points = OpaquePointer(raw)
        defer { CRL_DIST_POINTS_free(points) }
        return parseDistributionPoints(points)
    }
}

/// The points of a `STACK_OF(DIST_POINT)`, which the stack keeps owning.
func parseDistributionPoints(_ stack: OpaquePointer) -> [CRLDistributionPoint] {
    (0..<OPENSSL_sk_num(stack)).compactMap { index in
        guard let raw = OPENSSL_sk_value(stack, index) else { return nil }
        let point = raw.assumingMemoryBound(to: DIST_POINT.self).pointee
        return CRLDistributionPoint(
            uris: fullNameURIs(point.distpoint), hasReasons: point.reasons != nil, hasCRLIssuer: point.CRLissuer != nil)
    }
}

/// The URIs of a DistributionPointName's fullName; empty for a relative name.
func fullNameURIs(_ name: UnsafeMutablePointer<DIST_POINT_NAME>?) -> [String] {
    guard let name, name.pointee.type == 0, let names = name.pointee.name.fullname else { return [] }
    return (0..<CServerTrustShims_sk_GENERAL_NAME_num(names)).compactMap { index in
        guard let general = CServerTrustShims_sk_GENERAL_NAME_value(names, index), general.pointee.type == GEN_URI,
            let uri = general.pointee.d.uniformResourceIdentifier
        else { return nil }
        return asn1StringText(uri)
    }
}
