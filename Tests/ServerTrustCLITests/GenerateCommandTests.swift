import Foundation
import ServerTrustCodeGeneration
import ServerTrustTestSupport
import Testing

@Suite struct GenerateCommandTests {
    static let certificates = PackageFiles.root.appendingPathComponent("Certificates").path

    /// A fresh temporary folder, removed by the caller.
    private func makeFolder(_ files: [String: [UInt8]]) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ServerTrustCLITests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, contents) in files { try Data(contents).write(to: folder.appendingPathComponent(name)) }
        return folder
    }

    @Test func writesTheSampleFolderAndSummarisesIt() throws {
        let folder = try makeFolder([:])
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("PinnedCertificates.swift").path
        let result = CommandRunner.run(["generate", Self.certificates, "-o", output])
        #expect(result.status == 0, "\(result)")
        expectGolden(result.standardOutput, """
            Wrote <out>: 4 certificates from <certificates> as Certificates.
              sampleBackup        sha256/u79R2NQZKXJcJ3dfd5eUttT1RMz3vPTgQ7S5ftapgOs=  CN=ServerTrust Sample Backup Key,O=ServerTrust Samples  (sample-backup.pem)
              sampleIntermediate  sha256/b82bv1ty2T/6wJk4aCkRvjGo7IlhFTGi0qO/qRdnHDo=  CN=ServerTrust Sample Intermediate,O=ServerTrust Samples  (sample-intermediate.pem)
              sampleLeaf          sha256/ADXzqTPD6C9iaV5wl10vCfkWwoht2ypA8Jj8agGz/lY=  CN=demo.servertrust.test  (sample-leaf.pem)
              sampleRoot          sha256/ZAtDmKbQ0ynTid6h1CEUFYwcx4b75FMhAjJMk7uIFCc=  CN=ServerTrust Sample Root,O=ServerTrust Samples  (sample-root.pem)

            """.replacingOccurrences(of: "sha256/u79R2NQZKXJcJ3dfd5eUttT1RMz3vPTgQ7S5ftapgOs=", with: "sha256/<pin>")
            .replacingOccurrences(of: "sha256/b82bv1ty2T/6wJk4aCkRvjGo7IlhFTGi0qO/qRdnHDo=", with: "sha256/<pin>")
            .replacingOccurrences(of: "sha256/ADXzqTPD6C9iaV5wl10vCfkWwoht2ypA8Jj8agGz/lY=", with: "sha256/<pin>")
            .replacingOccurrences(of: "sha256/ZAtDmKbQ0ynTid6h1CEUFYwcx4b75FMhAjJMk7uIFCc=", with: "sha256/<pin>"),
            literals: [output: "<out>", Self.certificates: "<certificates>"])
        // The sample pins are fixed: check them exactly, not only their shape.
        #expect(result.standardOutput.contains("sampleLeaf          sha256/ADXzqTPD6C9iaV5wl10vCfkWwoht2ypA8Jj8agGz/lY="))
        let source = try String(contentsOfFile: output, encoding: .utf8)
        #expect(source.contains("internal static let sampleLeafPin = \"sha256/ADXzqTPD6C9iaV5wl10vCfkWwoht2ypA8Jj8agGz/lY=\""))
        #expect(source.contains("internal static let all: [PinnedCertificateConstant] = [sampleBackup, sampleIntermediate, sampleLeaf, sampleRoot]"))
        #expect(!source.contains("sampleChain"), "sample-chain.pem.txt is not a certificate file")
    }

    @Test func outputIsDeterministicAndMatchesTheLibraryAndThePlugin() throws {
        let first = CommandRunner.run(["generate", Self.certificates])
        let second = CommandRunner.run(["generate", Self.certificates])
        #expect(first.status == 0, "\(first)")
        #expect(first.standardOutput == second.standardOutput)
        let library = try CertificateConstantsGenerator().source(forDirectory: URL(fileURLWithPath: Self.certificates))
        #expect(first.standardOutput == library)
        // What ServerTrustPinsPlugin generated for the `servertrust` target in this build.
        let outputs = PackageFiles.root.appendingPathComponent(".build/plugins/outputs")
        let pluginFile = try FileManager.default.contentsOfDirectory(atPath: outputs.path)
            .map { outputs.appendingPathComponent("\($0)/servertrust/destination/ServerTrustPinsPlugin/PinnedCertificates.swift").path }
            .first { FileManager.default.fileExists(atPath: $0) }
        let generated = try String(contentsOfFile: try #require(pluginFile), encoding: .utf8)
        #expect(generated == first.standardOutput)
    }

    @Test func jsonListsNamesAndPins() throws {
        let result = CommandRunner.run(["generate", Self.certificates, "--json", "--type-name", "SamplePins"])
        #expect(result.status == 0, "\(result)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        let entries = try #require(object["certificates"] as? [[String: String]])
        #expect(entries.map { $0["file"] } == ["sample-backup.pem", "sample-intermediate.pem", "sample-leaf.pem", "sample-root.pem"])
        #expect(entries.map { $0["name"] } == ["sampleBackup", "sampleIntermediate", "sampleLeaf", "sampleRoot"])
        #expect(entries[2]["pinConstant"] == "sampleLeafPin")
        #expect((object["source"] as? String)?.contains("internal enum SamplePins {") == true)
    }

    @Test func everyBadFileIsNamedWithItsReasonAndNothingIsWritten() throws {
        let root = try LabPKI.makeRoot(commonName: "Generate Test Root")
        let key = LabKey.ecP256()
        let folder = try makeFolder([
            "good.pem": Array(root.certificate.pemEncoded.utf8),
            "not-base64.pem": Array("-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n".utf8),
            "garbage.der": [0x30, 0x03, 0x02, 0x01],
            "with-key.pem": Array((root.certificate.pemEncoded + key.pemPrivateKey).utf8),
            "bundle.crt": Array((root.certificate.pemEncoded + root.certificate.pemEncoded).utf8),
            "README.md": Array("not a certificate, ignored\n".utf8),
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("Out.swift").path
        let result = CommandRunner.run(["generate", folder.path, "-o", output])
        #expect(result.status == 1, "\(result)")
        #expect(result.standardOutput.isEmpty)
        expectGolden(result.standardError, """
            error: <dir>/bundle.crt: the file holds 2 certificates; put one certificate per file (name a chain file .pem.txt to keep it out)
            error: <dir>/garbage.der: The data is not a DER-encoded X.509 certificate.<openssl>
            error: <dir>/not-base64.pem: PEM certificate block 1 is not valid base64.
            error: <dir>/with-key.pem: the file contains a private key; never compile a key into a binary: remove the key from the file and keep it out of this folder

            """, literals: [folder.path: "<dir>"].merging(Self.opensslDetail(result.standardError)) { $1 })
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test func filesWhoseNamesClashAreRefused() throws {
        let root = try LabPKI.makeRoot()
        let folder = try makeFolder(["sample-leaf.pem": Array(root.certificate.pemEncoded.utf8), "sample_leaf.der": root.certificate.derEncoded])
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = CommandRunner.run(["generate", folder.path])
        #expect(result.status == 1, "\(result)")
        #expect(result.standardError.contains("sample_leaf.der: its Swift name sampleLeaf clashes with sample-leaf.pem"), "\(result)")
    }

    @Test func aFolderWithoutCertificatesIsAUsageError() throws {
        let folder = try makeFolder(["README.md": Array("nothing here\n".utf8)])
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = CommandRunner.run(["generate", folder.path])
        #expect(result.status == 2, "\(result)")
        #expect(result.standardError.contains("holds no certificate file (.cer, .crt, .der, .pem)"), "\(result)")
        #expect(CommandRunner.run(["generate", "/nonexistent-folder"]).status == 2)
        #expect(CommandRunner.run(["generate", Self.certificates, "--type-name", "not a name"]).status == 2)
    }

    @Test func namesComeFromFileNames() {
        #expect(ConstantName.identifier(forFileName: "sample-leaf.pem") == "sampleLeaf")
        #expect(ConstantName.identifier(forFileName: "ISRG-Root-X1.crt") == "isrgRootX1")
        #expect(ConstantName.identifier(forFileName: "DigiCert_Global Root.cer") == "digiCertGlobalRoot")
        #expect(ConstantName.identifier(forFileName: "2024-backup.der") == "certificate2024Backup")
        #expect(ConstantName.identifier(forFileName: "---.pem") == nil)
        #expect(ConstantName.spelled("default") == "`default`")
        #expect(ConstantName.spelled("sampleLeaf") == "sampleLeaf")
    }

    /// The OpenSSL detail appended to a parse error varies with the OpenSSL build: ignore it.
    private static func opensslDetail(_ text: String) -> [String: String] {
        guard let start = text.range(of: "certificate. (OpenSSL: "), let end = text[start.upperBound...].firstIndex(of: "\n") else { return [:] }
        return [String(text[text.index(start.lowerBound, offsetBy: "certificate.".count)..<end]): "<openssl>"]
    }
}
