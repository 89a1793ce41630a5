import Foundation
import Logging
import ServerTrust
import ServerTrustTestSupport
import Testing
@testable import ServerTrustHTTP

/// The connection guard's rule as a pure verdict (`ConnectionGuard`), apart from libcurl and
/// OpenSSL; `ConnectionGuardTests` proves it against live connections.
@Suite struct ConnectionGuardVerdictTests {
    private static func policy(lifetime: TimeInterval = 3600) throws -> TrustPolicy {
        TrustPolicy(
            host: NormalizedHost("guard.servertrust.test"), pattern: nil, evaluator: DefaultTrustEvaluator(),
            anchors: try LabPKI.makeRoot().trustAnchors(), validationOptions: PathValidationOptions(), revocationFetcher: nil,
            counters: TrustCounters(), logger: Logger(label: "servertrust.test"), maximumConnectionLifetime: lifetime)
    }

    private static func stamp(_ policy: TrustPolicy) -> EvaluationRecord {
        EvaluationRecord(policy: policy, report: TrustReport(notEvaluated: policy, reason: "test"))
    }

    @Test func aConnectionStampedByThisPolicyIsAdmittedUntilItsStampExpires() throws {
        let policy = try Self.policy(lifetime: 60)
        let record = Self.stamp(policy)
        guard case .admit(let admitted) = ConnectionGuard.verdict(record: record, policyID: policy.id, now: Date(), isOnFreshConnection: false)
        else { Issue.record("not admitted"); return }
        #expect(admitted === record)
        let later = Date().addingTimeInterval(61)
        guard case .refuseForRetry(.expired) = ConnectionGuard.verdict(record: record, policyID: policy.id, now: later, isOnFreshConnection: false)
        else { Issue.record("an expired stamp was not refused for a retry"); return }
        // On the retry's own fresh connection, an expired stamp (a clock far ahead) is evaluated, not refused again.
        guard case .evaluate(notAfter: nil) = ConnectionGuard.verdict(record: record, policyID: policy.id, now: later, isOnFreshConnection: true)
        else { Issue.record("the retry was refused again"); return }
    }

    @Test func aConnectionStampedByAnotherPolicyOrNoneIsEvaluatedKeepingItsExpiry() throws {
        let first = try Self.policy()
        let second = try Self.policy()
        let record = Self.stamp(first)
        guard case .evaluate(let notAfter) = ConnectionGuard.verdict(record: record, policyID: second.id, now: Date(), isOnFreshConnection: false)
        else { Issue.record("another policy's stamp was admitted"); return }
        #expect(notAfter == record.expiry)
        guard case .evaluate(notAfter: nil) = ConnectionGuard.verdict(record: nil, policyID: second.id, now: Date(), isOnFreshConnection: false)
        else { Issue.record("an unstamped connection was not evaluated"); return }
    }

    @Test func aReusedConnectionWithoutTheHandshakeSCTsItsLeafNeedsIsRefusedForAFullHandshake() {
        #expect(ConnectionGuard.refusalBeforeEvaluating(
            handshakeHasSCTs: false, isReused: true, policyReadsSCTs: true, embeddedSCTsSuffice: false, isOnFreshConnection: false) == .withoutHandshakeSCTs)
        for (has, isReused, reads, suffice, fresh) in [
            (true, true, true, false, false), (false, false, true, false, false), (false, true, false, false, false),
            (false, true, true, true, false), (false, true, true, false, true),
        ] {
            #expect(ConnectionGuard.refusalBeforeEvaluating(
                handshakeHasSCTs: has, isReused: isReused, policyReadsSCTs: reads, embeddedSCTsSuffice: suffice, isOnFreshConnection: fresh) == nil)
        }
    }

    @Test func aResumedSessionWithoutTheStapleItsLeafRequiresIsRefusedForAFullHandshake() {
        #expect(ConnectionGuard.refusalBeforeEvaluating(
            hasStaple: false, isResumed: true, policyReadsStaples: true, leafRequiresStaple: true, isOnFreshConnection: false) == .resumedWithoutStaple)
        for (hasStaple, isResumed, reads, requires, fresh) in [
            (true, true, true, true, false), (false, false, true, true, false), (false, true, false, true, false),
            (false, true, true, false, false), (false, true, true, true, true),
        ] {
            #expect(ConnectionGuard.refusalBeforeEvaluating(
                hasStaple: hasStaple, isResumed: isResumed, policyReadsStaples: reads, leafRequiresStaple: requires, isOnFreshConnection: fresh) == nil)
        }
    }

    /// A resumed session is evaluated on a chain our validation built (its stamp's, else its
    /// session cache's), never on the peer's; with none, it is refused for a full handshake.
    @Test func aResumedSessionIsEvaluatedOnAValidatedChainOrRefusedForAFullHandshake() throws {
        let root = try LabPKI.makeRoot()
        let leaf = try root.issueLeaf(dnsNames: ["guard.servertrust.test"])
        let stamped = [leaf.certificate, root.certificate]
        let stored = [leaf.certificate]
        #expect(ConnectionGuard.chain(isResumed: false, stampedValidatedChain: stamped, storedValidatedChain: stored, isOnFreshConnection: false) == .presented)
        #expect(ConnectionGuard.chain(isResumed: true, stampedValidatedChain: stamped, storedValidatedChain: stored, isOnFreshConnection: false) == .validated(stamped))
        #expect(ConnectionGuard.chain(isResumed: true, stampedValidatedChain: [], storedValidatedChain: stored, isOnFreshConnection: false) == .validated(stored))
        #expect(ConnectionGuard.chain(isResumed: true, stampedValidatedChain: nil, storedValidatedChain: nil, isOnFreshConnection: false)
            == .refuseForRetry(.resumedWithoutValidatedChain))
        // The retry disables resumption; were it resumed all the same, nothing is evaluated as trusted.
        #expect(ConnectionGuard.chain(isResumed: true, stampedValidatedChain: nil, storedValidatedChain: nil, isOnFreshConnection: true) == .validated([]))
    }

    @Test func theValidatedChainStoreKeepsTheNewestChainPerLeafUpToItsCapacity() throws {
        let root = try LabPKI.makeRoot()
        let store = ValidatedChainStore()
        let leaves = try (0...ValidatedChainStore.capacity).map { _ in try root.issueLeaf(dnsNames: ["guard.servertrust.test"]).certificate }
        for leaf in leaves { store.remember([leaf, root.certificate]) }
        #expect(store.count == ValidatedChainStore.capacity)
        #expect(store.chain(forLeaf: leaves[0]) == nil)  // the oldest went first
        #expect(store.chain(forLeaf: leaves[1]) == [leaves[1], root.certificate])
        store.remember([leaves[1]])
        #expect(store.chain(forLeaf: leaves[1]) == [leaves[1]])
        #expect(store.count == ValidatedChainStore.capacity)
        store.remember([])
        #expect(store.count == ValidatedChainStore.capacity)
    }
}
