public import CoreMetrics
import Foundation
public import Logging
public import ServerTrust
public import ServerTrustTUF

/// Keeps an application's trust up to date from a TUF repository: host policies, a key
/// deny-list and response-signing keys, verified by the TUF client and applied to a
/// `LiveTrustManager` that sessions and verifiers read — with the compiled-in policy as the
/// floor (``TrustUpdateRules``).
///
/// ```swift
/// let updates = try TrustUpdateClient(
///     floor: compiledInManager,
///     configuration: .init(
///         metadataDirectory: supportDirectory + "/trust-updates",
///         initialRoot: try InitialRoot(base64: Certificates.updatesTUFRoot),
///         repositoryURL: "https://updates.example.com"),
///     fetcher: SessionTUFFetcher(session: updateHostSession))   // the update host's own pins
/// let session = try Session(configuration: configuration, liveTrustManager: updates.liveTrustManager)
/// let task = Task { await updates.run() }                       // restore, then refresh on schedule
/// ```
///
/// Every refresh runs the TUF client workflow (root rotation, timestamp, snapshot, targets:
/// signatures, thresholds, versions, expiry — rollback, freeze and mix-and-match refused),
/// then reads the targets:
/// - `policy.json` (``Configuration/policyTarget``, required): a policy file
///   (`TrustPolicyFile`) whose `version` this library reads; a newer format, an invalid file, a
///   policy past its own `expires` or a weakening the rules do not permit is refused and the
///   policy in force stays;
/// - `denylist.json` (``Configuration/denyListTarget``, optional): a `KeyDenyList`, joined to
///   the floor's. It only ever refuses, so it is put in force from every verified state —
///   also when the policy beside it is refused or expired, under the policy in force — and is
///   never dropped by a revert to the floor, nor by a restart with expired metadata
///   (``restore()``);
/// - `jwks.json` (``Configuration/signingKeysTarget``, optional): response-signing keys
///   (`SigningKeySet`), published as ``signingKeys`` with the policy it came with; a compiled-in
///   key it does not hold stays withdrawn after a revert to the floor, also when that policy
///   was refused (``signingKeys(orFloor:)``).
///
/// A verified change is put in force at once (`LiveTrustManager.replace(with:)`); identical
/// targets leave the manager (and its connections) alone. Of a state whose policy is refused,
/// only what refuses is put in force (the deny-list, the key withdrawals). Nothing is ever
/// applied from unverified bytes; every failure leaves the policy in force as it was, and says so in
/// ``status``, the log and the metrics (`servertrust_trust_updates_total{outcome}`,
/// `servertrust_trust_update_generation`, `servertrust_trust_update_consecutive_failures`).
///
/// ``run()`` is the whole life cycle. An application with a scheduler of its own calls its
/// parts: ``restore()`` once at start, before the first request; ``refresh()`` on its schedule
/// and whenever a change should arrive now; ``checkExpiry()`` from a timer and after a long
/// suspension (``refresh()`` calls it too); and reads ``status`` for health checks. Expiry is
/// judged by the injected `TUFClock` (``init(floor:configuration:fetcher:clock:logger:metricsFactory:)``).
public final class TrustUpdateClient: Sendable {
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

    private struct Applied: Sendable {
        var policy: TrustPolicyFile?
        var policySHA256: String?
        var denyList: KeyDenyList?
        /// The delivered key set in force; nil when none is (none delivered, or a revert).
        var signingKeys: SigningKeySet?
        /// The key set of the last verified state, nil when it delivered none: after a revert it
        /// bounds the compiled-in keys (``signingKeys(orFloor:)``).
        var lastVerifiedSigningKeys: SigningKeySet?
        var fingerprint: [UInt8] = []
    }

    private struct State: Sendable {
        var status = TrustUpdateStatus()
        var applied = Applied()
    }

    /// The floor: the application's compiled-in manager.
    public let floor: ServerTrustManager
    public let configuration: Configuration
    /// What sessions and verifiers read; generation 1 is the floor.
    public let liveTrustManager: LiveTrustManager
    private let fetcher: any TUFFetching
    private let clock: any TUFClock
    private let logger: Logger
    private let metricsFactory: (any MetricsFactory)?
    private let state = Locked(State())

    /// - Parameters:
    ///   - floor: the compiled-in policy, in force until an update is applied and whenever the
    ///     rules revert to it.
    ///   - configuration: the repository and the rules.
    ///   - fetcher: how files are fetched: `SessionTUFFetcher` over a session that pins the
    ///     update host.
    ///   - clock: the time expiry is judged by — the TUF metadata's, the delivered policy's
    ///     `expires` — and the status's times; default the system clock. Inject one to test
    ///     expiry without waiting. Handshakes do not read it (a pin's `notAfter` is judged at
    ///     the evaluation's own time).
    ///   - logger: where outcomes are logged; default `TrustLogging.defaultLogger`.
    ///   - metricsFactory: where outcomes are counted; nil (the default) for the global one.
    /// - Throws: `TUFError` when the store cannot be created or holds no root and
    ///   `initialRoot` is nil.
    public init(
        floor: ServerTrustManager, configuration: Configuration, fetcher: any TUFFetching, clock: any TUFClock = SystemTUFClock(),
        logger: Logger = TrustLogging.defaultLogger, metricsFactory: (any MetricsFactory)? = nil
    ) throws(TUFError) {
        self.floor = floor
        self.configuration = configuration
        self.fetcher = fetcher
        self.clock = clock
        self.logger = logger
        self.metricsFactory = metricsFactory
        switch configuration.rules.beforeFirstUpdate {
        case .useFloor:
            liveTrustManager = LiveTrustManager(floor)
        case .refuseConnections:
            liveTrustManager = LiveTrustManager(try Self.refusing(floor))
            state.withLock { $0.status.inForce = .refusingUntilFirstUpdate }
        }
        let store = try MetadataStore(directory: configuration.metadataDirectory)
        // The targets cache, beside the metadata and as private (MetadataStore makes 0700).
        _ = try MetadataStore(directory: configuration.metadataDirectory + "/targets")
        if let initialRoot = configuration.initialRoot { _ = try store.installInitialRoot(initialRoot) }
        guard store.read("root.json") != nil else {
            throw TUFError(.storeFailure, "no trusted root in \(configuration.metadataDirectory) and no initial root given")
        }
    }

    /// The floor's patterns, each refusing its hosts until a delivered policy is applied;
    /// unmatched hosts refused too.
    private static func refusing(_ floor: ServerTrustManager) throws(TUFError) -> ServerTrustManager {
        do {
            return try ServerTrustManager(
                policies: Dictionary(uniqueKeysWithValues: floor.policies.map { ($0.pattern.description, HostPolicy(evaluator: UntilFirstUpdate())) }),
                allHostsMustBeEvaluated: true, denyList: floor.denyList)
        } catch {
            throw TUFError(
                .invalidState, "beforeFirstUpdate is refuseConnections, and the floor names no host pattern to refuse: \(error)")
        }
    }

    /// The evaluator of ``TrustUpdateRules/BeforeFirstUpdate/refuseConnections``.
    struct UntilFirstUpdate: ServerTrustEvaluating {
        var name: String { "UntilFirstUpdate" }
        func evaluate(_ trust: PeerTrust, forHost host: String) throws {
            throw TrustError(
                .noEvaluatorForHost,
                "No trust update has been applied yet, and TrustUpdateRules.beforeFirstUpdate refuses connections until one is.",
                evaluator: name, host: host)
        }
    }

    /// Where the client stands.
    public var status: TrustUpdateStatus { state.withLock { $0.status } }

    /// The response-signing keys delivered and in force: `isEmpty` when no delivered set is in
    /// force, or the delivered one holds no keys.
    public var signingKeys: SigningKeySet { state.withLock { $0.applied.signingKeys ?? SigningKeySet() } }

    /// The response-signing keys to verify with: what an RFC 9421 policy reads,
    /// `MessageSignaturePolicy(keyProvider: { client.signingKeys(orFloor: compiledKeys) })`.
    ///
    /// - While a delivered state with a `jwks.json` is in force: that set, even empty — a
    ///   repository that withdraws every key has withdrawn the compiled-in ones too.
    /// - After a revert to the floor, after a restart with expired metadata, and while the floor
    ///   is in force because the verified policy was refused or has expired: the compiled-in
    ///   keys that the last verified `jwks.json` still holds (the same public key, under any key
    ///   ID) — the newest verified state's, whether its policy was applied or not. A key the
    ///   repository withdrew stays withdrawn, as a deny-listed key stays refused; the delivered
    ///   keys themselves are in force only with the policy they came with.
    /// - Before any verified state, or when the last one published no `jwks.json`: `floor`.
    ///
    /// - Parameter floor: the compiled-in key set.
    public func signingKeys(orFloor floor: SigningKeySet) -> SigningKeySet {
        let (inForce, lastVerified) = state.withLock { ($0.applied.signingKeys, $0.applied.lastVerifiedSigningKeys) }
        if let inForce { return inForce }
        guard let lastVerified else { return floor }
        return floor.keepingKeys(heldBy: lastVerified)
    }

    /// The delivered policy in force, or nil when the floor alone is.
    public var deliveredPolicy: TrustPolicyFile? {
        state.withLock { Self.deliveredStates.contains($0.status.inForce) ? $0.applied.policy : nil }
    }

    private var targetDirectory: String { configuration.metadataDirectory + "/targets" }

    /// The targets a state is read from: the policy, and the deny-list and key set when configured.
    private var targetNames: [String] {
        [configuration.policyTarget] + [configuration.denyListTarget, configuration.signingKeysTarget].compactMap { $0 }
    }

    private func makeUpdater(fetcher: any TUFFetching, clock: any TUFClock) throws(TUFError) -> Updater {
        try Updater(
            store: try MetadataStore(directory: configuration.metadataDirectory), metadataBaseURL: configuration.metadataBaseURL,
            targetBaseURL: configuration.targetBaseURL, fetcher: fetcher, clock: clock, configuration: configuration.updater)
    }

    private func now() -> Date { Date(timeIntervalSince1970: TimeInterval(clock.now())) }

    // MARK: Restoring

    /// Puts the last verified state back in force without the network: the stored metadata,
    /// loaded through the same checks as a refresh (so torn metadata is refused), and the cached
    /// targets, checked against its hashes. Call once at start (``run()`` does); the status
    /// says what happened.
    ///
    /// When the stored metadata has expired — the top-level roles, or a delegated role on the
    /// path of a target read — its policy is not put back (the floor is in force,
    /// ``TrustUpdateStatus/InForce-swift.enum/floorMetadataExpired``, whatever
    /// ``TrustUpdateRules/whenMetadataExpires`` says), but what only refuses is: the stored
    /// metadata is verified again with expiry ignored — signatures, thresholds and versions
    /// as ever — and its deny-list is joined to the floor's, and its `jwks.json` bounds the
    /// compiled-in keys (``signingKeys(orFloor:)``). A client kept offline, or an attacker who
    /// blocks the update host until the metadata expires, cannot get a refused key accepted
    /// by a restart.
    ///
    /// When the metadata is valid but its policy cannot be put back — past its own `expires`
    /// (``TrustUpdateStatus/InForce-swift.enum/floorPolicyExpired``, whatever
    /// ``TrustUpdateRules/whenPolicyExpires`` says), or refused by this release's floor and
    /// rules (``TrustUpdateStatus/InForce-swift.enum/floorNoUpdateYet``, outcome
    /// ``TrustUpdateStatus/Outcome/refused``) — the same holds: its deny-list and key
    /// withdrawals are in force over the floor.
    @discardableResult
    public func restore() async -> TrustUpdateStatus {
        do {
            // Nothing downloaded: a delegated role whose stored copy has expired is not fetched
            // again (an update host that does not answer would hold the restore up).
            let updater = try makeUpdater(fetcher: NoDownloads(), clock: clock)
            do throws(TUFError) {
                try await updater.loadStoredMetadata()
                try await apply(from: updater, downloading: false)
            } catch {
                // The top-level metadata, or a delegated role on a target's path (refused when
                // the walk loads it), may have expired: then what only refuses is restored.
                guard try await restoreRefusals(after: error) else { throw error }
            }
        } catch let error as TUFError {
            logger.notice("No stored trust update restored: \(error.description)", metadata: ["tuf.error": .string("\(error.code)")])
            state.withLock { $0.status.lastError = "restore: \(error.description)" }
        } catch {
            state.withLock { $0.status.lastError = "restore: \(error)" }
        }
        return status
    }

    /// The part of an expired stored state that only refuses, put in force over the floor:
    /// the deny-list, and the key set that bounds the compiled-in keys.
    ///
    /// - Parameter failure: why the stored state could not be restored.
    /// - Returns: false, restoring nothing, when the stored state has not expired (`failure` is
    ///   the reason).
    private func restoreRefusals(after failure: TUFError) async throws(TUFError) -> Bool {
        // The store is the client's own trusted state, written only after verification; it is
        // verified again here as a refresh would, except for expiry — which protects against
        // a network that replays old metadata, not against what this client already trusted.
        let updater = try makeUpdater(fetcher: NoDownloads(), clock: ExpiryIgnored())
        try await updater.loadStoredMetadata()
        // Every target's path is walked, so its delegated roles count towards the expiry.
        for name in targetNames { _ = try await updater.targetInfo(name) }
        guard let expiry = await updater.trustedUntil(forTargets: targetNames), expiry <= clock.now() else { return false }
        let metadataExpires = Date(timeIntervalSince1970: TimeInterval(expiry))
        let targetsVersion = await updater.trusted.targets["targets"]?.metadata.signed.common.version
        var denyList: KeyDenyList?
        var keys: SigningKeySet?
        do {
            if let name = configuration.denyListTarget, let bytes = try await targetBytes(name, from: updater, downloading: false) {
                denyList = try KeyDenyList(data: bytes, fileName: name)
            }
            if let name = configuration.signingKeysTarget, let bytes = try await targetBytes(name, from: updater, downloading: false) {
                keys = try SigningKeySet(jwks: bytes, fileName: name)
            }
        } catch let error as TUFError {
            throw error
        } catch {
            throw TUFError(.storeFailure, "a stored target no longer reads: \(error)")
        }
        let generation = applyRefusals(denyList: denyList, keys: keys, floorStatus: .floorMetadataExpired)
        state.withLock { state in
            state.status.targetsVersion = targetsVersion
            state.status.metadataExpires = metadataExpires
            state.status.lastError = "restore: the stored metadata expired on \(metadataExpires) (\(failure.description))"
        }
        logger.error(
            "The stored trust update has expired (\(failure.description)): the compiled-in floor is in force, with the last verified deny-list (\(denyList.map { String($0.keys.count + $0.certificates.count) } ?? "no") entries)",
            metadata: ["trust_update.generation": .stringConvertible(generation ?? status.generation)])
        record(status)
        return true
    }

    /// The clock of ``restoreRefusals(after:)``: the beginning of time, so nothing has expired.
    private struct ExpiryIgnored: TUFClock {
        func now() -> Int64 { .min }
    }

    /// The fetcher of ``restore()``: it puts back what the store holds, and expired metadata
    /// vouches for nothing new.
    private struct NoDownloads: TUFFetching {
        func fetch(_ url: String, maximumLength: Int, deadline: ContinuousClock.Instant) async throws(TUFError) -> [UInt8] {
            throw TUFError(.downloadFailed, "\(url): restore() downloads nothing")
        }
    }

    /// What the floor is after a revert: the floor with the delivered deny-list joined to its
    /// own (a revert never un-refuses a key); under `beforeFirstUpdate = refuseConnections` the
    /// floor is not a policy to connect under, so the state before the first update comes
    /// back instead: every host refused.
    private func revertedManager(denyList: KeyDenyList?) -> ServerTrustManager {
        let withDenyList = (try? PolicyFloor.manager(floor: floor, delivered: nil, denyList: denyList, permissions: [])) ?? floor
        return configuration.rules.beforeFirstUpdate == .refuseConnections ? (try? Self.refusing(withDenyList)) ?? withDenyList : withDenyList
    }

    // MARK: Refreshing

    /// One refresh: the TUF workflow, then the targets, verified and applied. Never throws:
    /// the outcome is in the returned status (and the log and metrics).
    @discardableResult
    public func refresh() async -> TrustUpdateStatus {
        state.withLock { $0.status.lastAttempt = now() }
        do {
            let updater = try makeUpdater(fetcher: fetcher, clock: clock)
            try await updater.refresh()
            try await apply(from: updater, downloading: true)
            state.withLock { state in
                state.status.lastSuccess = now()
                state.status.consecutiveFailures = 0
                state.status.lastError = nil
            }
        } catch let error as TUFError {
            failed("\(error.description)")
        } catch {
            failed("\(error)")
        }
        checkExpiry()
        let status = status
        record(status)
        return status
    }

    private func failed(_ reason: String) {
        let failures = state.withLock { state -> Int in
            state.status.lastOutcome = .failed
            state.status.lastError = reason
            state.status.consecutiveFailures += 1
            return state.status.consecutiveFailures
        }
        logger.error(
            "Trust update failed; the policy in force stays: \(reason)", metadata: ["trust_update.consecutive_failures": .stringConvertible(failures)])
    }

    /// Reads the targets through `updater` (downloading what is not cached when `downloading`)
    /// and applies them.
    ///
    /// Written without a nested async function or a generic `rethrows` helper: Swift 6.3's
    /// optimiser crashed splitting this coroutine when it had them (`swift build -c release`).
    private func apply(from updater: Updater, downloading: Bool) async throws(TUFError) {
        let targetsVersion = await updater.trusted.targets["targets"]?.metadata.signed.common.version
        guard let policyBytes = try await targetBytes(configuration.policyTarget, from: updater, downloading: downloading) else {
            throw TUFError(.targetNotFound, "\(configuration.policyTarget) is not in the repository")
        }
        var denyListBytes: [UInt8]?
        if let name = configuration.denyListTarget {
            denyListBytes = try await targetBytes(name, from: updater, downloading: downloading)
        }
        var jwksBytes: [UInt8]?
        if let name = configuration.signingKeysTarget {
            jwksBytes = try await targetBytes(name, from: updater, downloading: downloading)
        }
        // After the reads: a delegated role that delivered a target expires with the metadata.
        let metadataExpires = await updater.trustedUntil(forTargets: targetNames).map { Date(timeIntervalSince1970: TimeInterval($0)) }
        apply(policy: policyBytes, denyList: denyListBytes, jwks: jwksBytes, metadataExpires: metadataExpires, targetsVersion: targetsVersion)
    }

    /// The verified bytes of target `name`: the cached copy when its length and hashes match
    /// the trusted metadata, else a download (when `downloading`); nil when no role lists it.
    private func targetBytes(_ name: String, from updater: Updater, downloading: Bool) async throws(TUFError) -> [UInt8]? {
        guard let info = try await updater.targetInfo(name) else { return nil }
        if let cached = updater.cachedTarget(info, in: targetDirectory) { return cached }
        guard downloading else { throw TUFError(.storeFailure, "\(name) is not in the local cache") }
        return try await updater.downloadTarget(info, to: targetDirectory)
    }

    private func apply(policy policyBytes: [UInt8], denyList denyListBytes: [UInt8]?, jwks jwksBytes: [UInt8]?, metadataExpires: Date?, targetsVersion: Int64?) {
        let fingerprint = sha256(policyBytes) + sha256(denyListBytes ?? []) + sha256(jwksBytes ?? [])
        let (unchanged, inForceIsDelivered) = state.withLock { ($0.applied.fingerprint == fingerprint, $0.status.inForce == .delivered) }
        if unchanged, inForceIsDelivered {
            state.withLock { state in
                state.status.lastOutcome = .unchanged
                state.status.metadataExpires = metadataExpires
                state.status.targetsVersion = targetsVersion
            }
            logger.debug("Trust update: the repository holds the policy in force")
            return
        }
        // What only refuses is read first: it is put in force even when the policy is not.
        let denyList: KeyDenyList?
        let keys: SigningKeySet?
        do {
            keys = try jwksBytes.map { try SigningKeySet(jwks: $0, fileName: configuration.signingKeysTarget ?? "jwks.json") }
            denyList = try denyListBytes.map { try KeyDenyList(data: $0, fileName: configuration.denyListTarget ?? "denylist.json") }
        } catch let error as TrustError {
            reportRefusal(PolicyFloor.Refusal.invalid(error).description)
            return
        } catch {
            reportRefusal("\(error)")
            return
        }
        let delivered: TrustPolicyFile
        let manager: ServerTrustManager
        do throws(PolicyFloor.Refusal) {
            // An RFC 9421 host without inline keys verifies with the key set delivered with the
            // policy (replaced together with it by the next update).
            // Without a delivered jwks.json such a host is refused (the policy names no keys).
            var keyProvider: (@Sendable () -> SigningKeySet)?
            if let deliveredKeys = keys { keyProvider = { @Sendable in deliveredKeys } }
            delivered = try PolicyFloor.read(policyBytes, name: configuration.policyTarget, signingKeys: keyProvider)
            if let expires = delivered.expires, expires <= now() {
                reportRefusal("it expired on \(expires)")
                applyRefusals(denyList: denyList, keys: keys, floorStatus: .floorPolicyExpired)
                return
            }
            manager = try PolicyFloor.manager(floor: floor, delivered: delivered, denyList: denyList, permissions: configuration.rules.permissions)
        } catch {
            reportRefusal(error.description)
            applyRefusals(denyList: denyList, keys: keys, floorStatus: nil)
            return
        }
        let generation = liveTrustManager.replace(with: manager)
        state.withLock { state in
            state.applied = Applied(
                policy: delivered, policySHA256: hex(sha256(policyBytes)), denyList: denyList, signingKeys: keys, lastVerifiedSigningKeys: keys,
                fingerprint: fingerprint)
            state.status.inForce = .delivered
            state.status.generation = generation
            state.status.policySHA256 = hex(sha256(policyBytes))
            state.status.targetsVersion = targetsVersion
            state.status.policyExpires = delivered.expires
            state.status.metadataExpires = metadataExpires
            state.status.denyListEntries = manager.denyList.keys.count + manager.denyList.certificates.count
            state.status.signingKeyIDs = keys?.keyIDs ?? []
            state.status.lastVerifiedSigningKeyIDs = keys?.keyIDs
            state.status.lastOutcome = .applied
            state.status.refusal = nil
        }
        logger.notice(
            "Trust update applied: \(configuration.policyTarget) (targets version \(targetsVersion.map(String.init) ?? "?")) is in force",
            metadata: ["trust_update.generation": .stringConvertible(generation), "trust_update.policy_sha256": .string(hex(sha256(policyBytes)))])
    }

    /// A verified state whose policy is not applied: the status, the log.
    private func reportRefusal(_ reason: String) {
        state.withLock { state in
            state.status.lastOutcome = .refused
            state.status.refusal = reason
        }
        logger.warning("Trust update refused: \(configuration.policyTarget) \(reason)")
    }

    /// Puts in force what only refuses from a verified state whose policy is not put in force
    /// (refused, expired, or behind expired metadata): its deny-list, joined to the floor's under
    /// the policy in force, and its key set as the bound of the compiled-in keys
    /// (``signingKeys(orFloor:)``). Nothing else of that state — its policy, its keys as keys to
    /// verify with — is put in force, and a delivered policy in force stays.
    ///
    /// The deny-list in force is thus always the newest verified state's, whether its policy was
    /// applied or not: what a restart, which reads only the newest, puts back too.
    ///
    /// - Parameter floorStatus: what ``TrustUpdateStatus/inForce`` says from now on when the
    ///   floor is in force; nil leaves it as it is.
    /// - Returns: the manager's new generation, or nil when the deny-list in force is unchanged
    ///   (the manager, and its connections, are left alone).
    @discardableResult
    private func applyRefusals(denyList: KeyDenyList?, keys: SigningKeySet?, floorStatus: TrustUpdateStatus.InForce?) -> UInt64? {
        let (inForce, current) = state.withLock { ($0.status.inForce, $0.applied.denyList) }
        var generation: UInt64?
        if denyList != current {
            // The policies in force with another deny-list: built from them, they cannot fail.
            let manager = (try? liveTrustManager.current.replacing(denyList: PolicyFloor.denyList(floor: floor, delivered: denyList))) ?? revertedManager(denyList: denyList)
            generation = liveTrustManager.replace(with: manager)
        }
        let entries = liveTrustManager.current.denyList.keys.count + liveTrustManager.current.denyList.certificates.count
        state.withLock { state in
            state.applied.denyList = denyList
            state.applied.lastVerifiedSigningKeys = keys
            // The targets in force are no longer the newest verified ones: the same targets,
            // verified again by a later refresh, are applied again.
            state.applied.fingerprint = []
            if let generation { state.status.generation = generation }
            if let floorStatus, !Self.deliveredStates.contains(inForce) { state.status.inForce = floorStatus }
            state.status.denyListEntries = entries
            state.status.lastVerifiedSigningKeyIDs = keys?.keyIDs
        }
        if let generation {
            logger.notice(
                "Trust update: the verified deny-list is in force (\(entries) entries), the policy in force stays",
                metadata: ["trust_update.generation": .stringConvertible(generation)])
        }
        return generation
    }

    /// The states in which a delivered policy is in force.
    private static let deliveredStates: Set<TrustUpdateStatus.InForce> = [.delivered, .deliveredPolicyExpired, .deliveredMetadataExpired]

    // MARK: Expiry

    /// Applies the rules to a delivered policy past its own `expires`, or whose TUF metadata
    /// has expired: the floor goes back in force (keeping the delivered deny-list), or the
    /// policy stays and the status says so. Called after every refresh and on every tick of
    /// ``run()``.
    public func checkExpiry() {
        let now = now()
        let (inForce, policyExpires, metadataExpires, denyList) = state.withLock {
            ($0.status.inForce, $0.status.policyExpires, $0.status.metadataExpires, $0.applied.denyList)
        }
        guard inForce == .delivered || inForce == .deliveredPolicyExpired || inForce == .deliveredMetadataExpired else { return }
        var next: TrustUpdateStatus.InForce = .delivered
        if let metadataExpires, metadataExpires <= now {
            next = configuration.rules.whenMetadataExpires == .revertToFloor ? .floorMetadataExpired : .deliveredMetadataExpired
        }
        if next == .delivered || next == .deliveredMetadataExpired, let policyExpires, policyExpires <= now {
            next = configuration.rules.whenPolicyExpires == .revertToFloor ? .floorPolicyExpired : .deliveredPolicyExpired
        }
        guard next != inForce else { return }
        if next == .floorMetadataExpired || next == .floorPolicyExpired {
            let generation = liveTrustManager.replace(with: revertedManager(denyList: denyList))
            state.withLock { state in
                state.status.inForce = next
                state.status.generation = generation
                // The same targets, verified again by a later refresh, are applied again.
                state.applied.fingerprint = []
                // Delivered response-signing keys are part of what expired: a frozen client
                // must not keep trusting a key set its repository may have rotated away from.
                // Their withdrawals stay (lastVerifiedSigningKeys bounds the compiled-in keys).
                state.applied.signingKeys = nil
                state.status.signingKeyIDs = []
            }
            logger.error(
                "Trust update expired (\(next.rawValue)): the compiled-in floor is in force again",
                metadata: ["trust_update.generation": .stringConvertible(generation)])
        } else {
            state.withLock { $0.status.inForce = next }
            logger.error("Trust update expired (\(next.rawValue)): the delivered policy stays in force, as the rules allow")
        }
        record(status)
    }

    // MARK: Scheduling

    /// Restores the stored state, then refreshes on ``Configuration/schedule`` until the task
    /// is cancelled: each interval with jitter, earlier when a pin set, the policy or the
    /// metadata nears its expiry, and with exponential back-off after a failure.
    public func run() async {
        await restore()
        while !Task.isCancelled {
            let status = await refresh()
            let delay = configuration.schedule.delay(after: status, policy: deliveredPolicy, now: now())
            state.withLock { $0.status.nextRefresh = now().addingTimeInterval(delay) }
            do {
                try await Task.sleep(for: .seconds(delay))
            } catch {
                return
            }
        }
    }

    // MARK: Metrics

    private func record(_ status: TrustUpdateStatus) {
        let factory = metricsFactory ?? MetricsSystem.factory
        if let outcome = status.lastOutcome {
            Counter(label: "servertrust_trust_updates_total", dimensions: [("outcome", outcome.rawValue)], factory: factory).increment()
        }
        Gauge(label: "servertrust_trust_update_generation", factory: factory).record(Int64(clamping: status.generation))
        Gauge(label: "servertrust_trust_update_consecutive_failures", factory: factory).record(status.consecutiveFailures)
        Gauge(label: "servertrust_trust_update_in_force", dimensions: [("state", status.inForce.rawValue)], factory: factory).record(1)
    }
}

private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
