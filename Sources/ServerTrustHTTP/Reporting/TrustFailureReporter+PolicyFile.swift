public import ServerTrust

extension TrustFailureReporter.Configuration {
    /// Takes the report URIs of a policy file: its top-level ones for every host, and each
    /// host's own for that host's pattern.
    public mutating func apply(_ policy: TrustPolicyFile) {
        reportURIs = policy.reportURIs
        legacyReportURIsByPattern = policy.reportURIsByPattern
    }
}
