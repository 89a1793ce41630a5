import Foundation
import Testing
import ServerTrust
import ServerTrustTestSupport

/// `servertrust fetch --mode informational --report-uri URL`: the trust result in the output,
/// and a failure report delivered to a local collector before the command exits.
@Suite struct FetchReportingTests {
    static let reportHost = "reports.servertrust.test"
    static let wrongPin = "sha256/" + Data(repeating: 7, count: 32).base64EncodedString()

    /// A collector for `reports.servertrust.test`, issued by the fixture's intermediate.
    private func collector(_ fixture: CLIFixture) throws -> (LocalTLSServer, [String]) {
        let leaf = try fixture.intermediate.issueLeaf(dnsNames: [Self.reportHost])
        let server = try LocalTLSServer(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey) { request in
            request.path == "/report" ? LocalHTTPResponse(status: 204) : nil
        }
        return (server, ["--report-uri", server.url("/report", host: Self.reportHost), "--resolve", server.resolveEntry(host: Self.reportHost)])
    }

    private func reports(_ server: LocalTLSServer) -> [[String: Any]] {
        server.recentRequests.filter { $0.path == "/report" && $0.method == "POST" }.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.body))) as? [String: Any]
        }
    }

    @Test func informationalModePrintsTheBodyMarksTheTrustResultFailedAndSendsAReport() throws {
        let fixture = try CLIFixture()
        let (server, reporting) = try collector(fixture)
        let result = CommandRunner.run(
            ["fetch", fixture.url(), "--pin", Self.wrongPin, "--mode", "informational", "--json"] + reporting + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(object["body"] as? String == "hello from the CLI fixture\n")
        let trustResult = try #require(object["trustResult"] as? [String: Any])
        #expect(trustResult["result"] as? String == "failed")
        #expect(trustResult["code"] as? String == "pinMismatch")
        #expect(object["reportQueued"] as? Bool == true)
        #expect(object["reportsSent"] as? Int == 1)
        let failures = try #require(object["trustFailures"] as? [[String: Any]])
        #expect(failures.map { $0["mode"] as? String } == ["informational"])
        #expect(failures.map { $0["report"] as? String } == ["queued"])

        let sent = reports(server)
        #expect(sent.count == 1)
        #expect(sent.first?["mode"] as? String == "informational")
        #expect(sent.first?["hostname"] as? String == CLIFixture.host)
        #expect(sent.first?["known-pins"] as? [String] == ["pin-sha256=\"\(Self.wrongPin.dropFirst("sha256/".count))\""])
    }

    @Test func anEnforcedFailureExitsOneAndStillSendsItsReport() throws {
        let fixture = try CLIFixture()
        let (server, reporting) = try collector(fixture)
        let result = CommandRunner.run(["fetch", fixture.url(), "--pin", Self.wrongPin, "--json"] + reporting + fixture.trusting)
        #expect(result.status == 1, "\(result)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect((object["error"] as? [String: Any])?["code"] as? String == "trustEvaluationFailed")
        #expect((object["trustResult"] as? [String: Any])?["code"] as? String == "pinMismatch")
        #expect(object["reportQueued"] as? Bool == true)
        #expect(reports(server).map { $0["mode"] as? String } == ["enforced"])
    }

    @Test func aVerifiedFetchReportsNothing() throws {
        let fixture = try CLIFixture()
        let (server, reporting) = try collector(fixture)
        let pin = fixture.intermediate.certificate.spkiPin.description
        let result = CommandRunner.run(["fetch", fixture.url(), "--pin", pin, "--mode", "informational", "--json"] + reporting + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect((object["trustResult"] as? [String: Any])?["result"] as? String == "verified")
        #expect(object["reportQueued"] as? Bool == false)
        #expect(reports(server).isEmpty)
    }

    @Test func textModeWarnsOnStandardErrorAboutAnInformationalFailure() throws {
        let fixture = try CLIFixture()
        let result = CommandRunner.run(["fetch", fixture.url(), "--pin", Self.wrongPin, "--mode", "informational"] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput == "hello from the CLI fixture\n")
        #expect(result.standardError.hasPrefix("warning: informational trust failure for \(fixture.url()): pinMismatch: "), "\(result)")
        #expect(result.standardError.hasSuffix("(no report URI)\n"), "\(result)")
    }

    @Test func aPolicyFileCanaryIsReportedWhileTheEnforcedPinsAdmitTheServer() throws {
        let fixture = try CLIFixture()
        let (server, reporting) = try collector(fixture)
        let other = "sha256/" + Data(repeating: 5, count: 32).base64EncodedString()
        let policy = try LabPKI.writeTemporaryFile("""
            { "version": 1, "hosts": { "\(CLIFixture.host)": {
                "pins": [{ "pin": "\(fixture.intermediate.certificate.spkiPin)", "label": "current" }, { "pin": "\(other)", "label": "backup" }],
                "canary": { "pins": [{ "pin": "\(Self.wrongPin)", "label": "next" }, { "pin": "\(other)", "label": "backup" }] } } } }
            """, name: "policy.json")
        defer { LabPKI.removeTemporaryFile(policy) }

        let result = CommandRunner.run(["fetch", fixture.url(), "--policy", policy, "--json"] + reporting + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect((object["trustResult"] as? [String: Any])?["result"] as? String == "verified")
        let failures = try #require(object["trustFailures"] as? [[String: Any]])
        #expect(failures.map { $0["mode"] as? String } == ["canary"])
        #expect(failures.map { $0["reason"] as? String } == ["canaryDisagreement"])
        #expect(object["reportQueued"] as? Bool == true)
        let sent = reports(server)
        #expect(sent.map { $0["mode"] as? String } == ["canary"])
        #expect(sent.first?["known-pins"] as? [String] == (try [Pin(Self.wrongPin), Pin(other)]).sorted().map { "pin-sha256=\"\($0.base64)\"" })

        let mixed = CommandRunner.run(["fetch", fixture.url(), "--policy", policy, "--pin", other] + fixture.trusting)
        #expect(mixed.status == 2, "\(mixed)")
    }

    @Test func aPlainHTTPReportURIIsAUsageError() throws {
        let fixture = try CLIFixture()
        let result = CommandRunner.run(["fetch", fixture.url(), "--report-uri", "http://reports.servertrust.test/"] + fixture.trusting)
        #expect(result.status == 2, "\(result)")
        #expect(result.standardError == "error: --report-uri \"http://reports.servertrust.test/\" is not an https: URL with a host.\n")
    }
}
