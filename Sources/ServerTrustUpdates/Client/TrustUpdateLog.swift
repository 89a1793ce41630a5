import Logging
import ServerTrust

/// What a ``TrustUpdateClient`` logs: one line (or two) per transition of ``TrustUpdateState``,
/// at the level its outcome deserves — a refusal or an expiry is an error an operator must see.
struct TrustUpdateLog {
    let logger: Logger
    /// The policy target's name, as the lines quote it.
    let policyTarget: String

    /// Logs what `event` did to the status, `before` to `after`.
    func record(_ event: TrustUpdateState.Event, from before: TrustUpdateStatus, to after: TrustUpdateStatus) {
        let generation: Logger.Metadata = ["trust_update.generation": .stringConvertible(after.generation)]
        let replaced = after.generation != before.generation
        let keptDenyList = "the verified deny-list is in force (\(after.denyListEntries) entries), the policy in force stays"
        switch event {
        case .verified:
            switch after.lastOutcome {
            case .unchanged?:
                logger.debug("Trust update: the repository holds the policy in force")
            case .applied?:
                logger.notice(
                    "Trust update applied: \(policyTarget) (targets version \(after.targetsVersion.map(String.init) ?? "?")) is in force",
                    metadata: generation.merging(["trust_update.policy_sha256": .string(after.policySHA256 ?? "?")]) { $1 })
            default:
                logger.warning("Trust update refused: \(policyTarget) \(after.refusal?.description ?? "")")
                if replaced { logger.notice("Trust update: \(keptDenyList)", metadata: generation) }
            }
        case .storedMetadataExpired(let expired):
            if replaced { logger.notice("Trust update: \(keptDenyList)", metadata: generation) }
            let entries = expired.denyList.map { String(TrustUpdateState.entries($0)) } ?? "no"
            logger.error(
                "The stored trust update has expired (\(expired.failure.description)): the compiled-in floor is in force, with the last verified deny-list (\(entries) entries)",
                metadata: generation)
        case .storeInterrupted(let recorded):
            if replaced { logger.notice("Trust update: \(keptDenyList)", metadata: generation) }
            let entries = recorded.denyList.map { String(TrustUpdateState.entries($0)) } ?? "no"
            logger.error(
                "The stored trust update could not be restored (\(recorded.failure.description)): the compiled-in floor is in force (floorStoreInterrupted), with the deny-list and key withdrawals recorded from targets version \(recorded.targetsVersion.map(String.init) ?? "?") (\(entries) entries)",
                metadata: generation.merging(["trust_update.in_force": .string(TrustUpdateStatus.InForce.floorStoreInterrupted.rawValue)]) { $1 })
        case .recordedRefusals(let recorded):
            if replaced {
                let entries = recorded.denyList.map { String(TrustUpdateState.entries($0)) } ?? "no"
                logger.notice(
                    "Trust update: the deny-list and key withdrawals recorded from targets version \(recorded.targetsVersion.map(String.init) ?? "?") (\(entries) entries) are joined to what the store put back: \(keptDenyList)",
                    metadata: generation)
            }
        case .failed(let failure) where failure.stage == .refresh:
            logger.error(
                "Trust update failed; the policy in force stays: \(failure)",
                metadata: ["trust_update.consecutive_failures": .stringConvertible(after.consecutiveFailures)])
        case .failed(let failure):
            logger.notice("No stored trust update restored: \(failure.error.description)", metadata: ["tuf.error": .string("\(failure.code)")])
        case .clock:
            guard after.inForce != before.inForce else { return }
            if after.inForce.isDelivered {
                logger.error("Trust update expired (\(after.inForce.rawValue)): the delivered policy stays in force, as the rules allow")
            } else {
                logger.error("Trust update expired (\(after.inForce.rawValue)): the compiled-in floor is in force again", metadata: generation)
            }
        }
    }
}
