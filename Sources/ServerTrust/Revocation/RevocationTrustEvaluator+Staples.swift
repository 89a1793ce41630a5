extension RevocationTrustEvaluator {
    /// Revocation checking reads the stapled OCSP response first, so a TLS client asks for one.
    public var usesStapledOCSPResponse: Bool { true }
}
