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
}
