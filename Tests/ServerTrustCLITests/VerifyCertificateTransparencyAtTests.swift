import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// `verify --at T --ct-log-list L --require-ct` with a list dated after `T` (issue #51, finding
/// 5): today's list judging an older certificate is no wrong clock, so each log is judged by the
/// state the list says it had entered by `T`, and `--require-ct` rejects whatever does not meet
/// the policy — a stale list included.
@Suite struct VerifyCertificateTransparencyAtTests {
    static let host = "ct-at.servertrust.test"
    /// The time judged at: 30 days before the list.
    static let at = Date(timeIntervalSinceNow: -31 * 86_400)

    final class Lab: Sendable {
        let intermediate: LabCA
        let logA: TestCTLog
        let logB: TestCTLog
        let rejected: TestCTLog
        let unnamed: TestCTLog
        let directory: String
        let rootFile: String

        init() throws {
            let root = try LabPKI.makeRoot(commonName: "CT At Test Root", notBefore: Date(timeIntervalSinceNow: -400 * 86_400))
            intermediate = try root.issueIntermediate(commonName: "CT At Test Intermediate", notBefore: Date(timeIntervalSinceNow: -400 * 86_400))
            logA = try TestCTLog(description: "At Log A", operatorName: "Operator A")
            logB = try TestCTLog(description: "At Log B", operatorName: "Operator B")
            rejected = try TestCTLog(description: "At Rejected Log", operatorName: "Operator C")
            unnamed = try TestCTLog(description: "At Unnamed Log", operatorName: "Operator D")
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("ct-at-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            rootFile = directory + "/root.pem"
            try root.certificate.pemEncoded.write(toFile: rootFile, atomically: true, encoding: .utf8)
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }

        /// A list naming A and B (usable for a year) and the rejected log, dated `timestamp`.
        func listFile(dated timestamp: Date, rejectedSince: Date) throws -> String {
            var list = TestCTLogList()
            list.add(logA, state: .usable, since: Date(timeIntervalSinceNow: -365 * 86_400))
            list.add(logB, state: .usable, since: Date(timeIntervalSinceNow: -365 * 86_400))
            list.add(rejected, state: .rejected, since: rejectedSince)
            let path = directory + "/log_list-\(UUID().uuidString).json"
            try Data(list.json(timestamp: timestamp)).write(to: URL(fileURLWithPath: path))
            return path
        }

        /// A chain whose leaf, issued a day before ``VerifyCertificateTransparencyAtTests/at``, embeds SCTs from `logs`.
        func chainFile(_ logs: [TestCTLog]) throws -> String {
            let leaf = try intermediate.issueLeafWithEmbeddedSCTs(
                from: logs, dnsNames: [VerifyCertificateTransparencyAtTests.host], notBefore: VerifyCertificateTransparencyAtTests.at.addingTimeInterval(-86_400))
            let path = directory + "/chain-\(UUID().uuidString).pem"
            try leaf.pemChain.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }

        func verify(_ chain: String, list: String) -> CommandResult {
            CommandRunner.run([
                "verify", "--chain", chain, "--roots", rootFile, "--host", VerifyCertificateTransparencyAtTests.host,
                "--at", VerifyCertificateTransparencyAtTests.at.formatted(.iso8601), "--ct-log-list", list, "--require-ct",
            ])
        }
    }

    /// A list dated after `--at`.
    static func laterList(_ lab: Lab, rejectedSince: Date = Date(timeIntervalSinceNow: -200 * 86_400)) throws -> String {
        try lab.listFile(dated: Date(timeIntervalSinceNow: -86_400), rejectedSince: rejectedSince)
    }

    @Test func aCompliantLeafIsAcceptedWithAListDatedAfterTheTime() throws {
        let lab = try Lab()
        let result = lab.verify(try lab.chainFile([lab.logA, lab.logB]), list: try Self.laterList(lab))
        #expect(result.status == 0, "\(result)")
        #expect(result.standardError.isEmpty, "\(result)")
        #expect(result.standardOutput.contains("certificate transparency: compliant (enforced)"), "\(result)")
    }

    /// SCTs only from a log the list marks rejected — before `--at`, or only after it (no state
    /// the list names had been entered by then) — count for nothing.
    @Test(arguments: [-200.0, -10.0])
    func sctsFromARejectedLogAreRefused(rejectedDaysAgo: Double) throws {
        let lab = try Lab()
        let list = try Self.laterList(lab, rejectedSince: Date(timeIntervalSinceNow: rejectedDaysAgo * 86_400))
        let result = lab.verify(try lab.chainFile([lab.rejected]), list: list)
        #expect(result.status == 1, "\(result)")
        #expect(result.standardError.hasPrefix("rejected: CertificateTransparency: Certificate Transparency (notEnoughSCTs)"), "\(result)")
    }

    @Test func sctsFromALogTheListDoesNotNameAreRefused() throws {
        let lab = try Lab()
        let result = lab.verify(try lab.chainFile([lab.unnamed]), list: try Self.laterList(lab))
        #expect(result.status == 1, "\(result)")
        #expect(result.standardError.hasPrefix("rejected: CertificateTransparency: Certificate Transparency (unknownLog)"), "\(result)")
    }

    /// A list older than the 70-day limit at `--at` cannot show that the leaf meets the policy:
    /// `--require-ct` rejects, the compliant leaf included.
    @Test func aStaleListIsRefusedUnderRequireCT() throws {
        let lab = try Lab()
        let stale = try lab.listFile(dated: Self.at.addingTimeInterval(-100 * 86_400), rejectedSince: Date(timeIntervalSinceNow: -200 * 86_400))
        let result = lab.verify(try lab.chainFile([lab.logA, lab.logB]), list: stale)
        #expect(result.status == 1, "\(result)")
        #expect(result.standardError.hasPrefix("rejected: CertificateTransparency: Certificate Transparency (staleLogList)"), "\(result)")
    }
}
