import Foundation
import ServerTrust
import ServerTrustTUF

/// The one place the client changes what is in force: an event goes through
/// ``TrustUpdateState``'s pure transition, and its effect is carried out on the live manager
/// (and the CT log list).
extension TrustUpdateClient {
    /// Runs the transition, carries its effect out on the live manager, and logs it.
    @discardableResult
    func handle(_ event: TrustUpdateState.Event) -> (before: TrustUpdateStatus, after: TrustUpdateStatus) {
        let (before, after, record) = state.withLock { state in
            let before = state.status
            let effect = state.handle(event, floorDenyList: floor.denyList, rules: configuration.rules)
            // The list first: the new manager's first evaluation reads it. Loaded once already
            // (DeliveredTargets), so this does not fail; if OpenSSL does, the list in force stays.
            if case .putInForce(_, .some(let list), _) = effect, let logs = certificateTransparencyLogs {
                do { try logs.replace(with: list) } catch { logger.error("The delivered CT log list could not be put in force: \(error)") }
            }
            // The App Store signing trust with its policy, read (and measured) already: the
            // delivered set, or the floor's when the state delivered none or on a revert.
            if let live = appleSigningTrust {
                switch effect {
                case .putInForce(_, _, let delivered): live.replace(with: delivered ?? configuration.appleSigningTrustFloor)
                case .revertToFloor: live.replace(with: configuration.appleSigningTrustFloor)
                case .none, .replaceDenyList: break
                }
            }
            if let manager = manager(for: effect) { state.status.generation = liveTrustManager.replace(with: manager) }
            // What only refuses of a verified state, recorded for a restart (numbered here, in
            // the order the states are handled; written after the lock).
            var record: (sequence: Int, record: InForceRefusals.Record)?
            if case .verified(let targets) = event, let refusals = targets.refusals, state.status.lastOutcome != .unchanged {
                state.recordSequence += 1
                record = (state.recordSequence, refusals)
            }
            return (before, state.status, record)
        }
        if let (sequence, record) = record { write(record, sequence: sequence) }
        TrustUpdateLog(logger: logger, policyTarget: configuration.policyTarget).record(event, from: before, to: after)
        return (before, after)
    }

    /// Writes the record of what refuses — no file I/O under the state lock, which `status`
    /// readers and every transition wait on — unless a later state's record is already written.
    private func write(_ record: InForceRefusals.Record, sequence: Int) {
        recordsWritten.withLock { written in
            guard sequence > written else { return }
            do throws(TUFError) {
                try InForceRefusals.write(record, metadataDirectory: configuration.metadataDirectory)
                written = sequence
            } catch {
                logger.error(
                    "The deny-list and key withdrawals in force could not be recorded (\(error.description)): a restart on a store an interrupted refresh left incomplete would put back only the floor's",
                    metadata: ["tuf.error": .string("\(error.code)")])
            }
        }
    }

    func manager(for effect: TrustUpdateState.Effect) -> ServerTrustManager? {
        switch effect {
        case .none: nil
        case .putInForce(let manager, _, _): manager
        case .replaceDenyList(let denyList):
            // The policies in force with another deny-list: built from them, they cannot fail.
            (try? liveTrustManager.current.replacing(denyList: PolicyFloor.denyList(floor: floor, delivered: denyList)))
                ?? PolicyFloor.reverted(floor: floor, denyList: denyList, rules: configuration.rules)
        case .revertToFloor(let denyList): PolicyFloor.reverted(floor: floor, denyList: denyList, rules: configuration.rules)
        }
    }

    /// The client's own list when the floor has none: empty and dated at the beginning of
    /// time, so that the first delivered list is newer; no delivered policy requiring CT is put
    /// in force on it (``TrustUpdateState``). Nil when no list target is configured.
    static func emptyLogs(_ configuration: Configuration) -> CertificateTransparencyLogs? {
        guard configuration.certificateTransparencyLogListTarget != nil, let empty = try? CTLogList(timestamp: .distantPast, logs: []) else { return nil }
        return try? CertificateTransparencyLogs(empty)
    }
}
