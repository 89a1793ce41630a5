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
///   (`TrustPolicyFile`) whose `version` this library reads; a newer format, an invalid file or
///   a weakening the rules do not permit is refused and the policy in force stays;
/// - `denylist.json` (``Configuration/denyListTarget``, optional): a `KeyDenyList`, joined to
///   the floor's; it is never dropped by a revert to the floor (it only ever refuses);
/// - `jwks.json` (``Configuration/signingKeysTarget``, optional): response-signing keys
///   (`SigningKeySet`), published as ``signingKeys``.
///
/// A verified change is put in force at once (`LiveTrustManager.replace(with:)`); identical
/// targets leave the manager (and its connections) alone. Nothing is ever applied from
/// unverified bytes; every failure leaves the policy in force as it was, and says so in
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
        var signingKeys = SigningKeySet()
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

    /// The response-signing keys delivered: `isEmpty` when no delivered set is in force, or the
    /// delivered one holds no keys.
    public var signingKeys: SigningKeySet { state.withLock { $0.applied.signingKeys } }

    /// The delivered key set, or `floor` (the application's compiled-in keys) when none is in
    /// force: before the first update, after a revert to the floor, or when the repository
    /// publishes no `jwks.json`. What an RFC 9421 policy reads:
    /// `MessageSignaturePolicy(keyProvider: { client.signingKeys(orFloor: compiledKeys) })`.
    /// - Parameter floor: the compiled-in key set.
    public func signingKeys(orFloor floor: SigningKeySet) -> SigningKeySet {
        let delivered = signingKeys
        return delivered.keys.isEmpty ? floor : delivered
    }

    /// The delivered policy in force, or nil when the floor alone is.
    public var deliveredPolicy: TrustPolicyFile? {
        state.withLock { [.delivered, .deliveredPolicyExpired, .deliveredMetadataExpired].contains($0.status.inForce) ? $0.applied.policy : nil }
    }

    private var targetDirectory: String { configuration.metadataDirectory + "/targets" }

    private func makeUpdater() throws(TUFError) -> Updater {
        try Updater(
            store: try MetadataStore(directory: configuration.metadataDirectory), metadataBaseURL: configuration.metadataBaseURL,
            targetBaseURL: configuration.targetBaseURL, fetcher: fetcher, clock: clock, configuration: configuration.updater)
    }

    private func now() -> Date { Date(timeIntervalSince1970: TimeInterval(clock.now())) }

    // MARK: Restoring

    /// Puts the last verified state back in force without the network: the stored metadata,
    /// loaded through the same checks as a refresh (so expired or torn metadata is refused), and
    /// the cached targets, checked against its hashes. Call once at start (``run()`` does);
    /// the status says what happened.
    @discardableResult
    public func restore() async -> TrustUpdateStatus {
        do {
            let updater = try makeUpdater()
            try await updater.loadStoredMetadata()
            try await apply(from: updater, downloading: false)
        } catch let error as TUFError {
            logger.notice("No stored trust update restored: \(error.description)", metadata: ["tuf.error": .string("\(error.code)")])
            state.withLock { $0.status.lastError = "restore: \(error.description)" }
        } catch {
            state.withLock { $0.status.lastError = "restore: \(error)" }
        }
        return status
    }

    // MARK: Refreshing

    /// One refresh: the TUF workflow, then the targets, verified and applied. Never throws:
    /// the outcome is in the returned status (and the log and metrics).
    @discardableResult
    public func refresh() async -> TrustUpdateStatus {
        state.withLock { $0.status.lastAttempt = now() }
        do {
            let updater = try makeUpdater()
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
        let metadataExpires = await updater.trustedUntil.map { Date(timeIntervalSince1970: TimeInterval($0)) }
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
        let delivered: TrustPolicyFile
        let denyList: KeyDenyList?
        let keys: SigningKeySet
        let manager: ServerTrustManager
        do {
            do {
                keys = try jwksBytes.map { try SigningKeySet(jwks: $0, fileName: configuration.signingKeysTarget ?? "jwks.json") } ?? SigningKeySet()
            } catch let error as TrustError {
                throw PolicyFloor.Refusal.invalid(error)
            }
            // An RFC 9421 host without inline keys verifies with the key set delivered with the
            // policy (replaced together with it by the next update).
            // Without a delivered jwks.json such a host is refused (the policy names no keys).
            let deliveredKeys = keys
            var keyProvider: (@Sendable () -> SigningKeySet)?
            if jwksBytes != nil { keyProvider = { @Sendable in deliveredKeys } }
            delivered = try PolicyFloor.read(policyBytes, name: configuration.policyTarget, signingKeys: keyProvider)
            if let expires = delivered.expires, expires <= now() {
                throw PolicyFloor.Refusal.invalid(TrustError(.invalidPolicyFile, "\(configuration.policyTarget): expired on \(expires) before it was applied"))
            }
            do {
                denyList = try denyListBytes.map { try KeyDenyList(data: $0, fileName: configuration.denyListTarget ?? "denylist.json") }
            } catch let error as TrustError {
                throw PolicyFloor.Refusal.invalid(error)
            }
            manager = try PolicyFloor.manager(floor: floor, delivered: delivered, denyList: denyList, permissions: configuration.rules.permissions)
        } catch let refusal as PolicyFloor.Refusal {
            state.withLock { state in
                state.status.lastOutcome = .refused
                state.status.refusal = refusal.description
            }
            logger.warning("Trust update refused: \(configuration.policyTarget) \(refusal.description)")
            return
        } catch {
            state.withLock { state in
                state.status.lastOutcome = .refused
                state.status.refusal = "\(error)"
            }
            return
        }
        let generation = liveTrustManager.replace(with: manager)
        state.withLock { state in
            state.applied = Applied(
                policy: delivered, policySHA256: hex(sha256(policyBytes)), denyList: denyList, signingKeys: keys, fingerprint: fingerprint)
            state.status.inForce = .delivered
            state.status.generation = generation
            state.status.policySHA256 = hex(sha256(policyBytes))
            state.status.targetsVersion = targetsVersion
            state.status.policyExpires = delivered.expires
            state.status.metadataExpires = metadataExpires
            state.status.denyListEntries = manager.denyList.keys.count + manager.denyList.certificates.count
            state.status.signingKeyIDs = keys.keyIDs
            state.status.lastOutcome = .applied
            state.status.refusal = nil
        }
        logger.notice(
            "Trust update applied: \(configuration.policyTarget) (targets version \(targetsVersion.map(String.init) ?? "?")) is in force",
            metadata: ["trust_update.generation": .stringConvertible(generation), "trust_update.policy_sha256": .string(hex(sha256(policyBytes)))])
    }

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
            // The floor, with the delivered deny-list: reverting never un-refuses a key. Under
            // beforeFirstUpdate = refuseConnections the floor is not a policy to connect under,
            // so the state before the first update comes back instead: every host refused.
            let withDenyList = (try? PolicyFloor.manager(floor: floor, delivered: nil, denyList: denyList, permissions: [])) ?? floor
            let manager = configuration.rules.beforeFirstUpdate == .refuseConnections ? (try? Self.refusing(withDenyList)) ?? withDenyList : withDenyList
            let generation = liveTrustManager.replace(with: manager)
            state.withLock { state in
                state.status.inForce = next
                state.status.generation = generation
                // The same targets, verified again by a later refresh, are applied again.
                state.applied.fingerprint = []
                // Delivered response-signing keys are part of what expired: a frozen client
                // must not keep trusting a key set its repository may have rotated away from.
                state.applied.signingKeys = SigningKeySet()
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
