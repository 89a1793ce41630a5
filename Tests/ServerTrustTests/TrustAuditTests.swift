import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// ``TrustAudit``: a policy file's host judged against a chain, today and at the warning
/// horizon, without a network (the chain is handed over as a server would present it).
@Suite struct TrustAuditTests {
    static let host = "audit.servertrust.test"
    static let otherPin = "sha256/" + Data(repeating: 5, count: 32).base64EncodedString()
    static let wrongPin = "sha256/" + Data(repeating: 7, count: 32).base64EncodedString()

    let root: LabCA
    let intermediate: LabCA
    let leaf: LabLeaf
    let anchors: TrustAnchors
    /// Whole seconds, so day counts are exact.
    let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))

    init() throws {
        root = try LabPKI.makeRoot(commonName: "Audit Root")
        intermediate = try root.issueIntermediate(commonName: "Audit Intermediate")
        leaf = try intermediate.issueLeaf(dnsNames: [Self.host])
        anchors = try TrustAnchors([root.certificate])
    }

    private func date(_ days: Double) -> String { now.addingTimeInterval(days * 86_400).formatted(Date.ISO8601FormatStyle()) }

    private func report(_ hostPolicy: String, warnDays: Int = 30) throws -> TrustAudit.HostReport {
        let file = try TrustPolicyFile(data: Array(#"{ "version": 1, "hosts": { "\#(Self.host)": \#(hostPolicy) } }"#.utf8))
        let policy = try #require(file.hosts.first)
        return TrustAudit.HostReport(
            policy: policy, host: Self.host, presentedChain: leaf.chain, stapledOCSPResponse: nil, anchors: anchors,
            revocationFetcher: nil, now: now, warnDays: warnDays)
    }

    @Test func aMatchingPinWithAnOfflineBackupPassesWithItsDates() throws {
        let report = try report("""
            { "pins": [{ "pin": "\(intermediate.certificate.spkiPin)", "label": "current" },
                       { "pin": "\(Self.otherPin)", "label": "backup", "notAfter": "\(date(400))" }],
              "expiration": "\(date(365))" }
            """)
        #expect(report.status == .ok)
        #expect(report.failure == nil)
        #expect(report.matchingPins.map(\.label) == ["current"])
        #expect(report.hasBackup == true)
        #expect(report.expirations.first { $0.what == "pin set" }?.days == 365)
        #expect(report.expirations.first { $0.what.hasSuffix("(backup)") }?.days == 400)
        #expect(report.expirations.map(\.date) == report.expirations.map(\.date).sorted())
    }

    @Test func aPinThatExpiresBeforeTheHorizonFailsThereNamingThePinMismatch() throws {
        let policy = """
            { "pins": [{ "pin": "\(intermediate.certificate.spkiPin)", "label": "current", "notAfter": "\(date(10))" },
                       { "pin": "\(Self.otherPin)", "label": "backup" }] }
            """
        let report = try report(policy, warnDays: 30)
        #expect(report.status == .failsWithinWarnDays)
        #expect(report.status.isFailure)
        #expect(report.failure == nil)
        #expect(report.failureAtWarnHorizon?.code == .pinMismatch)
        #expect(try self.report(policy, warnDays: 9).status == .ok)
    }

    @Test func aChainTheEnforcedPinsRejectFailsToday() throws {
        let report = try report(#"{ "pins": [{ "pin": "\#(Self.wrongPin)" }, { "pin": "\#(Self.otherPin)" }] }"#)
        #expect(report.status == .fails)
        #expect(report.failure?.code == .pinMismatch)
        #expect(report.failureAtWarnHorizon == nil)
        #expect(report.matchingPins.isEmpty)
    }

    @Test func pinningTheWholeLiveChainHasNoBackup() throws {
        let report = try report("""
            { "pins": [{ "pin": "\(intermediate.certificate.spkiPin)" }, { "pin": "\(leaf.certificate.spkiPin)" }] }
            """)
        #expect(report.status == .ok)
        #expect(report.hasBackup == false)
    }

    @Test func anUnreachableHostFailsTheAuditButSkippedOnesDoNot() throws {
        let file = try TrustPolicyFile(data: Array(#"{ "version": 1, "hosts": { "*.servertrust.test": {}, "\#(Self.host)": {} } }"#.utf8))
        let skipped = TrustAudit.HostReport.skipped(file.hosts[0], note: "a wildcard pattern")
        #expect(TrustAudit.Report(policy: "p.json", date: now, warnDays: 30, hosts: [skipped]).passed)
        let unreachable = TrustAudit.HostReport.unreachable(file.hosts[1], host: Self.host, note: "connection refused")
        #expect(!TrustAudit.Report(policy: "p.json", date: now, warnDays: 30, hosts: [skipped, unreachable]).passed)
        #expect(unreachable.status == .unreachable)
        #expect(unreachable.note == "connection refused")
    }

    @Test func theReportEncodesTheAuditJSONSchema() throws {
        let host = try report(#"{ "pins": [{ "pin": "\#(Self.wrongPin)" }, { "pin": "\#(Self.otherPin)" }] }"#)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let object = try #require(
            try JSONSerialization.jsonObject(with: encoder.encode(TrustAudit.Report(policy: "p.json", date: now, warnDays: 30, hosts: [host])))
                as? [String: Any])
        #expect(object.keys.sorted() == ["date", "hosts", "passed", "policy", "warnDays"])
        #expect(object["passed"] as? Bool == false)
        let encoded = try #require((object["hosts"] as? [[String: Any]])?.first)
        #expect(encoded.keys.sorted() == ["expirations", "failure", "findings", "hasBackup", "host", "line", "matchingPins", "mode", "pattern", "status"])
        #expect(encoded["status"] as? String == "fails")
        #expect(encoded["failure"] as? [String: String] == ["code": "pinMismatch", "reason": host.failure?.reason ?? "", "evaluator": "PinSetTrustEvaluator"])
    }
}
