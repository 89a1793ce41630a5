import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// The platforms' CT policy as a pure function: each rule, and each attack refused with its reason.
@Suite struct CertificateTransparencyPolicyTests {
    static let now = Date(timeIntervalSince1970: 1_750_000_000)
    static let day: TimeInterval = 86_400
    static let listDate = now.addingTimeInterval(-10 * day)
    static let issued = now.addingTimeInterval(-30 * day)

    /// Logs A1, A2 (operator A), B1 (operator B), C1 (operator C), each usable for a year.
    let a1 = TestCTLog(.p256), a2 = TestCTLog(.p256), b1 = TestCTLog(.p256), c1 = TestCTLog(.p256)
    let anyCertificate: Certificate

    init() throws {
        anyCertificate = try LabPKI.makeRoot(commonName: "Policy Test").certificate
    }

    func log(_ test: TestCTLog, _ name: String, _ operatorName: String, _ state: CTLogList.State? = .usable(Self.now.addingTimeInterval(-365 * Self.day))) -> CTLogList.Log {
        test.log(name: name, operator: operatorName, state: state)
    }

    func observe(
        _ test: TestCTLog, _ log: CTLogList.Log?, _ source: SignedCertificateTimestamp.Source = .embedded, at time: Date = Self.issued,
        _ status: SCTObservation.Status = .verified
    ) throws -> SCTObservation {
        let sct = try SignedCertificateTimestamp(tlsEncoded: test.sct(for: anyCertificate, at: time), source: source)
        return SCTObservation(sct: sct, log: log, status: status)
    }

    func evaluate(
        _ observations: [SCTObservation], logs: [CTLogList.Log], lifetimeDays: Double = 90, listDate: Date = Self.listDate,
        requirement: CertificateTransparencyRequirement = .enforced()
    ) throws -> CertificateTransparencyOutcome {
        let list = try CTLogList(timestamp: listDate, logs: logs)
        return CertificateTransparencyPolicy.evaluate(
            observations, notValidBefore: Self.issued, notValidAfter: Self.issued.addingTimeInterval(lifetimeDays * Self.day), list: list,
            requirement: requirement, at: Self.now)
    }

    // MARK: Embedded SCTs

    @Test func twoEmbeddedSCTsFromTwoOperatorsSufficeForAShortLivedCertificate() throws {
        let (la, lb) = (log(a1, "A1", "A"), log(b1, "B1", "B"))
        let outcome = try evaluate([try observe(a1, la), try observe(b1, lb)], logs: [la, lb], lifetimeDays: 180)
        #expect(outcome.isCompliant)
        #expect(outcome.observations.count == 2)
    }

    @Test func aCertificateValidOver180DaysNeedsThreeEmbeddedSCTs() throws {
        let (la, lb, lc) = (log(a1, "A1", "A"), log(b1, "B1", "B"), log(c1, "C1", "C"))
        let two = try evaluate([try observe(a1, la), try observe(b1, lb)], logs: [la, lb, lc], lifetimeDays: 181)
        #expect(two.reason == .notEnoughSCTs)
        #expect(two.detail.contains("2 embedded SCTs from distinct logs counted; 3 are required"))
        let three = try evaluate([try observe(a1, la), try observe(b1, lb), try observe(c1, lc)], logs: [la, lb, lc], lifetimeDays: 181)
        #expect(three.isCompliant)
    }

    @Test func twoSCTsFromOneOperatorAreNotEnoughOperators() throws {
        let (l1, l2) = (log(a1, "A1", "A"), log(a2, "A2", "A"))
        let outcome = try evaluate([try observe(a1, l1), try observe(a2, l2)], logs: [l1, l2])
        #expect(outcome.reason == .notEnoughOperators)
        #expect(outcome.detail.contains("all from logs of A"))
    }

    @Test func twoSCTsFromOneLogCountOnce() throws {
        let (la, lb) = (log(a1, "A1", "A"), log(b1, "B1", "B"))
        let outcome = try evaluate([try observe(a1, la), try observe(a1, la, at: Self.issued.addingTimeInterval(1))], logs: [la, lb])
        #expect(outcome.reason == .notEnoughSCTs)
    }

    @Test func anSCTFromALogOutsideTheListIsNeverCounted() throws {
        let la = log(a1, "A1", "A")
        let outcome = try evaluate([try observe(a1, la), try observe(b1, nil, .embedded, .unknownLog)], logs: [la])
        #expect(outcome.reason == .unknownLog)
        #expect(outcome.detail.contains("unknown log"))
    }

    /// A status other than verified never counts, even when the observation names a listed log.
    @Test func anSCTThatDoesNotVerifyIsNeverCounted() throws {
        let (la, lb) = (log(a1, "A1", "A"), log(b1, "B1", "B"))
        let outcome = try evaluate([try observe(a1, la), try observe(b1, lb, .embedded, .badSignature)], logs: [la, lb])
        #expect(outcome.reason == .badSCTSignature)
        #expect(outcome.detail.contains("B1: badSignature"))
        for status in [SCTObservation.Status.timestampInFuture, .issuerUnknown, .unsupportedVersion, .verificationFailed] {
            #expect(try evaluate([try observe(a1, la), try observe(b1, lb, .embedded, status)], logs: [la, lb]).reason == .notEnoughSCTs)
        }
    }

    @Test func aRetiredLogCountsOnlyForCertificatesLoggedBeforeItRetired() throws {
        let la = log(a1, "A1", "A")
        let retiredAfter = log(b1, "B1", "B", .retired(Self.issued.addingTimeInterval(Self.day)))
        #expect(try evaluate([try observe(a1, la), try observe(b1, retiredAfter)], logs: [la, retiredAfter]).isCompliant)
        let retiredBefore = log(b1, "B1", "B", .retired(Self.issued.addingTimeInterval(-Self.day)))
        let outcome = try evaluate([try observe(a1, la), try observe(b1, retiredBefore)], logs: [la, retiredBefore])
        #expect(outcome.reason == .notEnoughSCTs)
        #expect(outcome.detail.contains("B1: the log retired"))
    }

    /// A retired log's key may sign any timestamp: only SCTs from logs that have not retired
    /// date the certificate, so a backdated SCT cannot make its retired log count.
    @Test func aBackdatedSCTFromARetiredLogDoesNotCount() throws {
        let la = log(a1, "A1", "A")
        let retired = log(b1, "B1", "B", .retired(Self.issued.addingTimeInterval(-Self.day)))
        let backdated = try observe(b1, retired, at: Self.issued.addingTimeInterval(-2 * Self.day))
        let outcome = try evaluate([try observe(a1, la), backdated], logs: [la, retired])
        #expect(outcome.reason == .notEnoughSCTs)
        #expect(outcome.detail.contains("B1: the log retired"))
        let alone = try evaluate([backdated], logs: [la, retired])
        #expect(alone.reason == .notEnoughSCTs)
        #expect(alone.detail.contains("No embedded SCT is from a log that is qualified, usable or read-only now"))
    }

    @Test func logsCountOnlyInAStateTheyHaveEnteredAndThatCounts() throws {
        let la = log(a1, "A1", "A")
        for state in [CTLogList.State.usable(Self.now.addingTimeInterval(Self.day)), .pending(Self.issued), .rejected(Self.issued)] {
            let lb = log(b1, "B1", "B", state)
            #expect(try evaluate([try observe(a1, la), try observe(b1, lb)], logs: [la, lb]).reason == .notEnoughSCTs, "\(state)")
        }
        let stateless = log(b1, "B1", "B", nil)
        #expect(try evaluate([try observe(a1, la), try observe(b1, stateless)], logs: [la, stateless]).reason == .notEnoughSCTs)
        for state in [CTLogList.State.qualified(Self.issued), .readOnly(Self.issued)] {
            let lb = log(b1, "B1", "B", state)
            #expect(try evaluate([try observe(a1, la), try observe(b1, lb)], logs: [la, lb]).isCompliant, "\(state)")
        }
    }

    // MARK: TLS-extension and OCSP SCTs

    @Test func deliveredSCTsNeedTwoFromDistinctOperators() throws {
        let (la, la2, lb) = (log(a1, "A1", "A"), log(a2, "A2", "A"), log(b1, "B1", "B"))
        #expect(try evaluate([try observe(a1, la, .tlsExtension), try observe(b1, lb, .ocspStaple)], logs: [la, lb]).isCompliant)
        #expect(try evaluate([try observe(a1, la, .tlsExtension)], logs: [la, lb]).reason == .notEnoughSCTs)
        #expect(try evaluate([try observe(a1, la, .tlsExtension), try observe(a2, la2, .tlsExtension)], logs: [la, la2]).reason == .notEnoughOperators)
    }

    @Test func deliveredSCTsFromARetiredLogNeverCount() throws {
        let la = log(a1, "A1", "A")
        let retired = log(b1, "B1", "B", .retired(Self.issued.addingTimeInterval(Self.day)))
        #expect(try evaluate([try observe(a1, la, .tlsExtension), try observe(b1, retired, .tlsExtension)], logs: [la, retired]).reason == .notEnoughSCTs)
    }

    @Test func deliveredSCTsMakeUpForTooFewEmbeddedOnes() throws {
        let (la, lb) = (log(a1, "A1", "A"), log(b1, "B1", "B"))
        let outcome = try evaluate([try observe(a1, la), try observe(a1, la, .tlsExtension), try observe(b1, lb, .tlsExtension)], logs: [la, lb])
        #expect(outcome.isCompliant)
    }

    @Test func noSCTsAtAllAreNotEnough() throws {
        let outcome = try evaluate([], logs: [log(a1, "A1", "A")])
        #expect(outcome.reason == .notEnoughSCTs)
    }

    // MARK: The log list's age

    @Test func aStaleListFailsOpenByDefaultAndClosedWhenAsked() throws {
        let (la, lb) = (log(a1, "A1", "A"), log(b1, "B1", "B"))
        let observations = [try observe(a1, la), try observe(b1, lb)]
        let old = Self.now.addingTimeInterval(-71 * Self.day)
        let open = try evaluate(observations, logs: [la, lb], listDate: old, requirement: .enforced())
        #expect(open.reason == .staleLogList)
        #expect(!open.isEnforceable)
        #expect(open.detail.contains("71 days old, over the 70-day limit"))
        let closed = try evaluate(observations, logs: [la, lb], listDate: old, requirement: .enforced(staleLogList: .failClosed))
        #expect(closed.reason == .staleLogList)
        #expect(closed.isEnforceable)
        #expect(try evaluate(observations, logs: [la, lb], listDate: Self.now.addingTimeInterval(-69 * Self.day)).isCompliant)
        let custom = try evaluate(observations, logs: [la, lb], listDate: Self.now.addingTimeInterval(-8 * Self.day), requirement: .enforced(maximumLogListAge: 7 * Self.day))
        #expect(custom.reason == .staleLogList)
    }

    @Test func aListDatedInTheFutureIsStale() throws {
        let (la, lb) = (log(a1, "A1", "A"), log(b1, "B1", "B"))
        let outcome = try evaluate([try observe(a1, la), try observe(b1, lb)], logs: [la, lb], listDate: Self.now.addingTimeInterval(Self.day))
        #expect(outcome.reason == .staleLogList)
        #expect(outcome.detail.contains("in the future"))
    }
}
