import Foundation
import ServerTrust
import ServerTrustPurchases
import ServerTrustTUF

/// What a ``TrustUpdateClient`` has in force, as a value: the reported ``status``, and what of
/// the verified states stays in force beside it (the delivered policy, the deny-list, the key
/// sets). It changes only through ``handle(_:floorDenyList:rules:)``, a pure transition that
/// says what to put in the live manager (``Effect``); the client carries that out and records
/// the manager's generation.
///
/// The guarantees it keeps, whatever the state:
/// - a verified deny-list is put in force from every verified state — also when its policy is
///   refused or expired, at a restart with expired metadata, and at a restart on a store a
///   refresh left incomplete (``InForceRefusals``) — and no revert drops it
///   (`PolicyFloor.denyList(floor:delivered:)`);
/// - the key set of the newest verified state bounds the compiled-in keys after a revert
///   (``lastVerifiedSigningKeys``): a key the repository withdrew stays withdrawn;
/// - a failure changes nothing in force;
/// - the CT log list in force never goes back in time: a delivered list older than it is
///   refused with its policy, a revert to the floor keeps the newest list put in force, and a
///   policy requiring CT is never put in force without a list;
/// - the App Store signing trust in force is the one delivered with the policy in force, else
///   the floor's: a revert puts the floor's back.
struct TrustUpdateState: Sendable {
    var status = TrustUpdateStatus()
    /// The delivered policy last put in force; what is in force only while
    /// `status.inForce.isDelivered` (``deliveredPolicy``).
    var policy: TrustPolicyFile?
    /// The deny-list of the newest verified state, joined to the floor's in force.
    var denyList: KeyDenyList?
    /// The delivered key set in force; nil when none is (none delivered, or a revert).
    var signingKeys: SigningKeySet?
    /// The key set of the newest verified state, nil when it delivered none: after a revert it
    /// bounds the compiled-in keys (`TrustUpdateClient.signingKeys(orFloor:)`).
    var lastVerifiedSigningKeys: SigningKeySet?
    /// The ``DeliveredTargets/fingerprint`` of the targets in force; empty when what is in force
    /// is not the newest verified state, so that the same targets verified again are applied again.
    var fingerprint: [UInt8] = []
    /// The floor's CT log list (the compiled-in one), nil when the floor has none.
    let floorLogList: CTLogList?
    /// The delivered CT log list in force, nil while the floor's is. Kept by a revert: the
    /// floor's list is older, and a list only ages.
    var logList: CTLogList?
    /// The floor's App Store signing trust, nil when no target is configured.
    let floorAppleSigningTrust: AppleSigningTrust?
    /// How many records of what refuses were made: numbers them, so the client writes them in
    /// the order the states were handled.
    var recordSequence = 0

    /// The state before any verified one: the floor, or every host refused.
    ///
    /// - Parameters:
    ///   - floorDenyList: the floor's deny-list, in force from the start.
    ///   - floorLogList: the floor's CT log list, in force until one is delivered.
    ///   - floorAppleSigningTrust: the floor's App Store signing trust, when a target is configured.
    init(
        inForce: TrustUpdateStatus.InForce = .floorNoUpdateYet, floorDenyList: KeyDenyList, floorLogList: CTLogList? = nil,
        floorAppleSigningTrust: AppleSigningTrust? = nil
    ) {
        status.inForce = inForce
        status.denyListEntries = Self.entries(floorDenyList)
        self.floorLogList = floorLogList
        self.floorAppleSigningTrust = floorAppleSigningTrust
        status.appleSigningTrust = floorAppleSigningTrust.map { TrustUpdateStatus.AppleSigningTrustInForce($0, source: .floor) }
        status.certificateTransparencyLogList = floorLogList.map { TrustUpdateStatus.LogList($0, source: .floor) }
    }

    /// The CT log list in force: the delivered one, else the floor's.
    var logListInForce: CTLogList? { logList ?? floorLogList }

    /// The delivered policy in force, or nil when the floor alone is.
    var deliveredPolicy: TrustPolicyFile? { status.inForce.isDelivered ? policy : nil }

    enum Event: Sendable {
        /// A refresh or a restore read and verified a state's targets.
        case verified(DeliveredTargets)
        /// A restore found the stored metadata expired: only what refuses is put back.
        case storedMetadataExpired(ExpiredTargets)
        /// A restore found the store unrestorable (a refresh interrupted between its files):
        /// only what refuses, as recorded beside it, is put back.
        case storeInterrupted(InForceRefusals)
        /// A restore put back what the store holds: the refusals recorded beside it are joined
        /// to what is in force (refusals only accumulate: a state whose deny-list or key set
        /// this release cannot read, or a lost record write, never drops what was refused).
        case recordedRefusals(Refusals)
        /// A refresh or a restore failed.
        case failed(TrustUpdateStatus.Failure)
        /// Time passed: a delivered policy, or the metadata behind it, may have expired.
        case clock(Date)
    }

    /// What the live manager gets.
    enum Effect: Sendable {
        /// Nothing: the manager, and its connections, are left alone.
        case none
        /// The delivered policy's manager, the CT log list to put in force before it (nil: the
        /// list in force stays), and the App Store signing trust delivered with it (nil: the floor's).
        case putInForce(ServerTrustManager, logList: CTLogList?, appleSigningTrust: AppleSigningTrust?)
        /// The policies in force, with the floor's deny-list joined to this one.
        case replaceDenyList(KeyDenyList?)
        /// The floor (``PolicyFloor/reverted(floor:denyList:rules:)``), with this deny-list joined to its own.
        case revertToFloor(KeyDenyList?)
    }

    /// The one transition: the state after `event`, and what the live manager gets.
    ///
    /// - Parameters:
    ///   - floorDenyList: the floor's deny-list (the reported entries are the union).
    ///   - rules: what expiry does.
    mutating func handle(_ event: Event, floorDenyList: KeyDenyList, rules: TrustUpdateRules) -> Effect {
        switch event {
        case .verified(let targets):
            if targets.fingerprint == fingerprint, status.inForce == .delivered {
                status.lastOutcome = .unchanged
                status.metadataExpires = targets.metadataExpires
                status.targetsVersion = targets.targetsVersion
                return .none
            }
            switch targets.verdict {
            case .unreadable(let refusal):
                (status.lastOutcome, status.refusal) = (.refused, refusal)
                return .none
            case .refused(let refusal):
                (status.lastOutcome, status.refusal) = (.refused, refusal)
                return keepRefusals(
                    targets.denyList, targets.signingKeys, floorStatus: refusal.code == .expired ? .floorPolicyExpired : nil, floorDenyList: floorDenyList)
            case .accepted(let delivered, let manager):
                if let refusal = logListRefusal(targets, delivered) {
                    (status.lastOutcome, status.refusal) = (.refused, refusal)
                    return keepRefusals(targets.denyList, targets.signingKeys, floorStatus: nil, floorDenyList: floorDenyList)
                }
                (policy, denyList, fingerprint) = (delivered, targets.denyList, targets.fingerprint)
                if let list = targets.logList {
                    logList = list
                    status.certificateTransparencyLogList = TrustUpdateStatus.LogList(list, source: .delivered)
                }
                (signingKeys, lastVerifiedSigningKeys) = (targets.signingKeys, targets.signingKeys)
                if let floor = floorAppleSigningTrust {
                    let inForce = targets.appleSigningTrust ?? floor
                    status.appleSigningTrust = TrustUpdateStatus.AppleSigningTrustInForce(inForce, source: targets.appleSigningTrust == nil ? .floor : .delivered)
                }
                status.inForce = .delivered
                status.policySHA256 = targets.policySHA256
                status.targetsVersion = targets.targetsVersion
                status.policyExpires = delivered.expires
                status.metadataExpires = targets.metadataExpires
                status.denyListEntries = Self.entries(PolicyFloor.denyList(floorDenyList, delivered: targets.denyList))
                status.signingKeyIDs = targets.signingKeys?.keyIDs ?? []
                status.lastVerifiedSigningKeyIDs = targets.signingKeys?.keyIDs
                (status.lastOutcome, status.refusal) = (.applied, nil)
                return .putInForce(manager, logList: targets.logList, appleSigningTrust: targets.appleSigningTrust)
            }
        case .storedMetadataExpired(let expired):
            let effect = keepRefusals(expired.denyList, expired.signingKeys, floorStatus: .floorMetadataExpired, floorDenyList: floorDenyList)
            status.targetsVersion = expired.targetsVersion
            status.metadataExpires = expired.metadataExpires
            status.lastError = TrustUpdateStatus.Failure(.restoreExpired, expired.failure, storedMetadataExpired: expired.metadataExpires)
            return effect
        case .storeInterrupted(let recorded):
            let effect = keepRefusals(recorded.denyList, recorded.signingKeys, floorStatus: .floorStoreInterrupted, floorDenyList: floorDenyList)
            status.targetsVersion = recorded.targetsVersion
            status.lastError = TrustUpdateStatus.Failure(.restoreInterrupted, recorded.failure)
            return effect
        case .recordedRefusals(let recorded):
            let joined = Refusals(denyList: denyList, signingKeys: lastVerifiedSigningKeys, targetsVersion: nil).joined(with: recorded)
            let effect: Effect = joined.denyList == denyList ? .none : .replaceDenyList(joined.denyList)
            (denyList, lastVerifiedSigningKeys) = (joined.denyList, joined.signingKeys)
            status.denyListEntries = Self.entries(PolicyFloor.denyList(floorDenyList, delivered: denyList))
            status.lastVerifiedSigningKeyIDs = lastVerifiedSigningKeys?.keyIDs
            return effect
        case .failed(let failure):
            status.lastError = failure
            if failure.stage == .refresh {
                status.lastOutcome = .failed
                status.consecutiveFailures += 1
            }
            return .none
        case .clock(let now):
            return expire(now: now, rules: rules)
        }
    }

    /// Why a verified state's policy, accepted by the floor, may still not be put in force
    /// because of its CT log list: older than the list in force (a rollback), or none at all
    /// — delivered or in force — for a policy with a host requiring CT. Nil when it may.
    private func logListRefusal(_ targets: DeliveredTargets, _ delivered: TrustPolicyFile) -> TrustUpdateStatus.Refusal? {
        let inForce = logListInForce
        if let list = targets.logList, let inForce, list.timestamp < inForce.timestamp {
            return TrustUpdateStatus.Refusal(
                .logListRollback,
                "its CT log list \(targets.logListTarget) is dated \(list.timestamp.formatted(.iso8601)), older than the one in force "
                    + "(\(inForce.timestamp.formatted(.iso8601))): refused as a rollback")
        }
        if targets.logList == nil, inForce == nil, let host = delivered.hosts.first(where: { $0.policy.certificateTransparency != nil }) {
            return TrustUpdateStatus.Refusal(
                .unusable, "it cannot be applied: \(host.pattern) requires Certificate Transparency, and no CT log list is in force or delivered "
                    + "(\(targets.logListTarget))")
        }
        return nil
    }

    /// Puts in force what only refuses of a verified state whose policy is not put in force:
    /// its deny-list, joined to the floor's under the policies in force, and its key set as the
    /// bound of the compiled-in keys. A delivered policy in force stays, and so do its keys.
    /// The deny-list in force is thus always the newest verified state's: what a restart, which
    /// reads only the newest, puts back too.
    ///
    /// - Parameter floorStatus: what `status.inForce` says from now on when the floor is in
    ///   force; nil leaves it as it is — except after a restore from the record of an
    ///   interrupted store (`floorStoreInterrupted`): a verified state replaces that record, so
    ///   the floor is then in force as after any refused state (`floorNoUpdateYet`).
    private mutating func keepRefusals(
        _ denyList: KeyDenyList?, _ keys: SigningKeySet?, floorStatus: TrustUpdateStatus.InForce?, floorDenyList: KeyDenyList
    ) -> Effect {
        let effect: Effect = denyList == self.denyList ? .none : .replaceDenyList(denyList)
        (self.denyList, lastVerifiedSigningKeys, fingerprint) = (denyList, keys, [])
        let floorStatus = floorStatus ?? (status.inForce == .floorStoreInterrupted ? .floorNoUpdateYet : nil)
        if let floorStatus, !status.inForce.isDelivered { status.inForce = floorStatus }
        status.denyListEntries = Self.entries(PolicyFloor.denyList(floorDenyList, delivered: denyList))
        status.lastVerifiedSigningKeyIDs = keys?.keyIDs
        return effect
    }

    /// Applies the rules to a delivered policy past its own `expires`, or whose metadata has
    /// expired: the floor goes back in force (keeping the deny-list), or the policy stays and
    /// the status says so.
    private mutating func expire(now: Date, rules: TrustUpdateRules) -> Effect {
        guard status.inForce.isDelivered else { return .none }
        var next: TrustUpdateStatus.InForce = .delivered
        if let expires = status.metadataExpires, expires <= now {
            next = rules.whenMetadataExpires == .revertToFloor ? .floorMetadataExpired : .deliveredMetadataExpired
        }
        if next.isDelivered, let expires = status.policyExpires, expires <= now {
            next = rules.whenPolicyExpires == .revertToFloor ? .floorPolicyExpired : .deliveredPolicyExpired
        }
        guard next != status.inForce else { return .none }
        status.inForce = next
        guard !next.isDelivered else { return .none }
        // The same targets, verified again by a later refresh, are applied again. Delivered
        // keys are part of what expired: a frozen client must not keep trusting a key set its
        // repository may have rotated away from; their withdrawals stay (lastVerifiedSigningKeys).
        (fingerprint, signingKeys, status.signingKeyIDs) = ([], nil, [])
        status.appleSigningTrust = floorAppleSigningTrust.map { TrustUpdateStatus.AppleSigningTrustInForce($0, source: .floor) }
        return .revertToFloor(denyList)
    }

    static func entries(_ denyList: KeyDenyList) -> Int { denyList.keys.count + denyList.certificates.count }
}
