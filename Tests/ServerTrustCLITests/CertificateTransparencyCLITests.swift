import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// `verify`, `fetch` and `inspect` with `--ct-log-list` on a compliant leaf: an in-process PKI
/// whose leaf embeds SCTs from test logs of two operators (`LabCA.issueLeafWithEmbeddedSCTs`),
/// and a v3 list naming those logs (`TestCTLogList`). A leaf with one log's SCT is the
/// shortfall: reported without `--require-ct`, refused with it, with the exit status of every
/// other trust rejection.
@Suite struct CertificateTransparencyCLITests {
    static let host = "ct.servertrust.test"

    /// The PKI, the logs, the list and the files the commands read.
    final class Lab: Sendable {
        let root: LabCA
        let logA: TestCTLog
        let logB: TestCTLog
        let compliant: EmbeddedSCTLeaf
        let oneLog: EmbeddedSCTLeaf
        let directory: String
        let rootFile: String
        let listFile: String
        let listKeyFile: String

        init() throws {
            root = try LabPKI.makeRoot(commonName: "CT CLI Test Root")
            let intermediate = try root.issueIntermediate(commonName: "CT CLI Test Intermediate")
            logA = try TestCTLog(description: "CLI Test Log A", operatorName: "Operator A")
            logB = try TestCTLog(description: "CLI Test Log B", operatorName: "Operator B", keyKind: .rsa2048)
            compliant = try intermediate.issueLeafWithEmbeddedSCTs(from: [logA, logB], dnsNames: [CertificateTransparencyCLITests.host])
            oneLog = try intermediate.issueLeafWithEmbeddedSCTs(from: [logA], dnsNames: [CertificateTransparencyCLITests.host])
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("ct-cli-lab-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            var list = TestCTLogList()
            list.add(logA, state: .usable, since: Date(timeIntervalSinceNow: -400 * 86_400))
            list.add(logB, state: .usable, since: Date(timeIntervalSinceNow: -400 * 86_400))
            let json = list.json(timestamp: Date(timeIntervalSinceNow: -86_400))
            rootFile = directory + "/root.pem"
            listFile = directory + "/log_list.json"
            listKeyFile = directory + "/log_list_key.pem"
            try root.certificate.pemEncoded.write(toFile: rootFile, atomically: true, encoding: .utf8)
            try Data(json).write(to: URL(fileURLWithPath: listFile))
            let signer = try SignaturePrivateKey.generate(.ecdsaP256)
            try Data(try signer.signature(for: json, algorithm: .ecdsaP256SHA256)).write(to: URL(fileURLWithPath: directory + "/log_list.sig"))
            try signer.publicKey.pemRepresentation.write(toFile: listKeyFile, atomically: true, encoding: .utf8)
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }

        func chainFile(_ leaf: EmbeddedSCTLeaf) throws -> String {
            let path = directory + "/chain-\(UUID().uuidString).pem"
            try leaf.pemChain.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }

        func server(_ leaf: EmbeddedSCTLeaf) throws -> LocalTLSServer {
            try LocalTLSServer(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey) { request in
                request.path == "/" ? .text("hello from the CT fixture\n") : nil
            }
        }

        func fetchArguments(_ server: LocalTLSServer) -> [String] {
            ["fetch", server.url("/", host: CertificateTransparencyCLITests.host), "--ca", rootFile,
             "--resolve", server.resolveEntry(host: CertificateTransparencyCLITests.host)]
        }
    }

    // MARK: verify

    @Test func verifyAcceptsACompliantLeafWithRequireCTAndPrintsEachSCTWithItsLog() throws {
        let lab = try Lab()
        let result = CommandRunner.run([
            "verify", "--chain", try lab.chainFile(lab.compliant), "--roots", lab.rootFile, "--host", Self.host,
            "--ct-log-list", lab.listFile, "--ct-log-list-key", lab.listKeyFile, "--require-ct",
        ])
        #expect(result.status == 0, "\(result)")
        #expect(result.standardError.isEmpty, "\(result)")
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.contains("certificate transparency: compliant (enforced)"), "\(result)")
        let scts = lines.filter { $0.hasPrefix("  sct: ") }
        #expect(scts.count == 2, "\(result)")
        #expect(scts.first?.hasPrefix("  sct: embedded from CLI Test Log A (Operator A) at ") == true, "\(result)")
        #expect(scts.last?.hasPrefix("  sct: embedded from CLI Test Log B (Operator B) at ") == true, "\(result)")
        #expect(scts.allSatisfy { $0.hasSuffix(": verified") }, "\(result)")
    }

    @Test func verifyRefusesAShortfallWithRequireCTWithTheExitStatusOfAPinFailure() throws {
        let lab = try Lab()
        let chain = try lab.chainFile(lab.oneLog)
        let refused = CommandRunner.run([
            "verify", "--chain", chain, "--roots", lab.rootFile, "--host", Self.host, "--ct-log-list", lab.listFile, "--require-ct",
        ])
        let pinFailure = CommandRunner.run([
            "verify", "--chain", chain, "--roots", lab.rootFile, "--host", Self.host,
            "--pin", "sha256/" + Data(repeating: 7, count: 32).base64EncodedString(),
        ])
        #expect(pinFailure.status != 0, "\(pinFailure)")
        #expect(refused.status == pinFailure.status, "\(refused)")
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.standardError.hasPrefix("rejected: CertificateTransparency: Certificate Transparency (notEnoughOperators) for \(Self.host)")
            || refused.standardError.hasPrefix("rejected: CertificateTransparency: Certificate Transparency (notEnoughSCTs) for \(Self.host)"), "\(refused)")
    }

    // MARK: fetch

    @Test func fetchWithRequireCTPrintsTheBodyAndTheCompliantOutcome() throws {
        let lab = try Lab()
        let server = try lab.server(lab.compliant)
        defer { server.stop() }
        let result = CommandRunner.run(lab.fetchArguments(server) + ["--ct-log-list", lab.listFile, "--require-ct"])
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput == "hello from the CT fixture\n", "\(result)")
        #expect(result.standardError.contains("certificate transparency: compliant (enforced)\n"), "\(result)")
        #expect(result.standardError.contains("  sct: embedded from CLI Test Log A (Operator A) at "), "\(result)")
        #expect(result.standardError.contains("  sct: embedded from CLI Test Log B (Operator B) at "), "\(result)")
    }

    @Test func fetchJSONCarriesTheOutcomeAndEverySCT() throws {
        let lab = try Lab()
        let server = try lab.server(lab.compliant)
        defer { server.stop() }
        let result = CommandRunner.run(lab.fetchArguments(server) + ["--ct-log-list", lab.listFile, "--require-ct", "--json"])
        #expect(result.status == 0, "\(result)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        let trust = try #require(object["trust"] as? [String: Any])
        #expect(trust["trusted"] as? Bool == true)
        let ct = try #require(trust["certificateTransparency"] as? [String: Any])
        #expect(ct["compliant"] as? Bool == true)
        #expect(ct["mode"] as? String == "enforced")
        #expect(ct["refused"] as? Bool == false)
        #expect(ct["reason"] == nil)
        let scts = try #require(ct["scts"] as? [[String: Any]])
        #expect(scts.map { $0["log"] as? String } == ["CLI Test Log A", "CLI Test Log B"])
        #expect(scts.map { $0["operator"] as? String } == ["Operator A", "Operator B"])
        #expect(scts.map { $0["source"] as? String } == ["embedded", "embedded"])
        #expect(scts.map { $0["status"] as? String } == ["verified", "verified"])
        #expect(scts.map { $0["logID"] as? String } == [lab.logA, lab.logB].map { Data($0.logID).base64EncodedString() })
        #expect(scts.allSatisfy { $0["timestamp"] is String })
    }

    @Test func fetchWithoutRequireCTReportsAShortfallAndPrintsTheBody() throws {
        let lab = try Lab()
        let server = try lab.server(lab.oneLog)
        defer { server.stop() }
        let result = CommandRunner.run(lab.fetchArguments(server) + ["--ct-log-list", lab.listFile, "--json"])
        #expect(result.status == 0, "\(result)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(object["body"] as? String == "hello from the CT fixture\n")
        let ct = try #require((object["trust"] as? [String: Any])?["certificateTransparency"] as? [String: Any])
        #expect(ct["compliant"] as? Bool == false)
        #expect(ct["mode"] as? String == "reportOnly")
        #expect(ct["refused"] as? Bool == false)
        #expect(["notEnoughSCTs", "notEnoughOperators"].contains(ct["reason"] as? String ?? ""), "\(ct)")
        #expect((object["trustResult"] as? [String: Any])?["code"] as? String == "certificateTransparency")
    }

    @Test func fetchWithRequireCTRefusesAShortfallWithExitOneAndNamesIt() throws {
        let lab = try Lab()
        let server = try lab.server(lab.oneLog)
        defer { server.stop() }
        let json = CommandRunner.run(lab.fetchArguments(server) + ["--ct-log-list", lab.listFile, "--require-ct", "--json"])
        #expect(json.status == 1, "\(json)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        #expect((object["error"] as? [String: Any])?["code"] as? String == "trustEvaluationFailed")
        let trust = try #require(object["trust"] as? [String: Any])
        #expect(trust["code"] as? String == "certificateTransparency")
        let ct = try #require(trust["certificateTransparency"] as? [String: Any])
        #expect(ct["refused"] as? Bool == true)
        #expect(ct["mode"] as? String == "enforced")
        #expect((ct["scts"] as? [[String: Any]])?.map { $0["status"] as? String } == ["verified"])

        let text = CommandRunner.run(lab.fetchArguments(server) + ["--ct-log-list", lab.listFile, "--require-ct"])
        #expect(text.status == 1, "\(text)")
        #expect(text.standardOutput.isEmpty, "\(text)")
        #expect(text.standardError.contains("  sct: embedded from CLI Test Log A (Operator A) at "), "\(text)")
        #expect(text.standardError.contains("(enforced)\n"), "\(text)")
    }

    @Test func fetchRequireCTNeedsAList() throws {
        let missing = CommandRunner.run(["fetch", "https://ct.servertrust.test/", "--require-ct"])
        #expect(missing.status == 2, "\(missing)")
        #expect(missing.standardError.contains("need --ct-log-list <FILE>"), "\(missing)")
    }

    // MARK: inspect

    @Test func inspectPrintsTheEmbeddedSCTsWithTheirLogsGivenAList() throws {
        let lab = try Lab()
        let server = try lab.server(lab.compliant)
        defer { server.stop() }
        let arguments = ["inspect", server.url("/", host: Self.host), "--ca", lab.rootFile, "--resolve", server.resolveEntry(host: Self.host)]
        let verified = CommandRunner.run(arguments + ["--ct-log-list", lab.listFile])
        #expect(verified.status == 0, "\(verified)")
        #expect(verified.standardOutput.contains("Signed certificate timestamps\n"), "\(verified)")
        #expect(verified.standardOutput.contains("certificate transparency: compliant (reportOnly)\n"), "\(verified)")
        #expect(verified.standardOutput.contains("  sct: embedded from CLI Test Log B (Operator B) at "), "\(verified)")

        let unverified = CommandRunner.run(arguments)
        #expect(unverified.status == 0, "\(unverified)")
        #expect(unverified.standardOutput.contains("Signed certificate timestamps (not verified: no --ct-log-list)\n"), "\(unverified)")
        #expect(unverified.standardOutput.contains("  sct: embedded from log \(Data(lab.logA.logID).base64EncodedString()) at "), "\(unverified)")

        let json = CommandRunner.run(arguments + ["--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let scts = try #require(object["signedCertificateTimestamps"] as? [[String: Any]])
        #expect(scts.map { $0["logID"] as? String } == [lab.logA, lab.logB].map { Data($0.logID).base64EncodedString() })
    }

    @Test func inspectShowsTLSExtensionSCTs() throws {
        let lab = try Lab()
        let leaf = lab.compliant
        let extra = try TestCTLog(description: "CLI Test Log C", operatorName: "Operator C")
        let sct = try extra.certificateSCT(for: leaf.certificate.derEncoded, at: Date(timeIntervalSinceNow: -60))
        let server = try OpenSSLServer.start(
            leaf: leaf.certificate.pemEncoded, chain: LabPKI.pemBundle(Array(leaf.chain.dropFirst())), key: leaf.key.pemPrivateKey,
            arguments: "", connections: 1, signedCertificateTimestamps: [sct])
        let result = CommandRunner.run([
            "inspect", "https://\(Self.host):\(server.port)/", "--ca", lab.rootFile, "--resolve", "\(Self.host):\(server.port):127.0.0.1",
        ])
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput.contains("  sct: tlsExtension from log \(Data(extra.logID).base64EncodedString()) at "), "\(result)")
    }
}
