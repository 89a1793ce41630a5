public import ServerTrust
public import ServerTrustLab

extension LabPKI {
    /// A certificate for `spec` that names itself as its issuer, like a self-signed one, but is
    /// signed with `signingKey` instead of `spec.subjectKey`.
    ///
    /// What an attacker without the subject's private key makes when it copies a CA's
    /// certificate — same name, same public key — with fields of its own choosing (a later
    /// notAfter, no name constraints, no path length): the copy carries the genuine key, so it
    /// matches a pin on that key, but its self-signature does not verify.
    public static func makeSelfIssued(_ spec: CertificateSpec, signedWith signingKey: LabKey) throws -> Certificate {
        try CertificateBuilder.build(spec, issuer: nil, issuerKey: signingKey)
    }
}
