extension RevocationTrustEvaluator {
    /// Revocation checking reads the stapled OCSP response first, so a TLS client asks for one.
    public var usesStapledOCSPResponse: Bool { true }
}

extension RevocationTrustEvaluator {
    /// Live OCSP and CRL fetches run inside the handshake unless
    /// ``RevocationOptions/networkAccessDisabled`` is set (``RevocationOptions/ocspStapled``,
    /// ``RevocationOptions/stapleRequired``).
    public var mayFetchRevocationData: Bool { !options.networkAccessDisabled }
}
