import Foundation
import Testing
import ServerTrustTestSupport

@Suite struct FetchCommandTests {
    @Test func printsTheBodyAndExitsZero() throws {
        let fixture = try CLIFixture()
        let result = CommandRunner.run(["fetch", fixture.url(), "--pin", fixture.intermediate.certificate.spkiPin.description] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput == "hello from the CLI fixture\n")
        #expect(result.standardError.isEmpty)
    }

    @Test func includePrintsTheHeadFirst() throws {
        let fixture = try CLIFixture()
        let result = CommandRunner.run(["fetch", fixture.url(), "--include"] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput.hasPrefix("HTTP/1.1 200\r\n"), "\(result)")
        #expect(result.standardOutput.hasSuffix("\r\n\r\nhello from the CLI fixture\n"), "\(result)")
    }

    @Test func aPinMismatchExitsOneShowingThePeerPinsAndTheFlagToUse() throws {
        let fixture = try CLIFixture()
        let wrong = "sha256/" + Data(repeating: 7, count: 32).base64EncodedString()
        let result = CommandRunner.run(["fetch", fixture.url(), "--pin", wrong] + fixture.trusting)
        #expect(result.status == 1, "\(result)")
        #expect(result.standardOutput.isEmpty)
        expectGolden(result.standardError, """
            error: Trust evaluation rejected cli.servertrust.test. PinSetTrustEvaluator: No certificate of the validated chain (3 certificates) matches a configured pin. If this server is genuine, pin one of the peer keys listed below (servertrust fetch --pin sha256/…). (host "cli.servertrust.test")
              Configured pins:
                sha256/<pin>
              Peer certificate chain:
                sha256/<pin>: CN=cli.servertrust.test
                sha256/<pin>: CN=CLI Test Intermediate
                sha256/<pin>: CN=CLI Test Root
              URL: https://cli.servertrust.test:<port>/ (curl 60: SSL certificate problem: application verification failure)
            hint: if this server is genuine, pin one of the keys listed above, e.g. --pin sha256/<pin> (CN=CLI Test Intermediate)
            hint: `servertrust pins https://cli.servertrust.test:<port>/` prints the server's pins; add --swift for a ServerTrustManager entry
            hint: if you did not expect these keys, something between you and the server presents its own certificate: do not pin it

            """)
        #expect(result.standardError.contains("e.g. --pin \(fixture.intermediate.certificate.spkiPin) "))
    }

    /// Third review, finding 4: a failed fetch names host, port and path, never the URL's
    /// credentials or token, in text or `--json`. Port 1 on loopback: nothing listens.
    @Test func finding4AFailedFetchPrintsNoUserInfoOrQueryPlainOrJSON() throws {
        let url = "https://user:pw@127.0.0.1:1/p?access_token=SECRET"
        let plain = CommandRunner.run(["fetch", url])
        #expect(plain.status == 3, "\(plain)")
        #expect(plain.standardError.contains("[https://127.0.0.1:1/p] (curl 7"), "\(plain)")
        let json = CommandRunner.run(["fetch", url, "--json"])
        #expect(json.status == 3, "\(json)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        #expect((object["error"] as? [String: Any])?["curlCode"] as? Int == 7, "\(json)")
        for output in [plain.standardOutput, plain.standardError, json.standardOutput, json.standardError] {
            #expect(!output.contains("pw"), "\(output)")
            #expect(!output.contains("SECRET"), "\(output)")
        }
    }

    /// Third review, finding 4: a rejection's error line, hints and `--json` trust failures
    /// name the URL without its credentials or token.
    @Test func finding4ARejectedFetchPrintsNoUserInfoOrQueryInItsErrorHintsOrJSON() throws {
        let fixture = try CLIFixture()
        let wrong = "sha256/" + Data(repeating: 7, count: 32).base64EncodedString()
        let port = fixture.server.port
        let url = "https://user:pw@\(CLIFixture.host):\(port)/?access_token=SECRET"
        let plain = CommandRunner.run(["fetch", url, "--pin", wrong] + fixture.trusting)
        #expect(plain.status == 1, "\(plain)")
        #expect(plain.standardError.contains("\n  URL: https://\(CLIFixture.host):\(port)/ (curl 60: "), "\(plain)")
        #expect(plain.standardError.contains("`servertrust pins https://\(CLIFixture.host):\(port)/`"), "\(plain)")
        let json = CommandRunner.run(["fetch", url, "--pin", wrong, "--json"] + fixture.trusting)
        #expect(json.status == 1, "\(json)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let failures = try #require(object["trustFailures"] as? [[String: Any]])
        #expect(failures.map { $0["url"] as? String } == ["https://\(CLIFixture.host):\(port)/"])
        // "user:pw", not "pw": the pins' base64 may hold those two letters.
        for output in [plain.standardOutput, plain.standardError, json.standardOutput, json.standardError] {
            #expect(!output.contains("user:pw"), "\(output)")
            #expect(!output.contains("SECRET"), "\(output)")
        }
    }

    /// Second audit, finding 1, through a policy file: `*.servertrust.test` (default
    /// validation) must not outrank `**.cli.servertrust.test` (pinned) for `cli.servertrust.test`.
    @Test func finding1APolicyFilesDeepestPatternGovernsTheApexHost() throws {
        let fixture = try CLIFixture()
        let wrong = "sha256/" + Data(repeating: 7, count: 32).base64EncodedString()
        let backup = "sha256/" + Data(repeating: 5, count: 32).base64EncodedString()
        let policy = try LabPKI.writeTemporaryFile("""
            { "version": 1, "hosts": {
                "*.servertrust.test": {},
                "**.cli.servertrust.test": { "pins": [{ "pin": "\(wrong)" }, { "pin": "\(backup)" }] } } }
            """, name: "policy.json")
        defer { LabPKI.removeTemporaryFile(policy) }
        let result = CommandRunner.run(["fetch", fixture.url(), "--policy", policy] + fixture.trusting)
        #expect(result.status == 1, "\(result)")
        #expect(result.standardOutput.isEmpty)
        #expect(result.standardError.contains(
            "PinSetTrustEvaluator: No certificate of the validated chain (3 certificates) matches a configured pin."), "\(result)")
    }

    @Test func anUntrustedChainExitsOneWithTheCAHint() throws {
        let fixture = try CLIFixture()
        let result = CommandRunner.run(["fetch", fixture.url()] + fixture.resolve())
        #expect(result.status == 1, "\(result)")
        #expect(result.standardError.contains("chainValidationFailed") || result.standardError.contains("chain validation failed"), "\(result)")
        #expect(result.standardError.contains("hint: for a private CA, pass its root with --ca FILE"), "\(result)")
    }

    @Test func aBadURLIsAUsageError() {
        let result = CommandRunner.run(["fetch", "not a url"])
        #expect(result.status == 2, "\(result)")
        #expect(result.standardError.hasPrefix("error: "))
    }

    @Test func aClosedPortExitsThreeWithAHint() throws {
        let fixture = try CLIFixture()
        let port = try fixture.closedPort()
        let url = "https://\(CLIFixture.host):\(port)/"
        let resolve = ["--resolve", "\(CLIFixture.host):\(port):127.0.0.1"]
        let result = CommandRunner.run(["fetch", url, "--ca", fixture.caFile] + resolve)
        #expect(result.status == 3, "\(result)")
        #expect(result.standardError.contains("(curl 7: "), "\(result)")
        #expect(result.standardError.contains("hint: nothing accepted a connection at \(CLIFixture.host):\(port); check the port"), "\(result)")
    }

    @Test func jsonReportsTheTrustEvaluation() throws {
        let fixture = try CLIFixture()
        let result = CommandRunner.run(["fetch", fixture.url(), "--json"] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(object["status"] as? Int == 200)
        #expect(object["body"] as? String == "hello from the CLI fixture\n")
        let trust = try #require(object["trust"] as? [String: Any])
        #expect(trust["trusted"] as? Bool == true)
        #expect((trust["validatedChain"] as? [[String: String]])?.map { $0["pin"] } == [
            fixture.leaf.certificate, fixture.intermediate.certificate, fixture.root.certificate,
        ].map(\.spkiPin.description))
    }
}

/// Audit finding 7: libcurl 7.88 writes every TLS secret to the file `SSLKEYLOGFILE` names.
/// `servertrust fetch` (a Session) must not, unless the loudly named flag asks for it.
@Suite struct SSLKeyLogFileTests {
    private func keyLogPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("servertrust-keylog-\(UUID().uuidString).txt").path
    }

    @Test func sslKeyLogFileIsNotWrittenUnlessOptedIn() throws {
        let fixture = try CLIFixture()
        let path = keyLogPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = CommandRunner.run(["fetch", fixture.url()] + fixture.trusting, environment: ["SSLKEYLOGFILE": path])
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput == "hello from the CLI fixture\n")
        // libcurl creates the file when it initialises; not one secret may reach it.
        let written = FileManager.default.contents(atPath: path) ?? Data()
        #expect(written.isEmpty, "\(String(decoding: written, as: UTF8.self))")
    }

    /// The flag works, so the test above would see secrets if any were written.
    @Test func theUnsafeFlagWritesTheSecretsAndSaysSo() throws {
        let fixture = try CLIFixture()
        let path = keyLogPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = CommandRunner.run(
            ["fetch", fixture.url(), "--unsafe-write-tls-secrets-to-sslkeylogfile"] + fixture.trusting, environment: ["SSLKEYLOGFILE": path])
        #expect(result.status == 0, "\(result)")
        #expect(result.standardError.hasPrefix("warning: --unsafe-write-tls-secrets-to-sslkeylogfile: TLS secrets go to \(path)"), "\(result)")
        let written = String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
        #expect(written.contains("CLIENT_HANDSHAKE_TRAFFIC_SECRET") || written.contains("CLIENT_RANDOM"), "\(written)")
    }
}

@Suite struct FetchHeaderOptionTests {
    @Test func headerFieldsAreSentInOrderRepeatsIncluded() throws {
        let fixture = try CLIFixture()
        let result = CommandRunner.run(
            ["fetch", fixture.url("/headers"), "-H", "X-Custom: one", "--header", "x-custom:two  ", "-H", "Accept: text/plain"] + fixture.trusting)
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput.contains("X-Custom: one\nx-custom: two\nAccept: text/plain\n"), "\(result)")
    }

    @Test func anInvalidFieldNameIsAUsageErrorNamingIt() throws {
        let fixture = try CLIFixture()
        let result = CommandRunner.run(["fetch", fixture.url(), "-H", "Bad Name: x"] + fixture.trusting)
        #expect(result.status == 2, "\(result)")
        #expect(result.standardOutput.isEmpty)
        #expect(result.standardError.hasPrefix("error: -H \"Bad Name: x\": \"Bad Name\" is not a valid header field name"), "\(result)")
        #expect(fixture.server.recentRequests.isEmpty, "nothing is sent")
    }

    @Test(arguments: ["NoColon", ": empty name", "X-Evil: a\r\nInjected: yes"])
    func aMalformedHeaderArgumentIsAUsageError(argument: String) throws {
        let fixture = try CLIFixture()
        let result = CommandRunner.run(["fetch", fixture.url(), "-H", argument] + fixture.trusting)
        #expect(result.status == 2, "\(result)")
        #expect(result.standardError.hasPrefix("error: -H \(argument.debugDescription)"), "\(result)")
        #expect(fixture.server.recentRequests.isEmpty, "nothing is sent")
    }
}
