import Foundation
import ServerTrust
import ServerTrustTestSupport
import Testing

/// `verify --ct-log-list [--require-ct]` on the committed sample chain, which carries no SCTs:
/// reported (with a warning) by default, refused with `--require-ct`, and the list's own
/// errors and signature checked before anything is verified.
@Suite struct VerifyCertificateTransparencyTests {
    static let chain = VerifyCommandTests.chain
    static let root = VerifyCommandTests.root
    static let host = "demo.servertrust.test"

    /// A v3 list naming Google's RFC 6962 test log, dated now, in a fresh directory.
    static func logList(_ body: String? = nil) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ct-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let fixture = PackageFiles.root.appendingPathComponent("Tests/ServerTrustTests/Fixtures/CT/test-log-list/log_list.json")
        var text = try String(contentsOf: fixture, encoding: .utf8)
        text = text.replacingOccurrences(of: "2015-09-01T00:00:00Z", with: Date().addingTimeInterval(-86_400).formatted(.iso8601))
        let path = directory.appendingPathComponent("log_list.json").path
        try (body ?? text).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func withoutRequireCTAChainWithoutSCTsIsTrustedWithAWarning() throws {
        let result = CommandRunner.run(["verify", "--chain", Self.chain, "--roots", Self.root, "--host", Self.host, "--ct-log-list", try Self.logList()])
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput.contains("certificate transparency: notEnoughSCTs (reportOnly)\n"), "\(result)")
        #expect(result.standardError.contains("warning: Certificate Transparency (notEnoughSCTs)"), "\(result)")
        #expect(result.standardError.contains("Accepted because --require-ct is not set."), "\(result)")
    }

    @Test func requireCTRejectsAChainWithoutSCTsWithExitOne() throws {
        let result = CommandRunner.run([
            "verify", "--chain", Self.chain, "--roots", Self.root, "--host", Self.host, "--ct-log-list", try Self.logList(), "--require-ct",
        ])
        #expect(result.status == 1, "\(result)")
        #expect(result.standardError.hasPrefix("rejected: CertificateTransparency: Certificate Transparency (notEnoughSCTs) for demo.servertrust.test"), "\(result)")
    }

    @Test func theJSONReportCarriesTheOutcome() throws {
        let result = CommandRunner.run([
            "verify", "--chain", Self.chain, "--roots", Self.root, "--host", Self.host, "--ct-log-list", try Self.logList(), "--require-ct", "--json",
        ])
        #expect(result.status == 1, "\(result)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        let ct = try #require(object["certificateTransparency"] as? [String: Any])
        #expect(ct["reason"] as? String == "notEnoughSCTs")
        #expect(ct["mode"] as? String == "enforced")
        #expect(ct["refused"] as? Bool == true)
        #expect((ct["scts"] as? [Any])?.isEmpty == true)
        #expect((object["error"] as? [String: Any])?["code"] as? String == "certificateTransparency")
    }

    @Test func aMalformedListIsAUsageErrorNamingItsLine() throws {
        let path = try Self.logList(#"{"log_list_timestamp": "2026-01-01T00:00:00Z", "operators": [{"name": "X", "logs": [{"log_id": "AAAA"}]}]}"#)
        let result = CommandRunner.run(["verify", "--chain", Self.chain, "--roots", Self.root, "--ct-log-list", path])
        #expect(result.status == 2, "\(result)")
        #expect(result.standardError.contains(#"log_list.json:1: operators[0].logs[0]: missing member "key""#), "\(result)")
    }

    @Test func aListWhoseSignatureDoesNotVerifyIsRefused() throws {
        let path = try Self.logList()
        let signer = try SignaturePrivateKey.generate(.ecdsaP256)
        let other = try SignaturePrivateKey.generate(.ecdsaP256)
        let json = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        try Data(try signer.signature(for: json, algorithm: .ecdsaP256SHA256)).write(to: URL(fileURLWithPath: String(path.dropLast(5)) + ".sig"))
        let keyPath = path + ".key.pem"
        try other.publicKey.pemRepresentation.write(toFile: keyPath, atomically: true, encoding: .utf8)
        let refused = CommandRunner.run(["verify", "--chain", Self.chain, "--roots", Self.root, "--ct-log-list", path, "--ct-log-list-key", keyPath])
        #expect(refused.status == 2, "\(refused)")
        #expect(refused.standardError.contains("log_list.json: the detached signature does not verify"), "\(refused)")
        try signer.publicKey.pemRepresentation.write(toFile: keyPath, atomically: true, encoding: .utf8)
        let accepted = CommandRunner.run(["verify", "--chain", Self.chain, "--roots", Self.root, "--ct-log-list", path, "--ct-log-list-key", keyPath])
        #expect(accepted.status == 0, "\(accepted)")
    }

    @Test func requireCTNeedsALogList() {
        let result = CommandRunner.run(["verify", "--chain", Self.chain, "--roots", Self.root, "--require-ct"])
        #expect(result.status == 2, "\(result)")
        #expect(result.standardError.contains("--require-ct, --ct-log-list-key and --ct-log-list-signature need --ct-log-list <FILE>."), "\(result)")
    }
}
