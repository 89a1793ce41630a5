public import Foundation
import ServerTrust
import ServerTrustPurchases

/// Where a ``TrustUpdateClient`` stands: which policy is in force and why, and how its
/// refreshes went. `servertrust updates show` prints it; `TrustUpdateClient.status` reads it.
public struct TrustUpdateStatus: Sendable, Codable, Hashable {
    /// Which policy is in force.
    public enum InForce: String, Sendable, Codable, Hashable, CaseIterable {
        /// The compiled-in floor: no update was ever applied (or none could be restored). When a
        /// verified policy was refused (``Outcome/refused``), the deny-list verified with it is
        /// joined to the floor's.
        case floorNoUpdateYet
        /// Every connection refused: no update was ever applied, and the rules say
        /// ``TrustUpdateRules/BeforeFirstUpdate/refuseConnections``.
        case refusingUntilFirstUpdate
        /// A delivered policy, over the floor.
        case delivered
        /// The floor, because the delivered policy's own `expires` date passed
        /// (``TrustUpdateRules/PolicyExpiry/revertToFloor``, or a start — or a refresh at the
        /// floor — that finds the verified policy already expired); the last verified deny-list
        /// stays joined to the floor's.
        case floorPolicyExpired
        /// The floor, because the TUF metadata behind the delivered policy expired
        /// (``TrustUpdateRules/MetadataExpiry/revertToFloor``, or a start with expired stored
        /// metadata: the top-level roles, or a delegated role that delivered a target); the last
        /// verified deny-list stays joined to the floor's.
        case floorMetadataExpired
        /// The floor, because a start found the store unrestorable — a refresh was interrupted
        /// between its files (a crash, a cancellation, a network cut), or a cached target no
        /// longer matches it — and its metadata had not expired: the deny-list and key
        /// withdrawals of the last verified state the client handled, which it records beside
        /// the store, are joined to the floor's (``TrustUpdateStatus/lastError`` says why the
        /// store was not restored). The next refresh that completes replaces them.
        case floorStoreInterrupted
        /// A delivered policy past its own `expires`, kept (``TrustUpdateRules/PolicyExpiry/keepPolicy``).
        case deliveredPolicyExpired
        /// A delivered policy whose TUF metadata expired, kept (``TrustUpdateRules/MetadataExpiry/keepAppliedPolicy``).
        case deliveredMetadataExpired
    }

    /// How the last refresh ended.
    public enum Outcome: String, Sendable, Codable, Hashable {
        /// A new policy (or deny-list, or signing keys) was verified and put in force.
        case applied
        /// The repository holds what is already in force.
        case unchanged
        /// A verified policy was not applied: a newer format, invalid, past its own `expires`,
        /// or weakening the floor without permission (``TrustUpdateStatus/refusal``). The policy
        /// in force stays; the deny-list and key withdrawals verified with it are put in force.
        case refused
        /// The refresh failed (network, TUF verification: rollback, freeze, bad signatures…);
        /// the policy in force stays (``TrustUpdateStatus/lastError``).
        case failed
    }

    public var inForce: InForce = .floorNoUpdateYet
    /// The trust manager's generation in the client's `LiveTrustManager`.
    public var generation: UInt64 = 1
    /// The SHA-256 (hex) of the policy target in force, when one is.
    public var policySHA256: String?
    /// The version of the TUF targets metadata that delivered the policy in force.
    public var targetsVersion: Int64?
    /// The delivered policy's own `expires`.
    public var policyExpires: Date?
    /// When the trusted TUF metadata behind the policy expires: the top-level roles, and each
    /// delegated role on the path that delivered a target.
    public var metadataExpires: Date?
    /// Entries of the deny-list in force (the floor's and the delivered one).
    public var denyListEntries = 0
    /// Key IDs of the response-signing keys delivered and in force (JWKS target).
    public var signingKeyIDs: [String] = []
    /// Key IDs of the `jwks.json` of the last verified state, nil when it published none. While
    /// the floor is in force after it (a revert, or a restart with expired metadata), a
    /// compiled-in key this set does not hold stays withdrawn
    /// (`TrustUpdateClient.signingKeys(orFloor:)`).
    public var lastVerifiedSigningKeyIDs: [String]?
    /// The Certificate Transparency log list in force, nil when there is none (the floor has
    /// none and none was delivered).
    public var certificateTransparencyLogList: LogList?
    /// The App Store signing trust in force, nil when no target is configured.
    public var appleSigningTrust: AppleSigningTrustInForce?
    public var lastAttempt: Date?
    public var lastSuccess: Date?
    public var lastOutcome: Outcome?
    /// Why the last refresh or restore failed (or the restore found the stored metadata
    /// expired); nil after a refresh that succeeded.
    public var lastError: Failure?
    /// Why the last verified policy was not applied.
    public var refusal: Refusal?
    public var consecutiveFailures = 0
    /// When the scheduler refreshes next.
    public var nextRefresh: Date?
    /// Why `TrustUpdateClient.run()` returned; nil while it runs, and before it ever ran.
    public var stopped: Stop?

    public init() {}

    /// Why `TrustUpdateClient.run()` returned (``TrustUpdateStatus/stopped``).
    public enum Stop: String, Sendable, Codable, Hashable {
        /// The task running it was cancelled: a refresh in flight was abandoned, and nothing of
        /// it put in force.
        case cancelled
        /// A graceful shutdown (a `ServiceGroup`'s, with the `LifecycleService` trait): no new
        /// refresh was started, and one in flight finished first.
        case gracefulShutdown
    }

    /// The App Store signing trust in force (``TrustUpdateStatus/appleSigningTrust``).
    public struct AppleSigningTrustInForce: Sendable, Codable, Hashable {
        /// The floor's (no set delivered, the state in force delivered none, or a revert), or
        /// the target of a verified state.
        public var source: LogList.Source
        /// The roots' SHA-256 SPKI pins, as `servertrust inspect` prints them.
        public var rootPins: [String]
        public var intermediateMarkerOIDs: [String]
        public var leafMarkerOIDs: [String]

        init(_ trust: ServerTrustPurchases.AppleSigningTrust, source: LogList.Source) {
            (self.source, rootPins) = (source, trust.roots.map { $0.spkiPin.description })
            (intermediateMarkerOIDs, leafMarkerOIDs) = (trust.intermediateMarkerOIDs, trust.leafMarkerOIDs)
        }
    }

    /// The Certificate Transparency log list in force (``TrustUpdateStatus/certificateTransparencyLogList``).
    public struct LogList: Sendable, Codable, Hashable {
        /// Where the list in force came from.
        public enum Source: String, Sendable, Codable, Hashable {
            /// The floor's (compiled-in) list: none was delivered, or none newer.
            case floor
            /// The `ct_log_list.json` of a verified state.
            case delivered
        }

        /// The list's `log_list_timestamp`.
        public var timestamp: Date
        /// How many logs it lists.
        public var logCount: Int
        public var source: Source

        public init(timestamp: Date, logCount: Int, source: Source) {
            (self.timestamp, self.logCount, self.source) = (timestamp, logCount, source)
        }

        /// The status of `list`, from `source`.
        init(_ list: CTLogList, source: Source) { self.init(timestamp: list.timestamp, logCount: list.logs.count, source: source) }
    }
}

extension TrustUpdateStatus.InForce {
    /// Whether a delivered policy is in force (``delivered``, ``deliveredPolicyExpired``,
    /// ``deliveredMetadataExpired``), not the floor.
    var isDelivered: Bool { self == .delivered || self == .deliveredPolicyExpired || self == .deliveredMetadataExpired }
}
