public import ServerTrust

extension TrustFailureReporter.Configuration {
    /// Takes the report URIs a policy file names for every host (its top-level `reportURIs`);
    /// each host's own are in its `HostPolicy.reportURIs`, which the file's manager holds.
    public mutating func apply(_ policy: TrustPolicyFile) {
        reportURIs = policy.reportURIs
    }
}
