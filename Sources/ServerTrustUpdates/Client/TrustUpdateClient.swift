public import CoreMetrics
import Foundation
public import Logging
public import ServerTrust
public import ServerTrustPurchases
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
/// Every refresh runs the TUF client workflow (root rotation, timestamp, snapshot, targets —
/// rollback, freeze and mix-and-match refused), then reads ``Configuration/policyTarget``
/// (required), ``Configuration/denyListTarget`` and ``Configuration/signingKeysTarget``. A
/// verified change is put in force at once; identical targets leave the manager (and its
/// connections) alone. A policy in a newer format, invalid, past its own `expires` or weakening
/// the floor without permission is refused (``TrustUpdateStatus/refusal``) and the policy in
/// force stays — but the deny-list and key withdrawals verified beside it are put in force, as
/// from every verified state: they only refuse. No revert and no restart drops them. Nothing is
/// applied from unverified bytes; a failure leaves everything in force as it was, and says so
/// in ``status`` (``TrustUpdateStatus/lastError``), the log and the metrics
/// (`servertrust_trust_updates_total{outcome}`, `servertrust_trust_update_generation`,
/// `servertrust_trust_update_consecutive_failures`, `servertrust_trust_update_in_force{state}`).
///
/// ``run()`` is the whole life cycle. An application with a scheduler of its own calls
/// ``restore()`` once at start, ``refresh()`` on its schedule, ``checkExpiry()`` from a timer
/// and after a long suspension, and reads ``status`` for health checks. "What is in force", in
/// the module's documentation, says what each event puts in force.
public final class TrustUpdateClient: Sendable {
    /// The floor: the application's compiled-in manager.
    public let floor: ServerTrustManager
    public let configuration: Configuration
    /// What sessions and verifiers read; generation 1 is the floor.
    public let liveTrustManager: LiveTrustManager
    private let fetcher: any TUFFetching
    private let clock: any TUFClock
    let logger: Logger
    let metrics: TrustUpdateMetrics
    let state: Locked<TrustUpdateState>
    /// The sequence number of the newest record written (``TrustUpdateState/recordSequence``).
    let recordsWritten = Locked(0)
    /// The CT log list delivered hosts read, which a delivered `ct_log_list.json` replaces: the
    /// floor's, or (when the floor has none) the client's own, empty until a list is delivered.
    public let certificateTransparencyLogs: CertificateTransparencyLogs?
    /// The App Store signing trust the purchase verifiers read
    /// (`AppStoreSignedDataVerifier(trust:…)`), which a delivered
    /// ``Configuration/appleSigningTrustTarget`` replaces; nil when no target is configured.
    public let appleSigningTrust: LiveAppleSigningTrust?

    /// - Parameters:
    ///   - floor: the compiled-in policy, in force until an update is applied and whenever the
    ///     rules revert to it.
    ///   - configuration: the repository and the rules.
    ///   - fetcher: how files are fetched: `SessionTUFFetcher` over a session that pins the
    ///     update host.
    ///   - clock: the time expiry is judged by — the TUF metadata's, the delivered policy's
    ///     `expires` — and the status's times; default the system clock. Inject one to test
    ///     expiry without waiting. Handshakes do not read it.
    ///   - logger: where outcomes are logged; default `TrustLogging.defaultLogger`.
    ///   - metricsFactory: where outcomes are counted; nil (the default) for the global one.
    /// - Throws: `TUFError` when the store cannot be created or holds no root and
    ///   `initialRoot` is nil.
    public init(
        floor: ServerTrustManager, configuration: Configuration, fetcher: any TUFFetching, clock: any TUFClock = SystemTUFClock(),
        logger: Logger = TrustLogging.defaultLogger, metricsFactory: (any MetricsFactory)? = nil
    ) throws(TUFError) {
        (self.floor, self.configuration, self.fetcher, self.clock, self.logger) = (floor, configuration, fetcher, clock, logger)
        metrics = TrustUpdateMetrics(factory: metricsFactory)
        let floorLogList = floor.certificateTransparencyLogs?.current.list
        certificateTransparencyLogs = floor.certificateTransparencyLogs ?? Self.emptyLogs(configuration)
        let floorAppleSigningTrust = configuration.appleSigningTrustTarget.map { _ in configuration.appleSigningTrustFloor }
        appleSigningTrust = floorAppleSigningTrust.map { LiveAppleSigningTrust($0) }
        switch configuration.rules.beforeFirstUpdate {
        case .useFloor:
            liveTrustManager = LiveTrustManager(floor)
            state = Locked(
                TrustUpdateState(floorDenyList: floor.denyList, floorLogList: floorLogList, floorAppleSigningTrust: floorAppleSigningTrust))
        case .refuseConnections:
            liveTrustManager = LiveTrustManager(try PolicyFloor.refusing(floor))
            state = Locked(
                TrustUpdateState(
                    inForce: .refusingUntilFirstUpdate, floorDenyList: floor.denyList, floorLogList: floorLogList,
                    floorAppleSigningTrust: floorAppleSigningTrust))
        }
        let store = try MetadataStore(directory: configuration.metadataDirectory)
        _ = try MetadataStore(directory: configuration.targetDirectory)
        if let initialRoot = configuration.initialRoot { _ = try store.installInitialRoot(initialRoot) }
        guard store.read("root.json") != nil else {
            throw TUFError(.storeFailure, "no trusted root in \(configuration.metadataDirectory) and no initial root given")
        }
    }

    /// Where the client stands.
    public var status: TrustUpdateStatus { state.withLock { $0.status } }

    /// The delivered policy in force, or nil when the floor alone is.
    public var deliveredPolicy: TrustPolicyFile? { state.withLock { $0.deliveredPolicy } }

    /// Puts the last verified state back in force without the network: the stored metadata,
    /// loaded through the same checks as a refresh, and the cached targets, checked against its
    /// hashes. Call once at start (``run()`` does); the status says what happened.
    ///
    /// Stored metadata that has expired — the top-level roles, or a delegated role on the path
    /// of a target read — puts no policy back
    /// (``TrustUpdateStatus/InForce-swift.enum/floorMetadataExpired``, whatever the rules say),
    /// but what only refuses: the store is verified again with expiry ignored, and its
    /// deny-list and key withdrawals are put in force over the floor. A client kept offline,
    /// or an attacker who blocks the update host until the metadata expires, cannot get a
    /// refused key accepted by a restart. A stored policy past its own `expires`
    /// (``TrustUpdateStatus/InForce-swift.enum/floorPolicyExpired``) or refused by this
    /// release's floor and rules (outcome ``TrustUpdateStatus/Outcome/refused``) does the same.
    ///
    /// A store a refresh left torn between its files (a crash, a cancellation or a network cut,
    /// which an attacker can cause) does the same from the record kept beside it: the deny-list
    /// and key set of the last verified state
    /// (``TrustUpdateStatus/InForce-swift.enum/floorStoreInterrupted``); a record that does not
    /// read is not used, and ``TrustUpdateStatus/lastError`` says so.
    ///
    /// Whatever the store's state, the deny-list and key withdrawals recorded beside it are
    /// joined to what it puts back: a verified state whose deny-list or `jwks.json` this
    /// release cannot read — which the running client refused, keeping the last ones it could —
    /// never drops them at a restart.
    @discardableResult
    public func restore() async -> TrustUpdateStatus {
        // Read before the store's state is handled, which records that state's refusals anew.
        let recorded = Result<Refusals?, TUFError>(catching: { () throws(TUFError) -> Refusals? in try InForceRefusals.read(configuration: configuration) })
        do throws(TUFError) {
            // Nothing downloaded (an update host that does not answer would hold the restore up).
            let updater = try configuration.updater(fetcher: NoDownloads(), clock: clock)
            do throws(TUFError) {
                try await updater.loadStoredMetadata()
                handle(.verified(try await DeliveredTargets.read(
                    from: updater, configuration: configuration, floor: floor, certificateTransparencyLogs: certificateTransparencyLogs, clock: clock,
                    downloading: false)))
            } catch {
                // The top-level metadata, or a delegated role on a target's path, may have expired.
                guard let expired = try await ExpiredTargets.read(configuration: configuration, clock: clock, after: error) else { throw error }
                handle(.storedMetadataExpired(expired))
                metrics.record(status)
            }
        } catch {
            restoreRecordedRefusals(recorded, after: error)
            return status
        }
        joinRecordedRefusals(recorded)
        return status
    }

    /// One refresh: the TUF workflow, then the targets, verified and applied, then
    /// ``checkExpiry()``. Never throws: the outcome is in the returned status (and the log and
    /// metrics).
    @discardableResult
    public func refresh() async -> TrustUpdateStatus {
        state.withLock { $0.status.lastAttempt = now() }
        do throws(TUFError) {
            let updater = try configuration.updater(fetcher: fetcher, clock: clock)
            try await updater.refresh()
            handle(.verified(try await DeliveredTargets.read(
                from: updater, configuration: configuration, floor: floor, certificateTransparencyLogs: certificateTransparencyLogs, clock: clock,
                downloading: true)))
            let now = now()
            state.withLock { ($0.status.lastSuccess, $0.status.consecutiveFailures, $0.status.lastError) = (now, 0, nil) }
        } catch {
            handle(.failed(TrustUpdateStatus.Failure(.refresh, error)))
        }
        checkExpiry()
        let status = status
        metrics.record(status)
        return status
    }

    /// Applies the rules to a delivered policy past its own `expires`, or whose TUF metadata
    /// has expired: the floor goes back in force (keeping the deny-list and key withdrawals),
    /// or the policy stays and the status says so. Called after every refresh and on every tick
    /// of ``run()``.
    public func checkExpiry() {
        let (before, after) = handle(.clock(now()))
        if after.inForce != before.inForce { metrics.record(after) }
    }

    /// Restores the stored state, then refreshes on ``Configuration/schedule`` until the task
    /// is cancelled: each interval with jitter, earlier when a pin set, the policy or the
    /// metadata nears its expiry, and with exponential back-off after a failure. Cancellation
    /// abandons a refresh in flight (nothing of it is put in force) and ends the loop.
    ///
    /// With the `LifecycleService` trait this is also the `Service` requirement, and a
    /// graceful shutdown ends it too: no new refresh starts, the sleep between refreshes ends
    /// at once, and a refresh in flight finishes and is applied or refused whole first
    /// ("Running under ServiceLifecycle" in the module's documentation). The log and
    /// ``TrustUpdateStatus/stopped`` say why it returned.
    public func run() async {
        state.withLock { ($0.status.stopped, $0.status.nextRefresh) = (nil, nil) }
        await restore()
        while !Task.isCancelled && !Self.isShuttingDownGracefully {
            let status = await refresh()
            let delay = configuration.schedule.delay(after: status, policy: deliveredPolicy, now: now())
            state.withLock { $0.status.nextRefresh = now().addingTimeInterval(delay) }
            // Cancelled (or shut down) while asleep: the loop ends.
            guard await Self.sleep(seconds: delay) else { break }
        }
        let reason: TrustUpdateStatus.Stop = Task.isCancelled ? .cancelled : .gracefulShutdown
        state.withLock { ($0.status.stopped, $0.status.nextRefresh) = (reason, nil) }
        logger.notice(
            "Trust updates stopped (\(reason == .cancelled ? "cancelled" : "graceful shutdown")): the policy in force stays",
            metadata: ["trust_update.stopped": .string(reason.rawValue)])
    }

    func now() -> Date { Date(timeIntervalSince1970: TimeInterval(clock.now())) }
}

extension TrustUpdateClient {
    /// The response-signing keys delivered and in force: `isEmpty` when no delivered set is in
    /// force, or the delivered one holds no keys.
    public var signingKeys: SigningKeySet { state.withLock { $0.signingKeys ?? SigningKeySet() } }

    /// The response-signing keys to verify with, as an RFC 9421 policy reads them:
    /// `MessageSignaturePolicy(keyProvider: { client.signingKeys(orFloor: compiledKeys) })`.
    ///
    /// - While a delivered state with a `jwks.json` is in force: that set, even empty — a
    ///   repository that withdraws every key has withdrawn the compiled-in ones too.
    /// - While the floor is in force after a verified state (a revert, a restart with expired
    ///   metadata, a refused or expired policy): the compiled-in keys that the newest verified
    ///   `jwks.json` still holds (the same public key, under any key ID). A key the repository
    ///   withdrew stays withdrawn, as a deny-listed key stays refused.
    /// - Before any verified state, or when the newest published no `jwks.json`: `floor`.
    ///
    /// - Parameter floor: the compiled-in key set.
    public func signingKeys(orFloor floor: SigningKeySet) -> SigningKeySet {
        let (inForce, lastVerified) = state.withLock { ($0.signingKeys, $0.lastVerifiedSigningKeys) }
        if let inForce { return inForce }
        guard let lastVerified else { return floor }
        return floor.keepingKeys(heldBy: lastVerified)
    }
}

extension TrustUpdateClient {
    /// The last step of ``restore()``, for a store that cannot be restored and has not expired
    /// (a refresh interrupted between its files, a cached target that no longer matches): what
    /// only refuses, as recorded after the last verified state the client handled, is put back
    /// over the floor. A record that does not read is not used: the floor, as with no record,
    /// and the reason beside `failure`'s.
    func restoreRecordedRefusals(_ recorded: Result<Refusals?, TUFError>, after failure: TUFError) {
        switch recorded {
        case .success(let refusals?):
            handle(.storeInterrupted(InForceRefusals(refusals, failure: failure)))
            metrics.record(status)
        case .success(nil):
            handle(.failed(TrustUpdateStatus.Failure(.restore, failure)))
        case .failure(let error):
            handle(.failed(TrustUpdateStatus.Failure(.restore, TUFError(failure.code, "\(failure.reason); \(error.reason)"))))
        }
    }

    /// The last step of ``restore()`` for a store that was restored (whatever it put in force):
    /// the recorded refusals joined to it. A record that does not read adds nothing and is
    /// logged; the store's own state stands.
    func joinRecordedRefusals(_ recorded: Result<Refusals?, TUFError>) {
        switch recorded {
        case .success(let refusals?):
            handle(.recordedRefusals(refusals))
            metrics.record(status)
        case .success(nil):
            break
        case .failure(let error):
            logger.error("The record of the refusals in force was not joined to the restored state: \(error.description)")
        }
    }
}
