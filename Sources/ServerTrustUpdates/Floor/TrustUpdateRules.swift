import ServerTrust

/// What a delivered policy may change, and what happens when updates stop: the application's
/// side of trust updates. The defaults are the conservative ones; every choice is reported in
/// ``TrustUpdateStatus``.
///
/// **The floor.** The application's compiled-in `ServerTrustManager` is the floor. A delivered
/// policy replaces the hosts it names (pattern by pattern) and adds new ones; hosts it does not
/// name keep the floor's policy, and the floor's deny-list always stays in force. Replacing or
/// adding pins, pin sets and hosts is allowed; anything that weakens a host the floor protects
/// needs a ``Permissions`` entry, or the whole delivered policy is refused and the policy in
/// force stays.
public struct TrustUpdateRules: Sendable {
    /// Weakenings a delivered policy may make. Default: none.
    public struct Permissions: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// A host whose floor policy pins may get default validation only — or pins whose set
        /// falls back to default validation when it expires; or a chain validated against the
        /// client's anchors where the floor's names its own, or less validation than the floor's.
        public static let unpinHosts = Permissions(rawValue: 1 << 0)
        /// A host may be put in report-only (`informational`) mode.
        public static let reportOnly = Permissions(rawValue: 1 << 1)
        /// The policy may let hosts no pattern matches through (`allHostsMustBeEvaluated: false`)
        /// where the floor refuses them.
        public static let unlistedHosts = Permissions(rawValue: 1 << 2)
        /// A host whose floor policy enforces signed responses may check them less or not at all.
        public static let weakerSignedResponses = Permissions(rawValue: 1 << 3)
        /// A host whose floor policy requires TLS 1.3 may accept TLS 1.2.
        public static let lowerTLSVersion = Permissions(rawValue: 1 << 4)

        /// A host whose floor policy checks revocation may check it less strictly or not at
        /// all: no revocation, a method or the whole chain no longer checked, soft-fail where
        /// the floor requires a positive answer, no network fetches, wider clock skew or
        /// answer age, fewer leaves checked, no OCSP nonce.
        public static let weakerRevocation = Permissions(rawValue: 1 << 5)
        /// A host whose floor policy is a custom evaluator (`HostPolicy.custom`, which the floor
        /// cannot see into, so cannot compare) may get a delivered policy.
        public static let replaceCustomEvaluators = Permissions(rawValue: 1 << 6)

        /// A host whose floor policy requires post-quantum key exchange may accept a classical
        /// one.
        public static let classicalKeyExchange = Permissions(rawValue: 1 << 7)

        /// A host whose floor policy requires Certificate Transparency may drop it, only report
        /// it where the floor enforces it, fail open on a stale log list where the floor fails
        /// closed, or accept an older list.
        public static let weakerCertificateTransparency = Permissions(rawValue: 1 << 8)

        /// The delivered App Store signing trust may drop a root of its floor's or a marker
        /// check it makes (`AppleSigningTrust.weakenings(comparedTo:)`).
        public static let weakerPurchaseVerification = Permissions(rawValue: 1 << 9)

        /// Every weakening: a delivered policy can do anything the application's code could.
        public static let all: Permissions = [
            .unpinHosts, .reportOnly, .unlistedHosts, .weakerSignedResponses, .lowerTLSVersion, .weakerRevocation, .replaceCustomEvaluators,
            .classicalKeyExchange, .weakerCertificateTransparency, .weakerPurchaseVerification,
        ]
    }

    /// What is in force once a delivered policy's own `expires` date has passed.
    public enum PolicyExpiry: Sendable, Hashable {
        /// The floor (default): fail closed to the compiled-in policy. Hosts whose servers
        /// rotated to keys only the delivered policy pinned are refused until a fresh policy
        /// arrives.
        case revertToFloor
        /// The expired policy stays in force, and the status says so. A process that starts
        /// with an expired policy, or a refresh at the floor that finds one, puts the floor in
        /// force either way (with the deny-list verified beside it): an expired policy is never
        /// put in force anew.
        case keepPolicy
    }

    /// What is in force once the trusted TUF metadata behind the applied policy has expired
    /// (no refresh succeeded in time: the repository or the network is down, or a mirror is
    /// freezing the client on old metadata). The TUF specification says to stop trusting
    /// expired metadata.
    public enum MetadataExpiry: Sendable, Hashable {
        /// The floor (default), as the specification asks.
        case revertToFloor
        /// The applied policy stays in force in this process, and the status says so (fail
        /// open to the last verified policy). A process that starts with expired metadata
        /// starts at the floor either way: nothing expired is verified anew.
        case keepAppliedPolicy
    }

    /// What is in force before any delivered policy has been applied or restored (the first
    /// start, with the repository unreachable).
    public enum BeforeFirstUpdate: Sendable, Hashable {
        /// The floor (default): the compiled-in policy is the application's own, and governs
        /// until a delivered one is applied.
        case useFloor
        /// Every connection is refused (`TrustError.Code.noEvaluatorForHost`, naming this
        /// rule) until a delivered policy is applied or restored: for an application whose
        /// compiled-in pins are placeholders, or that must never talk to a host under a policy
        /// older than the repository's. The floor's host patterns stay (so a refusal names the
        /// host's pattern); hosts they do not match are refused too.
        case refuseConnections
    }

    public var permissions: Permissions
    public var whenPolicyExpires: PolicyExpiry
    public var whenMetadataExpires: MetadataExpiry
    public var beforeFirstUpdate: BeforeFirstUpdate

    /// - Parameters:
    ///   - permissions: weakenings allowed; default none.
    ///   - whenPolicyExpires: default ``PolicyExpiry/revertToFloor``.
    ///   - whenMetadataExpires: default ``MetadataExpiry/revertToFloor``.
    ///   - beforeFirstUpdate: default ``BeforeFirstUpdate/useFloor``.
    public init(
        permissions: Permissions = [], whenPolicyExpires: PolicyExpiry = .revertToFloor,
        whenMetadataExpires: MetadataExpiry = .revertToFloor, beforeFirstUpdate: BeforeFirstUpdate = .useFloor
    ) {
        self.permissions = permissions
        self.whenPolicyExpires = whenPolicyExpires
        self.whenMetadataExpires = whenMetadataExpires
        self.beforeFirstUpdate = beforeFirstUpdate
    }
}
