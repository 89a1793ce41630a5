import Foundation
import ServerTrustCodeGeneration
import ServerTrustTUF
import ServerTrustTestSupport
import Testing

/// A TUF root compiled in: checked at build time by the generator `ServerTrustPinsPlugin` runs
/// (as the client checks the root it starts from), and started from by an updater — only when the
/// store has no root yet, so a root rotated forward since is never replaced.
@Suite struct CompiledRootTests {
    /// The root files of tuf_repo.py's `roots` scenario.
    func rootFile(_ name: String) throws -> [UInt8] {
        Array(try #require(FileManager.default.contents(atPath: "\(TUFTooling.repositories)/roots/\(name).tufroot.json")))
    }

    /// The one problem the generator reports for a single file.
    func refusal(_ fileName: String, _ contents: [UInt8]) throws -> CodeGenerationError.Problem {
        let error = #expect(throws: CodeGenerationError.self) { try CertificateConstantsGenerator().constants(files: [(fileName, contents)]) }
        let problems = try #require(error).problems
        #expect(problems.count == 1, "\(problems)")
        let problem = try #require(problems.first)
        #expect(problem.file == fileName)
        #expect(problem.scope == .file)
        return problem
    }

    func updater(_ store: MetadataStore, state: Int) throws -> Updater {
        try Updater(
            store: store, initialRoot: try InitialRoot(base64: Certificates.sampleTUFRoot), metadataBaseURL: "repo://\(state)/metadata",
            targetBaseURL: "repo://\(state)/targets", fetcher: FileFetcher(base: "\(TUFTooling.repositories)/compiled"))
    }

    // MARK: - Build time

    @Test func aValidRootBecomesAConstantHoldingItsExactBytes() throws {
        let bytes = try rootFile("valid")
        let generator = try CertificateConstantsGenerator()
        let generated = try generator.constants(files: [("updates.tufroot.json", bytes)])
        let root = try #require(generated.tufRoots.first)
        #expect(generated.certificates.isEmpty)
        #expect(root.constantName == "updatesTUFRoot")
        #expect(root.warnings.isEmpty)
        let source = generator.source(for: generated)
        #expect(source.contains("internal static let updatesTUFRoot = \"\(Data(bytes).base64EncodedString())\""))
        #expect(source.contains("from 0 certificate files and 1 TUF root."))
        #expect(try InitialRoot(base64: root.base64).bytes == bytes)
    }

    @Test func thePluginCompiledTheFixtureRootIntoThisTarget() throws {
        let committed = try Data(contentsOf: PackageFiles.root.appendingPathComponent("Tests/ServerTrustTUFTests/Certificates/sample.tufroot.json"))
        #expect(try InitialRoot(base64: Certificates.sampleTUFRoot).bytes == Array(committed))
        #expect(Certificates.all.isEmpty)
    }

    @Test func aTamperedRootFailsTheBuild() throws {
        let text = String(decoding: try rootFile("valid"), as: UTF8.self)
        let tampered = text.replacingOccurrences(of: "\"consistent_snapshot\":true", with: "\"consistent_snapshot\":false")
        #expect(tampered != text)
        let problem = try refusal("updates.tufroot.json", Array(tampered.utf8))
        #expect(problem.reason.hasPrefix("not signed by a threshold of its own root keys (unsignedMetadata): root: 0 valid signature(s), threshold 1"), "\(problem)")
    }

    @Test func anUnsignedRootFailsTheBuild() throws {
        let problem = try refusal("updates.tufroot.json", try rootFile("unsigned"))
        #expect(problem.reason.hasPrefix("not signed by a threshold of its own root keys (unsignedMetadata): root: 0 valid signature(s), threshold 1"), "\(problem)")
    }

    @Test func aRootBelowItsThresholdFailsTheBuild() throws {
        let problem = try refusal("updates.tufroot.json", try rootFile("below-threshold"))
        #expect(problem.reason.hasPrefix("not signed by a threshold of its own root keys (unsignedMetadata): root: 1 valid signature(s), threshold 2"), "\(problem)")
    }

    @Test func aRoleWhoseThresholdNoSupportedKeyCanReachFailsTheBuild() throws {
        let problem = try refusal("updates.tufroot.json", try rootFile("unusable-timestamp-key"))
        #expect(problem.reason.hasPrefix("the timestamp role needs 1 signature(s) but only 0 of its keys can be verified by this client; unusable: "), "\(problem)")
        #expect(problem.reason.contains("(ecdsa/ecdsa-sha2-nistp384)"), "\(problem)")
    }

    @Test func aSpareUnusableKeyCompilesWithAWarning() throws {
        let root = try #require(try CertificateConstantsGenerator().constants(files: [("updates.tufroot.json", try rootFile("spare-unusable-key"))]).tufRoots.first)
        #expect(root.warnings.count == 1)
        #expect(root.warnings.first?.hasPrefix("the snapshot role lists key(s) this client cannot use: ") == true, "\(root.warnings)")
    }

    @Test func anExpiredRootCompilesWithAWarning() throws {
        let generated = try CertificateConstantsGenerator().constants(files: [("updates.tufroot.json", try rootFile("expired"))])
        #expect(generated.tufRoots.count == 1)
        #expect(generated.warnings.map(\.file) == ["updates.tufroot.json"])
        #expect(generated.warnings.first?.reason.hasPrefix("the root (version 1) expired at ") == true, "\(generated.warnings)")
        // The same root, judged on a date before its expiry, compiles without one.
        let early = try CertificateConstantsGenerator().constants(files: [("updates.tufroot.json", try rootFile("expired"))], now: Date(timeIntervalSinceNow: -3 * 86_400))
        #expect(early.warnings.isEmpty)
    }

    @Test func filesThatAreNotRootMetadataFailTheBuild() throws {
        let notJSON = try refusal("updates.tufroot.json", Array("{\"signed\": ".utf8))
        #expect(notJSON.reason.hasPrefix("not JSON the TUF client accepts (malformedJSON): "), "\(notJSON)")
        let timestamp = try #require(FileManager.default.contents(atPath: "\(TUFTooling.repositories)/happy/0/metadata/timestamp.json"))
        let wrongType = try refusal("updates.tufroot.json", Array(timestamp))
        #expect(wrongType.reason == "not TUF root metadata the client accepts (malformedMetadata): expected root metadata, got \"timestamp\"", "\(wrongType)")
        let empty = try refusal("updates.tufroot.json", [])
        #expect(empty.reason.hasPrefix("the file is empty"), "\(empty)")
    }

    @Test func aRootListingAPrivateKeyFailsTheBuild() throws {
        let text = String(decoding: try rootFile("valid"), as: UTF8.self)
        let leaked = text.replacingOccurrences(of: "\"keyval\":{\"public\":", with: "\"keyval\":{\"private\":\"0123abcd\",\"public\":")
        #expect(leaked != text)
        let problem = try refusal("updates.tufroot.json", Array(leaked.utf8))
        #expect(problem.reason.contains(" holds a private key; never compile a key into a binary"), "\(problem)")
    }

    @Test func servertrustGenerateChecksTheSameFilesWithTheSameCode() throws {
        let folder = TUFTooling.temporaryDirectory("generate")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(try rootFile("valid")).write(to: URL(fileURLWithPath: "\(folder)/updates.tufroot.json"))
        try Data(try rootFile("expired")).write(to: URL(fileURLWithPath: "\(folder)/old.tufroot.json"))
        let written = Child.run(PackageFiles.servertrustBinary, ["generate", folder, "-o", "\(folder)/Out.swift"])
        #expect(written.status == 0, "\(written)")
        #expect(written.output.contains("warning: \(folder)/old.tufroot.json: the root (version 1) expired at "), "\(written)")
        #expect(written.output.contains("0 certificates and 2 TUF roots from \(folder) as Certificates."), "\(written)")
        let source = try String(contentsOfFile: "\(folder)/Out.swift", encoding: .utf8)
        #expect(source == (try CertificateConstantsGenerator().source(forDirectory: URL(fileURLWithPath: folder))))
        let json = Child.run(PackageFiles.servertrustBinary, ["generate", folder, "--json"])
        let start = try #require(json.output.firstIndex(of: "{"), "\(json)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output[start...].utf8)) as? [String: Any])
        let roots = try #require(object["tufRoots"] as? [[String: Any]])
        #expect(roots.map { $0["constant"] as? String } == ["oldTUFRoot", "updatesTUFRoot"])
        #expect(roots.map { ($0["warnings"] as? [String])?.count } == [1, 0])
        try Data(try rootFile("below-threshold")).write(to: URL(fileURLWithPath: "\(folder)/next.tufroot.json"))
        let refused = Child.run(PackageFiles.servertrustBinary, ["generate", folder])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.output.contains("error: \(folder)/next.tufroot.json: not signed by a threshold of its own root keys (unsignedMetadata): root: 1 valid signature(s), threshold 2"), "\(refused)")
    }

    // MARK: - Run time

    @Test func anUpdaterStartsFromTheCompiledInRootAndRefreshes() async throws {
        let store = try MetadataStore(directory: TUFTooling.temporaryDirectory("compiled"))
        let client = try updater(store, state: 0)
        try await client.refresh()
        #expect(await client.trusted.root.signed.version == 1)
        #expect(await client.trusted.timestamp?.signed.version == 1)
        #expect(store.read("root.json") == (try InitialRoot(base64: Certificates.sampleTUFRoot)).bytes)
        let policy = try #require(try await client.targetInfo("policy.json"))
        #expect(try await client.downloadTarget(policy, to: TUFTooling.temporaryDirectory("compiled-targets")) == Array("{\"pins\": []}\n".utf8))
    }

    @Test func aStoreThatHoldsARotatedRootKeepsIt() async throws {
        let store = try MetadataStore(directory: TUFTooling.temporaryDirectory("compiled"))
        try await updater(store, state: 1).refresh()
        let rotated = try #require(store.read("root.json"))
        #expect(try InitialRoot(bytes: rotated).metadata.signed.version == 2)
        // The application starts again with the same binary: the compiled-in root is version 1.
        let restarted = try updater(store, state: 1)
        #expect(await restarted.trusted.root.signed.version == 2)
        #expect(store.read("root.json") == rotated)
        #expect(try store.installInitialRoot(try InitialRoot(base64: Certificates.sampleTUFRoot)) == false)
        #expect(store.read("root.json") == rotated)
        try await restarted.refresh()
        #expect(await restarted.trusted.root.signed.version == 2)
    }

    @Test func aStoredRootThatFailsItsChecksIsRefusedNotReplaced() throws {
        let directory = TUFTooling.temporaryDirectory("compiled")
        let store = try MetadataStore(directory: directory)
        try store.write("root.json", Array("not a root".utf8))
        let error = #expect(throws: TUFError.self) { try updater(store, state: 0) }
        #expect(error?.code == .malformedJSON)
        #expect(store.read("root.json") == Array("not a root".utf8))
    }

    @Test func aRootThatFailsItsChecksIsNeverWrittenToTheStore() throws {
        let text = String(decoding: try rootFile("valid"), as: UTF8.self)
        let tampered = Array(text.replacingOccurrences(of: "\"consistent_snapshot\":true", with: "\"consistent_snapshot\":false").utf8)
        let error = #expect(throws: TUFError.self) { try InitialRoot(bytes: tampered) }
        #expect(error?.code == .unsignedMetadata)
        let notBase64 = #expect(throws: TUFError.self) { try InitialRoot(base64: "not base64!") }
        #expect(notBase64?.code == .malformedMetadata)
        let store = try MetadataStore(directory: TUFTooling.temporaryDirectory("compiled"))
        #expect(try store.installInitialRoot(try InitialRoot(bytes: try rootFile("valid"))) == true)
        #expect(store.read("root.json") == (try rootFile("valid")))
    }
}
