import ServerTrust
public import ServerTrustPurchases
public import ServerTrustTUF

extension TrustUpdateClient {
    /// Where the repository is and what to read from it.
    public struct Configuration: Sendable {
        /// The trusted-metadata store (created if missing; keep it between runs: rollback
        /// protection lives there). Targets are cached in its `targets` subdirectory.
        public var metadataDirectory: String
        /// The root to start from when the store has none (compiled in by the build plugin,
        /// or read from a file); nil when the store is initialised otherwise.
        public var initialRoot: InitialRoot?
        /// `BASE/metadata/`.
        public var metadataBaseURL: String
        /// `BASE/targets/`.
        public var targetBaseURL: String
        /// The policy target; default `policy.json`.
        public var policyTarget = "policy.json"
        /// The deny-list target, or nil for none; default `denylist.json` (absent from the
        /// repository: no delivered deny-list).
        public var denyListTarget: String? = "denylist.json"
        /// The response-signing key set (JWKS), or nil for none; default `jwks.json` (absent
        /// from the repository: none).
        public var signingKeysTarget: String? = "jwks.json"
        /// The Certificate Transparency log list (v3 JSON, as `CTLogList(json:fileName:)`
        /// reads it), or nil for none; default `ct_log_list.json` (absent from the repository:
        /// the floor's list stays). Put in force with the policy delivered beside it, by
        /// replacing the floor's `CertificateTransparencyLogs`; a list older than the one in
        /// force is refused.
        public var certificateTransparencyLogListTarget: String? = "ct_log_list.json"
        /// The App Store signing trust — roots, receipt intermediates, marker checks — as
        /// `AppleSigningTrust(json:name:)` reads it, or nil (the default) for none. Put in force
        /// in ``TrustUpdateClient/appleSigningTrust`` with the policy delivered beside it;
        /// dropping a root or a marker check of ``appleSigningTrustFloor`` needs
        /// `TrustUpdateRules.Permissions.weakerPurchaseVerification`; absent from a state, or
        /// after a revert, the floor is in force.
        public var appleSigningTrustTarget: String?
        /// The set a delivered one is measured against and reverted to; default Apple's,
        /// compiled in.
        public var appleSigningTrustFloor: AppleSigningTrust = .compiledIn
        /// What a delivered policy may change, and what expiry does.
        public var rules = TrustUpdateRules()
        /// When refreshes run (``run()``).
        public var schedule = TrustUpdateSchedule()
        /// The TUF client's limits (length limits, the time budget of each download).
        public var updater = UpdaterConfiguration()

        /// - Parameters:
        ///   - metadataDirectory: the trusted-metadata store.
        ///   - initialRoot: the root to start from when the store has none.
        ///   - repositoryURL: BASE, holding `metadata/` and `targets/` (python-tuf's and
        ///     tuf-on-ci's layout).
        public init(metadataDirectory: String, initialRoot: InitialRoot?, repositoryURL: String) {
            self.metadataDirectory = metadataDirectory
            self.initialRoot = initialRoot
            let base = repositoryURL.hasSuffix("/") ? String(repositoryURL.dropLast()) : repositoryURL
            metadataBaseURL = base + "/metadata/"
            targetBaseURL = base + "/targets/"
        }
    }
}

extension TrustUpdateClient.Configuration {
    /// Where verified targets are cached: beside the metadata, as private (`MetadataStore` makes it 0700).
    var targetDirectory: String { metadataDirectory + "/targets" }

    /// The targets a state is read from: the policy, and the deny-list, key set, CT log list
    /// and App Store signing trust when configured.
    var targetNames: [String] {
        [policyTarget] + [denyListTarget, signingKeysTarget, certificateTransparencyLogListTarget, appleSigningTrustTarget].compactMap { $0 }
    }

    /// A TUF client on the store, fetching with `fetcher` and judging expiry by `clock`.
    func updater(fetcher: any TUFFetching, clock: any TUFClock) throws(TUFError) -> Updater {
        try Updater(
            store: try MetadataStore(directory: metadataDirectory), metadataBaseURL: metadataBaseURL, targetBaseURL: targetBaseURL,
            fetcher: fetcher, clock: clock, configuration: updater)
    }
}
