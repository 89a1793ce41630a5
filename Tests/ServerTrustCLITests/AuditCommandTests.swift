import Foundation
import Testing
import ServerTrust
import ServerTrustTestSupport

/// `servertrust audit --policy FILE`: every host of a policy file against its live server, today
/// and at the warning horizon. Dates are fixed with `--at`, so day counts are exact.
@Suite struct AuditCommandTests {
    static let otherPin = "sha256/" + Data(repeating: 5, count: 32).base64EncodedString()
    static let wrongPin = "sha256/" + Data(repeating: 7, count: 32).base64EncodedString()
    /// The audit date: now, to the second, so the test PKI's certificates are valid.
    let base = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))

    private func date(_ days: Double) -> String { JSONTextDate.format(base.addingTimeInterval(days * 86_400)) }

    private func audit(_ fixture: CLIFixture, policy: String, _ extra: [String] = []) throws -> CommandResult {
        let file = try LabPKI.writeTemporaryFile(policy, name: "policy.json")
        defer { LabPKI.removeTemporaryFile(file) }
        return CommandRunner.run(
            ["audit", "--policy", file, "--port", String(fixture.server.port), "--at", JSONTextDate.format(base)] + extra + fixture.trusting)
    }

    private func hosts(_ result: CommandResult) throws -> [[String: Any]] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        return try #require(object["hosts"] as? [[String: Any]])
    }

    @Test func aHostWhoseLiveChainMatchesWithABackupPasses() throws {
        let fixture = try CLIFixture()
        let result = try audit(fixture, policy: """
            { "version": 1, "hosts": { "\(CLIFixture.host)": {
                "pins": [{ "pin": "\(fixture.intermediate.certificate.spkiPin)", "label": "current" },
                         { "pin": "\(Self.otherPin)", "label": "backup", "notAfter": "\(date(400))" }],
                "expiration": "\(date(365))" } } }
            """, ["--json"])
        #expect(result.status == 0, "\(result)")
        let host = try #require(try hosts(result).first)
        #expect(host["status"] as? String == "ok")
        #expect(host["hasBackup"] as? Bool == true)
        #expect((host["matchingPins"] as? [[String: String]])?.map { $0["label"] } == ["current"])
        let expirations = try #require(host["expirations"] as? [[String: Any]])
        #expect(expirations.first { $0["what"] as? String == "pin set" }?["days"] as? Int == 365)
        #expect(expirations.first { ($0["what"] as? String)?.hasSuffix("(backup)") == true }?["days"] as? Int == 400)
        #expect(expirations.contains { ($0["what"] as? String)?.hasPrefix("leaf certificate CN=\(CLIFixture.host)") == true })
    }

    @Test func aPinThatExpiresWithinTheWarningWindowFailsTheAudit() throws {
        let fixture = try CLIFixture()
        let policy = """
            { "version": 1, "hosts": { "\(CLIFixture.host)": {
                "pins": [{ "pin": "\(fixture.intermediate.certificate.spkiPin)", "label": "current", "notAfter": "\(date(10))" },
                         { "pin": "\(Self.otherPin)", "label": "backup" }] } } }
            """
        let result = try audit(fixture, policy: policy, ["--warn-days", "30"])
        #expect(result.status == 1, "\(result)")
        #expect(result.standardOutput.hasPrefix("\(CLIFixture.host): failsWithinWarnDays\n  rejected at the warning horizon: pinMismatch: "), "\(result)")
        #expect(result.standardOutput.contains("\n  matching pins: \(fixture.intermediate.certificate.spkiPin) (current)\n  backup pin: yes\n"), "\(result)")
        #expect(result.standardOutput.contains("\n  pin \(fixture.intermediate.certificate.spkiPin) (current) expires in 10 days ("), "\(result)")

        #expect(try audit(fixture, policy: policy, ["--warn-days", "9"]).status == 0)
    }

    @Test func aHostThatFailsTodayOrHasNoRealBackupIsReported() throws {
        let fixture = try CLIFixture()
        let wrong = try audit(fixture, policy: """
            { "version": 1, "hosts": { "\(CLIFixture.host)": { "pins": [{ "pin": "\(Self.wrongPin)" }, { "pin": "\(Self.otherPin)" }] } } }
            """, ["--json"])
        #expect(wrong.status == 1, "\(wrong)")
        let failing = try #require(try hosts(wrong).first)
        #expect(failing["status"] as? String == "fails")
        #expect((failing["failure"] as? [String: Any])?["code"] as? String == "pinMismatch")

        let noBackup = try audit(fixture, policy: """
            { "version": 1, "hosts": { "\(CLIFixture.host)": { "pins": [
                { "pin": "\(fixture.intermediate.certificate.spkiPin)" }, { "pin": "\(fixture.leaf.certificate.spkiPin)" }] } } }
            """, ["--json"])
        #expect(noBackup.status == 0, "\(noBackup)")
        #expect(try hosts(noBackup).first?["hasBackup"] as? Bool == false)
    }

    @Test func revocationIsJudgedTodayFromTheStapleAndNotAtTheHorizon() throws {
        let fixture = try CLIFixture()
        let result = try audit(fixture, policy: """
            { "version": 1, "hosts": { "\(CLIFixture.host)": {
                "pins": [{ "pin": "\(fixture.intermediate.certificate.spkiPin)" }, { "pin": "\(Self.otherPin)" }],
                "revocation": { "methods": "ocsp", "networkAccessDisabled": true, "requirePositiveResponse": true } } } }
            """, ["--json", "--warn-days", "30"])
        #expect(result.status == 0, "\(result)")
        #expect(try hosts(result).first?["status"] as? String == "ok")
    }

    @Test func wildcardPatternsAreSkippedUnlessAProbeHostIsNamed() throws {
        let fixture = try CLIFixture()
        let policy = """
            { "version": 1, "hosts": { "*.servertrust.test": { "pins": [{ "pin": "\(Self.wrongPin)" }, { "pin": "\(Self.otherPin)" }] } } }
            """
        let skipped = try audit(fixture, policy: policy)
        #expect(skipped.status == 0, "\(skipped)")
        #expect(skipped.standardOutput == "*.servertrust.test: skipped: a wildcard pattern; name a host to probe with --probe '*.servertrust.test=HOST'\n")

        let probed = try audit(fixture, policy: policy, ["--probe", "*.servertrust.test=\(CLIFixture.host)", "--json"])
        #expect(probed.status == 1, "\(probed)")
        #expect(try hosts(probed).first?["host"] as? String == CLIFixture.host)
        #expect(try hosts(probed).first?["status"] as? String == "fails")

        let outside = try audit(fixture, policy: policy, ["--probe", "*.servertrust.test=example.org"])
        #expect(outside.status == 2, "\(outside)")
    }

    @Test func anInvalidPolicyFileIsAUsageErrorNamingTheLine() throws {
        let fixture = try CLIFixture()
        let result = try audit(fixture, policy: """
            { "version": 1,
              "hosts": { "\(CLIFixture.host)": { "pinz": [] } } }
            """)
        #expect(result.status == 2, "\(result)")
        #expect(result.standardError.hasPrefix("error: policy.json:2: hosts[\"\(CLIFixture.host)\"].pinz: unknown field"), "\(result)")
    }

    @Test func anUnreachableHostExitsThree() throws {
        let fixture = try CLIFixture()
        let port = try fixture.closedPort()
        let file = try LabPKI.writeTemporaryFile(#"{ "version": 1, "hosts": { "\#(CLIFixture.host)": {} } }"#, name: "policy.json")
        defer { LabPKI.removeTemporaryFile(file) }
        let result = CommandRunner.run(
            ["audit", "--policy", file, "--port", String(port), "--ca", fixture.caFile, "--resolve", "\(CLIFixture.host):\(port):127.0.0.1"])
        #expect(result.status == 3, "\(result)")
        #expect(result.standardOutput.hasPrefix("\(CLIFixture.host): unreachable: error: could not reach"), "\(result)")
    }
}

/// ISO 8601 in UTC, as `--at` and policy files take it.
enum JSONTextDate {
    static func format(_ date: Date) -> String { date.formatted(Date.ISO8601FormatStyle()) }
}
