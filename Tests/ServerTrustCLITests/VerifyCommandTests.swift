import Foundation
import ServerTrustTestSupport
import Testing

/// `verify` on the committed sample chain (valid until 2036), so the output is fully stable.
@Suite struct VerifyCommandTests {
    static let certificates = PackageFiles.root.appendingPathComponent("Certificates").path
    static let chain = certificates + "/sample-chain.pem.txt"
    static let root = certificates + "/sample-root.pem"
    static let samplePins = (
        intermediate: "sha256/b82bv1ty2T/6wJk4aCkRvjGo7IlhFTGi0qO/qRdnHDo=",
        backup: "sha256/u79R2NQZKXJcJ3dfd5eUttT1RMz3vPTgQ7S5ftapgOs="
    )

    @Test func theSampleChainIsTrustedForItsHost() {
        let result = CommandRunner.run(["verify", "--chain", Self.chain, "--roots", Self.root, "--host", "demo.servertrust.test"])
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput.hasPrefix("trusted: DefaultTrustEvaluator accepted 3-certificate chain ending at CN=ServerTrust Sample Root,O=ServerTrust Samples\n"), "\(result)")
    }

    @Test func pinnedToTheSampleIntermediateAndBackupItIsTrusted() {
        let result = CommandRunner.run([
            "verify", "--chain", Self.chain, "--roots", Self.root, "--host", "demo.servertrust.test",
            "--pin", Self.samplePins.intermediate, "--pin", Self.samplePins.backup,
        ])
        #expect(result.status == 0, "\(result)")
        #expect(result.standardOutput.hasPrefix("trusted: PinnedKeyHashesTrustEvaluator accepted"), "\(result)")
    }

    @Test func anotherHostIsRejectedWithExitOne() {
        let result = CommandRunner.run(["verify", "--chain", Self.chain, "--roots", Self.root, "--host", "api.example.com"])
        #expect(result.status == 1, "\(result)")
        #expect(result.standardError.hasPrefix("rejected: DefaultTrustEvaluator: "), "\(result)")
        #expect(result.standardError.contains("api.example.com"))
    }

    @Test func onlyTheBackupPinIsAPinMismatchListingThePeerPins() throws {
        let result = CommandRunner.run([
            "verify", "--chain", Self.chain, "--roots", Self.root, "--host", "demo.servertrust.test", "--pin", Self.samplePins.backup, "--json",
        ])
        #expect(result.status == 1, "\(result)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        let error = try #require(object["error"] as? [String: Any])
        #expect(error["code"] as? String == "pinMismatch")
        #expect((error["chain"] as? [[String: String]])?.map { $0["pin"] }.contains(Self.samplePins.intermediate) == true)
    }

    @Test func anUnreadableFileIsAUsageError() {
        let result = CommandRunner.run(["verify", "--chain", "/nonexistent.pem", "--roots", Self.root])
        #expect(result.status == 2, "\(result)")
        #expect(result.standardError.contains("/nonexistent.pem"))
    }
}
