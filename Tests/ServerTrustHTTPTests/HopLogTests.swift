import Logging
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// The hop log reports its hops in the order they were recorded, and the response's
/// verification by its rule: the first hop that failed verification, else the last hop's result.
@Suite struct HopLogTests {
    private static func report(_ reason: String) throws -> TrustReport {
        let fixture = try SessionFixture()
        let policy = TrustPolicy(
            host: NormalizedHost(SessionFixture.host), pattern: SessionFixture.host, evaluator: DefaultTrustEvaluator(),
            anchors: try fixture.root.trustAnchors(), validationOptions: PathValidationOptions(), revocationFetcher: nil,
            counters: TrustCounters(), logger: Logger(label: "servertrust.test"))
        return TrustReport(notEvaluated: policy, reason: reason)
    }

    private static let badSignature = ResponseVerification.failed(ResponseSignatureError(.badSignature, "first"))
    private static let replayed = ResponseVerification.failed(ResponseSignatureError(.replayedResponse, "second"))

    @Test func anEmptyLogHasNoHopsAndIsNotVerified() {
        let log = HopLog()
        #expect(log.count == 0)
        #expect(log.reports.isEmpty)
        #expect(log.verifications.isEmpty)
        #expect(log.attempts.isEmpty)
        #expect(log.verification == .notRequested)
    }

    @Test func oneHopIsReportedAsRecorded() throws {
        var log = HopLog()
        log.record(try Self.report("only"), verification: .verified, attempts: 3)
        #expect(log.count == 1)
        #expect(log.reports.map(\.failure?.reason) == ["only"])
        #expect(log.verifications == [.verified])
        #expect(log.attempts == [3])
        #expect(log.verification == .verified)
    }

    @Test func redirectHopsFollowTheFirstInOrder() throws {
        var log = HopLog()
        log.record(try Self.report("first"), verification: .notRequested, attempts: 1)
        log.record(try Self.report("second"), verification: .verified, attempts: 2)
        log.record(try Self.report("third"), verification: .verified, attempts: 1)
        #expect(log.count == 3)
        #expect(log.reports.map(\.failure?.reason) == ["first", "second", "third"])
        #expect(log.verifications == [.notRequested, .verified, .verified])
        #expect(log.attempts == [1, 2, 1])
        // The final hop's result when none failed.
        #expect(log.verification == .verified)
    }

    @Test(arguments: [
        // (verification of each hop, the log's verification): the first failure wins, else the last hop's.
        ([badSignature, .verified, .verified], badSignature),
        ([.verified, badSignature, replayed], badSignature),
        ([.verified, .verified, replayed], replayed),
        ([.verified, .verified, .notRequested], .notRequested),
        ([.notRequested, .notRequested, .verified], .verified),
        ([badSignature], badSignature),
    ])
    func theFirstFailingHopDecidesElseTheLast(hops: [ResponseVerification], expected: ResponseVerification) throws {
        var log = HopLog()
        for (index, verification) in hops.enumerated() {
            log.record(try Self.report("hop \(index)"), verification: verification)
        }
        #expect(log.verifications == hops)
        #expect(log.verification == expected)
    }
}
