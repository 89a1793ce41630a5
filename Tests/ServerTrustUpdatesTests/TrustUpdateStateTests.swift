import Foundation
import ServerTrust
import ServerTrustTUF
import Testing
@testable import ServerTrustUpdates

/// The in-force state of `TrustUpdateClient` as a pure transition (`TrustUpdateState`), apart
/// from TUF and the network: every state × every event (and, for the clock, every expiry and
/// every rule), asserting what is in force after, what the live manager gets, and which
/// deny-list and key sets stay. `TrustUpdateTests` and `RefusedPolicyDenyListTests` prove the
/// same against a live repository and server.
@Suite struct TrustUpdateStateTests {
    typealias InForce = TrustUpdateStatus.InForce
    typealias State = TrustUpdateState

    static let host = "api.servertrust.test"
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static func pin(_ byte: UInt8) -> Pin { try! Pin("sha256/" + Data(repeating: byte, count: 32).base64EncodedString()) }
    /// Made once, on first use; a failure fails each test that uses it, with its error.
    static let floorMade = Result {
        try ServerTrustManager(
            policies: [try HostPattern(host): HostPolicy(pins: try PinSet([.init(pin(1), label: "1"), .init(pin(2), label: "2")]))],
            denyList: KeyDenyList(keys: [pin(9)]))
    }
    static var floor: ServerTrustManager { get throws { try floorMade.get() } }
    static let configuration = TrustUpdateClient.Configuration(metadataDirectory: "/nonexistent", initialRoot: nil, repositoryURL: "https://tuf.invalid")
    static let key0Made = Result { try SignaturePrivateKey.generate(.ed25519).publicKey }
    static let key1Made = Result { try SignaturePrivateKey.generate(.ed25519).publicKey }
    static var key0: SignaturePublicKey { get throws { try key0Made.get() } }
    static var key1: SignaturePublicKey { get throws { try key1Made.get() } }
    /// The deny-list in force in the delivered states, and the one of every newer state.
    static let denyList0 = KeyDenyList(keys: [pin(7)])
    static let denyList1 = KeyDenyList(keys: [pin(8)])

    static func targets(policy: String, denyList: String?, keys: [(String, SignaturePublicKey)]?) throws -> DeliveredTargets {
        try DeliveredTargets(
            policy: Array(policy.utf8), denyList: denyList.map { Array($0.utf8) }, jwks: keys.map { Array(SigningKeySet.jwksDocument($0).utf8) },
            targetsVersion: 4, metadataExpires: now.addingTimeInterval(86_400), floor: floor, configuration: configuration, now: now)
    }

    static func policy(pins: [UInt8], expires: Date? = nil) -> String {
        let expiry = expires.map { "\"expires\": \"\(ISO8601DateFormatter().string(from: $0))\", " } ?? ""
        return "{\"version\": 1, \(expiry)\"hosts\": {\"\(host)\": {\"pins\": [\(pins.map { "{\"pin\": \"\(pin($0))\"}" }.joined(separator: ", "))]}}}"
    }

    static let denyList0File = "{\"version\": 1, \"spki\": [\"\(pin(7))\"]}"
    static let denyList1File = "{\"version\": 1, \"spki\": [\"\(pin(8))\"]}"
    /// The targets in force in the delivered states.
    static var inForceTargets: DeliveredTargets { get throws { try targets(policy: policy(pins: [1, 2, 3]), denyList: denyList0File, keys: [("k0", key0)]) } }
    static var newerTargets: DeliveredTargets { get throws { try targets(policy: policy(pins: [1, 2, 4]), denyList: denyList1File, keys: [("k1", key1)]) } }
    /// Unpins the host: refused without `.unpinHosts`.
    static var weakening: DeliveredTargets { get throws { try targets(policy: "{\"version\": 1, \"hosts\": {\"\(host)\": {}}}", denyList: denyList1File, keys: [("k1", key1)]) } }
    static var weakeningWithTheDenyListInForce: DeliveredTargets { get throws { try targets(policy: "{\"version\": 1, \"hosts\": {\"\(host)\": {}}}", denyList: denyList0File, keys: [("k0", key0)]) } }
    static var expiredPolicy: DeliveredTargets { get throws { try targets(policy: policy(pins: [1, 2, 4], expires: now.addingTimeInterval(-60)), denyList: denyList1File, keys: [("k1", key1)]) } }
    static var unreadable: DeliveredTargets { get throws { try targets(policy: policy(pins: [1, 2, 4]), denyList: "{\"version\": 1, \"spki\": [\"sha256/x\"]}", keys: [("k1", key1)]) } }
    static var storedExpired: ExpiredTargets { get throws { try ExpiredTargets(
        denyList: denyList1, signingKeys: SigningKeySet(keys: ["k1": key1]), targetsVersion: 5, metadataExpires: now.addingTimeInterval(-60),
        failure: TUFError(.expired, "timestamp expired")) } }

    // MARK: States

    /// Every in-force state, with what a client in it holds: the fresh ones; the floor after a
    /// refused state (its deny-list and key set kept); the delivered ones (targets
    /// ``inForceTargets`` applied); the floor after a revert from them.
    static func states(policyExpires: Date? = nil, metadataExpires: Date? = nil, floorLogList: CTLogList? = nil) throws -> [(String, State)] {
        var delivered = try State(floorDenyList: floor.denyList, floorLogList: floorLogList)
        _ = try delivered.handle(.verified(inForceTargets), floorDenyList: floor.denyList, rules: TrustUpdateRules())
        delivered.status.policyExpires = policyExpires
        delivered.status.metadataExpires = metadataExpires
        func with(_ inForce: InForce, reverted: Bool = false) -> State {
            var state = delivered
            state.status.inForce = inForce
            if reverted { (state.fingerprint, state.signingKeys, state.status.signingKeyIDs) = ([], nil, []) }
            return state
        }
        var refusedAtStart = try State(floorDenyList: floor.denyList, floorLogList: floorLogList)
        _ = try refusedAtStart.handle(.verified(weakeningWithTheDenyListInForce), floorDenyList: floor.denyList, rules: TrustUpdateRules())
        // Every case, by an exhaustive switch: a state added later is covered here or the
        // tests do not build.
        return try InForce.allCases.flatMap { inForce throws -> [(String, State)] in
            switch inForce {
            case .floorNoUpdateYet:
                return [
                    ("floorNoUpdateYet", try State(floorDenyList: floor.denyList, floorLogList: floorLogList)),
                    ("floorNoUpdateYet after a refused state", refusedAtStart),
                ]
            case .refusingUntilFirstUpdate:
                return [("refusingUntilFirstUpdate", try State(inForce: .refusingUntilFirstUpdate, floorDenyList: floor.denyList, floorLogList: floorLogList))]
            case .delivered: return [("delivered", delivered)]
            case .deliveredPolicyExpired, .deliveredMetadataExpired: return [(inForce.rawValue, with(inForce))]
            case .floorPolicyExpired, .floorMetadataExpired, .floorStoreInterrupted: return [(inForce.rawValue, with(inForce, reverted: true))]
            }
        }
    }

    /// The in-force states are each covered once, and the floor's first state twice (fresh, and
    /// after a refused state).
    @Test func everyInForceStateIsCovered() throws {
        let covered = try Self.states().map(\.1.status.inForce)
        #expect(Set(covered) == Set(InForce.allCases))
        #expect(covered.count == InForce.allCases.count + 1)
    }

    /// The effect, comparable.
    enum Applied: Equatable {
        case nothing, delivered, deliveredWithLogList(Date), denyList(KeyDenyList?), floor(KeyDenyList?)
        init(_ effect: State.Effect) {
            switch effect {
            case .none: self = .nothing
            case .putInForce(_, .some(let list), _): self = .deliveredWithLogList(list.timestamp)
            case .putInForce(_, nil, _): self = .delivered
            case .replaceDenyList(let denyList): self = .denyList(denyList)
            case .revertToFloor(let denyList): self = .floor(denyList)
            }
        }
    }

    /// What a state holds, comparable: in force, the delivered policy in force (its SHA-256),
    /// the deny-list, the key sets, the fingerprint.
    struct Held: Equatable {
        let inForce: InForce
        let deliveredPolicySHA256: String?
        let denyList: KeyDenyList?
        let signingKeys: [String]?
        let lastVerifiedSigningKeys: [String]?
        let fingerprint: [UInt8]
        /// The `log_list_timestamp` of the CT log list in force, nil when none is.
        let logList: Date?
    }

    static func handle(_ event: State.Event, on state: State, rules: TrustUpdateRules = TrustUpdateRules()) throws -> (State, Applied) {
        var next = state
        let effect = try next.handle(event, floorDenyList: floor.denyList, rules: rules)
        // Whatever happened, the entries reported are those of the deny-list in force.
        #expect(try next.status.denyListEntries == State.entries(PolicyFloor.denyList(floor: floor, delivered: next.denyList)))
        return (next, Applied(effect))
    }

    // MARK: Verified states

    @Test func theTargetsInForceVerifiedAgainAreUnchangedOnlyWhileTheyAreInForce() throws {
        for (name, state) in try Self.states() {
            let (next, applied) = try Self.handle(.verified(Self.inForceTargets), on: state)
            if state.status.inForce == .delivered {
                #expect(next.status.lastOutcome == .unchanged, "\(name)")
                #expect(applied == .nothing, "\(name)")
                #expect(Held(next) == Held(state), "\(name)")
            } else {
                #expect(next.status.lastOutcome == .applied, "\(name)")
                #expect(applied == .delivered, "\(name)")
                #expect(try Held(next) == Held(inForceAfterApplying: Self.inForceTargets, keys: ["k0"]), "\(name)")
            }
        }
    }

    @Test func aNewerAcceptedStateIsPutInForceFromEveryState() throws {
        for (name, state) in try Self.states() {
            let (next, applied) = try Self.handle(.verified(Self.newerTargets), on: state)
            #expect(applied == .delivered, "\(name)")
            #expect(next.status.lastOutcome == .applied, "\(name)")
            #expect(next.status.refusal == nil, "\(name)")
            #expect(try next.status.policySHA256 == Self.newerTargets.policySHA256, "\(name)")
            #expect(try Held(next) == Held(inForceAfterApplying: Self.newerTargets, keys: ["k1"]), "\(name)")
        }
    }

    /// A refused policy leaves the policy in force (or the floor) and the delivered keys in
    /// force; its deny-list replaces the one in force, and its key set bounds the compiled-in keys.
    @Test(arguments: try [
        (Self.weakening, TrustUpdateStatus.Refusal.Code.weakensFloor), (Self.expiredPolicy, .expired),
    ])
    func aRefusedPolicyPutsOnlyItsDenyListAndKeyWithdrawalsInForce(targets: DeliveredTargets, code: TrustUpdateStatus.Refusal.Code) throws {
        for (name, state) in try Self.states() {
            let (next, applied) = try Self.handle(.verified(targets), on: state)
            #expect(next.status.lastOutcome == .refused, "\(name)")
            #expect(next.status.refusal?.code == code, "\(name)")
            #expect(applied == .denyList(Self.denyList1), "\(name)")
            // Only an expired policy says so, and only where the floor is in force.
            let inForce: InForce = code == .expired && !state.status.inForce.isDelivered ? .floorPolicyExpired : Self.inForceAfterRefusal(state)
            #expect(Held(next) == Held(state, inForce: inForce, denyList: Self.denyList1, lastVerifiedSigningKeys: ["k1"]), "\(name)")
        }
    }

    @Test func aRefusedPolicyWithTheDenyListInForceLeavesTheManagerAlone() throws {
        for (name, state) in try Self.states() {
            let (next, applied) = try Self.handle(.verified(Self.weakeningWithTheDenyListInForce), on: state)
            #expect(next.status.refusal?.code == .weakensFloor, "\(name)")
            #expect(applied == (state.denyList == Self.denyList0 ? .nothing : .denyList(Self.denyList0)), "\(name)")
            #expect(Held(next) == Held(state, inForce: Self.inForceAfterRefusal(state), denyList: Self.denyList0, lastVerifiedSigningKeys: ["k0"]), "\(name)")
        }
    }

    /// A deny-list or key set that does not read: the state is refused whole, nothing of it in force.
    @Test func anUnreadableDenyListPutsNothingInForce() throws {
        for (name, state) in try Self.states() {
            let (next, applied) = try Self.handle(.verified(Self.unreadable), on: state)
            #expect(next.status.lastOutcome == .refused, "\(name)")
            #expect(next.status.refusal?.code == .invalidTarget, "\(name)")
            #expect(applied == .nothing, "\(name)")
            #expect(Held(next) == Held(state), "\(name)")
        }
    }

    /// What a verified state whose policy is refused leaves in force: what was — except that it
    /// ends the state restored from the record of an interrupted store (its record replaced,
    /// the floor is in force as after any refused state).
    static func inForceAfterRefusal(_ state: State) -> InForce {
        state.status.inForce == .floorStoreInterrupted ? .floorNoUpdateYet : state.status.inForce
    }

    // MARK: Restore, failures

    /// A restore with expired metadata puts back only what refuses, and says so; it never
    /// takes a delivered policy out of force (a restore runs at start, where none is).
    @Test func storedMetadataExpiredPutsBackOnlyTheDenyListAndKeyWithdrawals() throws {
        for (name, state) in try Self.states() {
            let (next, applied) = try Self.handle(.storedMetadataExpired(Self.storedExpired), on: state)
            #expect(applied == .denyList(Self.denyList1), "\(name)")
            let inForce: InForce = state.status.inForce.isDelivered ? state.status.inForce : .floorMetadataExpired
            #expect(Held(next) == Held(state, inForce: inForce, denyList: Self.denyList1, lastVerifiedSigningKeys: ["k1"]), "\(name)")
            #expect(next.status.lastError?.stage == .restoreExpired, "\(name)")
            #expect(next.status.lastError?.code == .expired, "\(name)")
            #expect(next.status.lastError?.description.hasPrefix("restore: the stored metadata expired on ") == true, "\(name)")
            #expect(try next.status.metadataExpires == Self.storedExpired.metadataExpires, "\(name)")
            #expect(next.status.targetsVersion == 5, "\(name)")
        }
    }

    /// A restore on a store an interrupted refresh left incomplete puts back only what refuses,
    /// as recorded beside it, and says so; like the expired case, it never takes a delivered
    /// policy out of force.
    @Test func storeInterruptedPutsBackOnlyTheRecordedDenyListAndKeyWithdrawals() throws {
        let recorded = try InForceRefusals(
            denyList: Self.denyList1, signingKeys: SigningKeySet(keys: ["k1": Self.key1]), targetsVersion: 5,
            failure: TUFError(.versionMismatch, "snapshot version 4 is not the timestamp's 5"))
        for (name, state) in try Self.states() {
            let (next, applied) = try Self.handle(.storeInterrupted(recorded), on: state)
            #expect(applied == (state.denyList == Self.denyList1 ? .nothing : .denyList(Self.denyList1)), "\(name)")
            let inForce: InForce = state.status.inForce.isDelivered ? state.status.inForce : .floorStoreInterrupted
            #expect(Held(next) == Held(state, inForce: inForce, denyList: Self.denyList1, lastVerifiedSigningKeys: ["k1"]), "\(name)")
            #expect(next.status.lastError?.stage == .restoreInterrupted, "\(name)")
            #expect(next.status.lastError?.code == .versionMismatch, "\(name)")
            #expect(next.status.lastError?.description.hasPrefix("restore: the store could not be restored (") == true, "\(name)")
            #expect(next.status.targetsVersion == 5, "\(name)")
            #expect(next.status.lastOutcome == state.status.lastOutcome && next.status.consecutiveFailures == state.status.consecutiveFailures, "\(name)")
        }
    }

    @Test(arguments: [TrustUpdateStatus.Failure.Stage.refresh, .restore])
    func aFailureChangesNothingInForce(stage: TrustUpdateStatus.Failure.Stage) throws {
        for (name, state) in try Self.states() {
            let failure = TrustUpdateStatus.Failure(stage, TUFError(.rollback, "timestamp version 1 is below the trusted 2"))
            let (next, applied) = try Self.handle(.failed(failure), on: state)
            #expect(applied == .nothing, "\(name)")
            #expect(Held(next) == Held(state), "\(name)")
            #expect(next.status.lastError == failure, "\(name)")
            #expect(next.status.lastOutcome == (stage == .refresh ? .failed : state.status.lastOutcome), "\(name)")
            #expect(next.status.consecutiveFailures == state.status.consecutiveFailures + (stage == .refresh ? 1 : 0), "\(name)")
        }
        #expect(TrustUpdateStatus.Failure(.refresh, TUFError(.rollback, "r")).description == "rollback: r")
        #expect(TrustUpdateStatus.Failure(.restore, TUFError(.storeFailure, "s")).description == "restore: storeFailure: s")
    }

    // MARK: The clock

    /// What is in force after the clock passes the policy's own `expires` and/or its
    /// metadata's, under every rule, from a state where the delivered policy is fully in force.
    static func afterExpiry(policy: Bool, metadata: Bool, _ rules: TrustUpdateRules) -> InForce {
        if metadata, rules.whenMetadataExpires == .revertToFloor { return .floorMetadataExpired }
        if policy { return rules.whenPolicyExpires == .revertToFloor ? .floorPolicyExpired : .deliveredPolicyExpired }
        return metadata ? .deliveredMetadataExpired : .delivered
    }

    @Test(arguments: [false, true], [false, true])
    func theClockAppliesTheExpiryRulesToEveryState(policyPast: Bool, metadataPast: Bool) throws {
        let date = { (past: Bool) in Self.now.addingTimeInterval(past ? -1 : 1) }
        for whenPolicyExpires in [TrustUpdateRules.PolicyExpiry.revertToFloor, .keepPolicy] {
            for whenMetadataExpires in [TrustUpdateRules.MetadataExpiry.revertToFloor, .keepAppliedPolicy] {
                let rules = TrustUpdateRules(whenPolicyExpires: whenPolicyExpires, whenMetadataExpires: whenMetadataExpires)
                for (name, state) in try Self.states(policyExpires: date(policyPast), metadataExpires: date(metadataPast)) {
                    let label = "\(name), policy past \(policyPast), metadata past \(metadataPast), \(rules)"
                    let (next, applied) = try Self.handle(.clock(Self.now), on: state, rules: rules)
                    guard state.status.inForce.isDelivered else {
                        #expect(applied == .nothing, "\(label)")
                        #expect(Held(next) == Held(state), "\(label)")
                        continue
                    }
                    let expected = Self.afterExpiry(policy: policyPast, metadata: metadataPast, rules)
                    #expect(next.status.inForce == expected, "\(label)")
                    if expected.isDelivered {
                        #expect(applied == .nothing, "\(label)")
                        #expect(Held(next) == Held(state, inForce: expected, denyList: Self.denyList0, lastVerifiedSigningKeys: ["k0"], fingerprint: state.fingerprint), "\(label)")
                    } else {
                        // The floor, with the deny-list kept; the delivered keys go, their withdrawals stay.
                        #expect(applied == .floor(Self.denyList0), "\(label)")
                        #expect(next.signingKeys == nil && next.status.signingKeyIDs.isEmpty, "\(label)")
                        #expect(next.lastVerifiedSigningKeys?.keyIDs == ["k0"], "\(label)")
                        #expect(next.denyList == Self.denyList0 && next.fingerprint.isEmpty && next.deliveredPolicy == nil, "\(label)")
                    }
                }
            }
        }
    }

    // MARK: Reading the targets

    /// The verdict on a state's targets names why its policy may not be put in force.
    @Test func theDeliveredTargetsSayWhyTheirPolicyIsRefused() throws {
        func code(_ targets: DeliveredTargets) -> TrustUpdateStatus.Refusal.Code? {
            switch targets.verdict {
            case .accepted: nil
            case .refused(let refusal), .unreadable(let refusal): refusal.code
            }
        }
        #expect(try code(Self.newerTargets) == nil)
        #expect(try code(Self.weakening) == .weakensFloor)
        #expect(try code(Self.expiredPolicy) == .expired)
        #expect(try code(Self.unreadable) == .invalidTarget)
        #expect(try code(Self.targets(policy: "{\"version\": 2, \"hosts\": {}}", denyList: nil, keys: nil)) == .newerFormat)
        #expect(try code(Self.targets(policy: "{\"version\": 1, \"hosts\": 3}", denyList: nil, keys: nil)) == .invalidPolicy)
        #expect(try Self.newerTargets.denyList == Self.denyList1 && Self.newerTargets.signingKeys?.keyIDs == ["k1"])
        #expect(try Self.unreadable.denyList == nil && Self.unreadable.signingKeys == nil)
    }
}

extension TrustUpdateStateTests.Held {
    init(_ state: TrustUpdateState) {
        self.init(
            inForce: state.status.inForce, deliveredPolicySHA256: state.deliveredPolicy.map { _ in state.status.policySHA256 ?? "?" },
            denyList: state.denyList, signingKeys: state.signingKeys?.keyIDs, lastVerifiedSigningKeys: state.lastVerifiedSigningKeys?.keyIDs,
            fingerprint: state.fingerprint, logList: state.logListInForce?.timestamp)
        // The status reports the list in force.
        #expect(state.status.certificateTransparencyLogList?.timestamp == state.logListInForce?.timestamp)
        #expect(state.status.certificateTransparencyLogList?.source == state.logListInForce.map { _ in state.logList == nil ? .floor : .delivered })
    }

    /// `state` after a transition that keeps its delivered policy and keys, moving to `inForce`
    /// (nil: the same) with `denyList` and `lastVerifiedSigningKeys`.
    init(_ state: TrustUpdateState, inForce: TrustUpdateStatus.InForce? = nil, denyList: KeyDenyList?, lastVerifiedSigningKeys: [String]?, fingerprint: [UInt8] = []) {
        let inForce = inForce ?? state.status.inForce
        self.init(
            inForce: inForce, deliveredPolicySHA256: inForce.isDelivered ? state.policy.map { _ in state.status.policySHA256 ?? "?" } : nil,
            denyList: denyList, signingKeys: state.signingKeys?.keyIDs, lastVerifiedSigningKeys: lastVerifiedSigningKeys, fingerprint: fingerprint,
            logList: state.logListInForce?.timestamp)
    }

    /// A delivered state just applied from `targets`.
    /// `logList`: the list in force before, which a list delivered in `targets` replaces.
    init(inForceAfterApplying targets: DeliveredTargets, keys: [String], logList: Date? = nil) {
        self.init(
            inForce: .delivered, deliveredPolicySHA256: targets.policySHA256, denyList: targets.denyList, signingKeys: keys,
            lastVerifiedSigningKeys: keys, fingerprint: targets.fingerprint, logList: targets.logList?.timestamp ?? logList)
    }
}
