import Foundation
import Logging
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// The report's chain summaries are made when read, and read the same as when they were made
/// eagerly: pin and subject of every certificate, in order.
@Suite struct TrustReportTests {
    private func summaries(_ certificates: [Certificate]) -> [TrustError.CertificateSummary] {
        certificates.map { .init(pin: $0.spkiPin, subject: $0.subject) }
    }

    private func policy(_ fixture: SessionFixture, _ evaluator: any ServerTrustEvaluating) throws -> TrustPolicy {
        TrustPolicy(
            host: NormalizedHost(SessionFixture.host), pattern: SessionFixture.host, evaluator: evaluator, anchors: try fixture.root.trustAnchors(),
            validationOptions: PathValidationOptions(), revocationFetcher: nil,
            counters: TrustCounters(), logger: Logger(label: "servertrust.test"))
    }

    @Test func anAcceptedReportListsThePresentedAndTheValidatedChain() throws {
        let fixture = try SessionFixture()
        let presented = [fixture.leaf.certificate, fixture.intermediate.certificate]
        let report = try policy(fixture, DefaultTrustEvaluator()).evaluate(presented: presented, handshake: HandshakeEvidence())
        #expect(report.isTrusted)
        #expect(report.presentedChain == summaries(presented))
        #expect(report.validatedChain == summaries(presented + [fixture.root.certificate]))
        #expect(report.validatedChain.map(\.subject).allSatisfy { !$0.isEmpty })
        #expect(report.description.contains("\(fixture.leafPin): \(fixture.leaf.certificate.subject)"))
        #expect(report.evaluator == "DefaultTrustEvaluator")
        #expect(report.matchedPattern?.description == SessionFixture.host)
    }

    @Test func aReportWithoutValidationHasEmptyChains() throws {
        let fixture = try SessionFixture()
        let report = TrustReport(notEvaluated: try policy(fixture, DefaultTrustEvaluator()), reason: "Plain HTTP.")
        #expect(report.presentedChain.isEmpty)
        #expect(report.validatedChain.isEmpty)
        #expect(report.failure?.code == .invalidConfiguration)
    }

    @Test func aSessionResponseCarriesTheSameSummaries() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session([SessionFixture.host: try PinnedKeyHashesTrustEvaluator(pins: [fixture.leafPin])])
        defer { session.shutdown() }
        let response = try await session.get(fixture.url("/").absoluteString)
        #expect(response.trust.presentedChain == summaries(fixture.leaf.chain))
        #expect(response.trust.validatedChain.first == summaries([fixture.leaf.certificate]).first)
        #expect(response.trust.validatedChain.last == summaries([fixture.root.certificate]).last)
        #expect(response.trust.validatedChain.count == 3)
    }
}
