import Foundation
import MetricsTestKit
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// `servertrust_certificate_transparency_total`: one count per evaluation of a host requiring
/// CT, by result (compliant or the reason) and mode, report-only as well as enforced.
@Suite struct SessionCertificateTransparencyMetricsTests {
    static let host = "ct-metrics.servertrust.test"

    private func fetch(_ leafLogs: (TestCTLog, TestCTLog) -> [TestCTLog], _ requirement: CertificateTransparencyRequirement) async throws -> TestMetrics {
        let root = try LabPKI.makeRoot(commonName: "CT Metrics Root")
        let logA = try TestCTLog(description: "Metrics Log A", operatorName: "Operator A")
        let logB = try TestCTLog(description: "Metrics Log B", operatorName: "Operator B")
        let leaf = try root.issueIntermediate().issueLeafWithEmbeddedSCTs(from: leafLogs(logA, logB), dnsNames: [Self.host])
        let server = try LocalTLSServer(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey) { _ in .text("ok") }
        defer { server.stop() }
        let since = Date(timeIntervalSinceNow: -400 * 86_400)
        let list = try CTLogList(timestamp: Date(timeIntervalSinceNow: -3600), logs: [logA, logB].map {
            CTLogList.Log(name: $0.description, key: $0.publicKeyDER, operatorName: $0.operatorName, state: .usable(since), temporalInterval: nil, isTiled: false)
        })
        let manager = try ServerTrustManager(
            policies: [try HostPattern(Self.host): HostPolicy(certificateTransparency: requirement)],
            certificateTransparencyLogs: try CertificateTransparencyLogs(list))
        let metrics = TestMetrics()
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try TrustAnchors([leaf.root]))
        configuration.resolve = [server.resolveEntry(host: Self.host)]
        configuration.metricsFactory = metrics
        let session = try Session(configuration: configuration, trustManager: manager)
        defer { session.shutdown() }
        _ = try? await session.get(server.url("/", host: Self.host))
        return metrics
    }

    @Test func aCompliantEnforcedHostIsCountedCompliant() async throws {
        let metrics = try await fetch({ [$0, $1] }, .enforced())
        #expect(try metrics.expectCounter(SessionMetrics.Name.certificateTransparency, [("result", "compliant"), ("mode", "enforced")]).totalValue == 1)
        #expect(metrics.counters(label: SessionMetrics.Name.certificateTransparency).count == 1)
    }

    @Test func aReportOnlyShortfallIsCountedByReasonAndMode() async throws {
        let metrics = try await fetch({ a, _ in [a] }, .reportOnly())
        let counters = metrics.counters(label: SessionMetrics.Name.certificateTransparency)
        #expect(counters.count == 1)
        #expect(counters.first?.dimensions.first { $0.0 == "mode" }?.1 == "reportOnly")
        #expect(["notEnoughSCTs", "notEnoughOperators"].contains(counters.first?.dimensions.first { $0.0 == "result" }?.1 ?? ""))
        #expect(counters.first?.totalValue == 1)
    }

    @Test func anEnforcedShortfallIsCountedToo() async throws {
        let metrics = try await fetch({ a, _ in [a] }, .enforced())
        let counters = metrics.counters(label: SessionMetrics.Name.certificateTransparency)
        #expect(counters.count == 1)
        #expect(counters.first?.dimensions.first { $0.0 == "mode" }?.1 == "enforced")
        #expect(counters.first?.totalValue == 1)
    }
}
