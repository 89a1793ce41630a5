import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing
@testable import ServerTrustUpdates

/// The CT log list target (`ct_log_list.json`) in the pure transition: every state × a list
/// that is newer, older (a rollback), garbled, or missing for a policy requiring CT — with the
/// floor's list and without one. `TrustUpdateCTLogListTests` proves the same against a live
/// repository and server.
extension TrustUpdateStateTests {
    /// Made once, on first use; a failure fails each test that uses them, with its error.
    static let logAMade = Result { try TestCTLog(description: "A", operatorName: "Operator A") }
    static let logBMade = Result { try TestCTLog(description: "B", operatorName: "Operator B") }
    static var logA: TestCTLog { get throws { try logAMade.get() } }
    static var logB: TestCTLog { get throws { try logBMade.get() } }
    /// The floor's list, and the delivered ones around it.
    static let floorListDate = now.addingTimeInterval(-10 * 86_400)
    static func logListJSON(_ logs: [TestCTLog], at date: Date) -> String {
        var list = TestCTLogList()
        for log in logs { list.add(log, state: .usable, since: now.addingTimeInterval(-100 * 86_400)) }
        return String(decoding: list.json(timestamp: date), as: UTF8.self)
    }
    static var floorLogList: CTLogList { get throws { try CTLogList(json: Array(logListJSON([logA], at: floorListDate).utf8)) } }

    static func targets(policy: String, logList: String?, logs: CertificateTransparencyLogs? = nil) throws -> DeliveredTargets {
        try DeliveredTargets(
            policy: Array(policy.utf8), denyList: Array(denyList1File.utf8), jwks: Array(SigningKeySet.jwksDocument([("k1", key1)]).utf8),
            logList: logList.map { Array($0.utf8) }, targetsVersion: 4, metadataExpires: now.addingTimeInterval(86_400), floor: floor,
            configuration: configuration, certificateTransparencyLogs: logs, now: now)
    }

    static func listTargets(at date: Date) throws -> DeliveredTargets {
        try targets(policy: policy(pins: [1, 2, 4]), logList: logListJSON([logA, logB], at: date))
    }

    /// Every state, with and without the floor's list, and with a delivered list in force.
    static func statesWithLogLists() throws -> [(String, State)] {
        let withFloorList = try states(floorLogList: floorLogList).map { ("\($0.0), floor's list", $0.1) }
        let withDeliveredList = try states().map { name, state -> (String, State) in
            var state = state
            _ = try state.handle(.verified(listTargets(at: floorListDate)), floorDenyList: floor.denyList, rules: TrustUpdateRules())
            _ = try state.handle(.verified(inForceTargets), floorDenyList: floor.denyList, rules: TrustUpdateRules())
            return ("\(name) after a delivered list", state)
        }
        return try states() + withFloorList + withDeliveredList
    }

    @Test func aNewerLogListIsPutInForceWithItsPolicyFromEveryState() throws {
        let newer = try Self.listTargets(at: Self.now)
        for (name, state) in try Self.statesWithLogLists() {
            let (next, applied) = try Self.handle(.verified(newer), on: state)
            #expect(applied == .deliveredWithLogList(Self.now), "\(name)")
            #expect(next.status.lastOutcome == .applied, "\(name)")
            #expect(Held(next) == Held(inForceAfterApplying: newer, keys: ["k1"]), "\(name)")
            #expect(next.status.certificateTransparencyLogList == TrustUpdateStatus.LogList(timestamp: Self.now, logCount: 2, source: .delivered), "\(name)")
        }
    }

    /// Fifth review, item 6b, decided: the floor does not bound a delivered log list. A list
    /// that drops the floor's log and names one the floor's list lacks is put in force from every
    /// state: it is trusted as the targets key that signs it is, like the policy beside it, and
    /// CT is no defence against that key's holder (SECURITY.md). Changing that rule fails here.
    @Test func aDeliveredLogListIsNotBoundedByTheFloorsLogs() throws {
        let replacing = try Self.targets(policy: Self.policy(pins: [1, 2, 4]), logList: Self.logListJSON([Self.logB], at: Self.now))
        for (name, state) in try Self.statesWithLogLists() {
            let (next, applied) = try Self.handle(.verified(replacing), on: state)
            #expect(applied == .deliveredWithLogList(Self.now), "\(name)")
            #expect(next.status.lastOutcome == .applied, "\(name)")
            let inForce = try #require(next.logListInForce, "\(name)")
            #expect(inForce.log(id: try Self.logB.logID) != nil, "\(name): the delivered list's own log")
            #expect(inForce.log(id: try Self.logA.logID) == nil, "\(name): the floor's log is gone")
            #expect(next.status.certificateTransparencyLogList == TrustUpdateStatus.LogList(timestamp: Self.now, logCount: 1, source: .delivered), "\(name)")
        }
    }

    /// A delivered state without a list leaves the list in force as it is.
    @Test func aStateWithoutALogListKeepsTheOneInForce() throws {
        for (name, state) in try Self.statesWithLogLists() {
            let (next, applied) = try Self.handle(.verified(Self.newerTargets), on: state)
            #expect(applied == .delivered, "\(name)")
            #expect(try Held(next) == Held(inForceAfterApplying: Self.newerTargets, keys: ["k1"], logList: state.logListInForce?.timestamp), "\(name)")
        }
    }

    /// Older than the list in force (the floor's or a delivered one): refused with its policy;
    /// the deny-list and key withdrawals beside it go in force, as from every refused state.
    @Test func anOlderLogListIsRefusedAsARollbackWithItsPolicy() throws {
        let older = try Self.listTargets(at: Self.floorListDate.addingTimeInterval(-1))
        for (name, state) in try Self.statesWithLogLists() {
            let (next, applied) = try Self.handle(.verified(older), on: state)
            guard state.logListInForce != nil else {
                #expect(applied == .deliveredWithLogList(Self.floorListDate.addingTimeInterval(-1)), "\(name): no list in force, nothing to roll back")
                continue
            }
            #expect(next.status.lastOutcome == .refused, "\(name)")
            #expect(next.status.refusal?.code == .logListRollback, "\(name)")
            #expect(next.status.refusal?.reason.contains("ct_log_list.json") == true, "\(name)")
            #expect(applied == .denyList(Self.denyList1), "\(name)")
            #expect(Held(next) == Held(state, inForce: Self.inForceAfterRefusal(state), denyList: Self.denyList1, lastVerifiedSigningKeys: ["k1"]), "\(name)")
        }
    }

    /// A list that does not read: the policy is refused with the reason naming the file, the
    /// line and the member; the deny-list and key withdrawals beside it go in force.
    @Test func aGarbledLogListRefusesItsPolicyNamingTheMember() throws {
        let garbled = try Self.targets(policy: Self.policy(pins: [1, 2, 4]), logList: #"{"log_list_timestamp": "2027-01-01T00:00:00Z", "operators": [{"name": "X", "logs": [{"key": "AAAA", "log_id": "AAAA"}]}]}"#)
        guard case .refused(let refusal) = garbled.verdict else {
            Issue.record("a garbled list is not refused: \(garbled.verdict)")
            return
        }
        #expect(refusal.code == .invalidLogList)
        #expect(refusal.reason.contains("ct_log_list.json:1: operators[0].logs[0].key"), "\(refusal.reason)")
        #expect(garbled.logList == nil && garbled.denyList == Self.denyList1)
        for (name, state) in try Self.statesWithLogLists() {
            let (next, applied) = try Self.handle(.verified(garbled), on: state)
            #expect(next.status.refusal?.code == .invalidLogList, "\(name)")
            #expect(applied == .denyList(Self.denyList1), "\(name)")
            #expect(Held(next) == Held(state, inForce: Self.inForceAfterRefusal(state), denyList: Self.denyList1, lastVerifiedSigningKeys: ["k1"]), "\(name)")
        }
    }

    /// A policy requiring CT with no list delivered or in force is never put in force (its
    /// hosts would be judged against an empty list).
    @Test func aPolicyRequiringCTNeedsALogList() throws {
        let empty = try CertificateTransparencyLogs(try CTLogList(timestamp: .distantPast, logs: []))
        let ctPolicy = "{\"version\": 1, \"hosts\": {\"\(Self.host)\": {\"pins\": [{\"pin\": \"\(Self.pin(1))\"}, {\"pin\": \"\(Self.pin(2))\"}], "
            + "\"certificateTransparency\": {\"mode\": \"enforced\"}}}}"
        let withoutList = try Self.targets(policy: ctPolicy, logList: nil, logs: empty)
        let withList = try Self.targets(policy: ctPolicy, logList: Self.logListJSON([Self.logA, Self.logB], at: Self.now), logs: empty)
        for (name, state) in try Self.statesWithLogLists() {
            let (next, applied) = try Self.handle(.verified(withoutList), on: state)
            if state.logListInForce == nil {
                #expect(next.status.refusal?.code == .unusable, "\(name)")
                #expect(next.status.refusal?.reason.contains("requires Certificate Transparency") == true, "\(name)")
                #expect(applied == .denyList(Self.denyList1), "\(name)")
            } else {
                #expect(applied == .delivered, "\(name)")
            }
            #expect(try Self.handle(.verified(withList), on: state).1 == .deliveredWithLogList(Self.now), "\(name)")
        }
    }

    /// A revert to the floor keeps the newest list: the floor's is older.
    @Test func aRevertKeepsTheDeliveredLogList() throws {
        var state = try State(floorDenyList: Self.floor.denyList, floorLogList: Self.floorLogList)
        _ = try state.handle(.verified(Self.listTargets(at: Self.now)), floorDenyList: Self.floor.denyList, rules: TrustUpdateRules())
        state.status.metadataExpires = Self.now
        let (next, applied) = try Self.handle(.clock(Self.now.addingTimeInterval(1)), on: state)
        #expect(applied == .floor(Self.denyList1))
        #expect(next.status.inForce == .floorMetadataExpired)
        #expect(next.logListInForce?.timestamp == Self.now)
        #expect(next.status.certificateTransparencyLogList?.source == .delivered)
    }
}
