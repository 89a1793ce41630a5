import Foundation
import ServerTrustTestSupport
import Testing
import ServerTrust
import ServerTrustHTTP
@testable import ServerTrustTUF

/// The library `Updater` against a repository that tuf-on-ci's own tools published
/// (Fixtures/tuf-on-ci, README.md there says how): served on loopback over libcurl, with the
/// clock injected at a moment inside the committed metadata's validity, so the test never rots.
@Suite struct TUFOnCITests {
    /// tuf-on-ci-build-repository ran at this moment (libfaketime): every role was signed then.
    static let published: Int64 = 1_795_694_400  // 2026-11-26T12:00:00Z
    /// timestamp.json's expiry: tuf-on-ci's default of two days for the online timestamp role.
    static let timestampExpires: Int64 = published + 2 * 86_400
    static let policySHA256 = "27942d4302d4ada42f89c626ec7b5a74b0a8851f3ec598841edab4639f5b0b35"
    static let targetsKeyID = "8f8be37e9138dfd56736ae526dd83ff62a0e1efff16f920d00b18f7b30f35368"
    static let newRootKeyID = "bc89d3f9fd4e525d75ee4104f83105ce8cc430fcf673ac38230017bd5bdba18d"
    static let fixture = TUFFixtures.fixtures.appendingPathComponent("tuf-on-ci").path

    /// Copies of the published repository, one per variant, under one loopback server.
    static let served: (server: RepositoryServer, directory: String) = {
        let directory = TUFTooling.temporaryDirectory("tuf-on-ci")
        for variant in ["genuine", "expiry", "targets-signature", "root-signature", "target-bytes"] {
            for part in ["metadata", "targets"] {
                try! FileManager.default.createDirectory(atPath: "\(directory)/\(variant)", withIntermediateDirectories: true)
                try! FileManager.default.copyItem(atPath: "\(fixture)/\(part)", toPath: "\(directory)/\(variant)/\(part)")
            }
        }
        alterSignature(in: "\(directory)/targets-signature/metadata/2.targets.json", keyID: targetsKeyID)
        alterSignature(in: "\(directory)/root-signature/metadata/2.root.json", keyID: newRootKeyID)
        let target = "\(directory)/target-bytes/targets/\(policySHA256).policy.json"
        var bytes = Array(FileManager.default.contents(atPath: target)!)
        bytes[bytes.count / 2] ^= 0x01
        try! Data(bytes).write(to: URL(fileURLWithPath: target))
        return (RepositoryServer(directory: directory), directory)
    }()

    /// Changes one hex digit inside the DER-encoded signature `keyID` made, leaving the JSON valid.
    static func alterSignature(in file: String, keyID: String) {
        var text = try! String(contentsOfFile: file, encoding: .utf8)
        let key = text.range(of: "\"keyid\": \"\(keyID)\"")!
        let sig = text.range(of: "\"sig\": \"", range: key.upperBound..<text.endIndex)!
        let digit = text.index(sig.upperBound, offsetBy: 40)
        text.replaceSubrange(digit...digit, with: text[digit] == "0" ? "1" : "0")
        try! text.write(toFile: file, atomically: true, encoding: .utf8)
    }

    /// `servertrust updates`' transport (bounded libcurl GET), with 404 as the end of the root chain.
    struct LoopbackFetcher: TUFFetching {
        let curl = CurlRevocationFetcher(userAgent: "servertrust-tests")
        func fetch(_ url: String, maximumLength: Int, deadline: ContinuousClock.Instant) async throws(TUFError) -> [UInt8] {
            switch curl.fetch(.crl(url: url, maximumSize: maximumLength), deadline: deadline) {
            case .success(let bytes): return bytes
            case .failure(let error) where error.evidence.httpStatus == 404: throw TUFError(.notFound, url)
            case .failure(let error) where error.code == .fetchTooLarge: throw TUFError(.downloadTooLarge, url)
            case .failure(let error): throw TUFError(.downloadFailed, "\(url): \(error)")
            }
        }
    }

    /// An updater for `variant` that starts, as a shipped application does, from the first root
    /// tuf-on-ci published (metadata/1.root.json).
    func updater(_ variant: String, at seconds: Int64) throws -> Updater {
        let store = try MetadataStore(directory: TUFTooling.temporaryDirectory("tuf-on-ci-store"))
        let root = try #require(FileManager.default.contents(atPath: "\(Self.fixture)/metadata/1.root.json"))
        try store.write("root.json", Array(root))
        let base = "http://127.0.0.1:\(Self.served.server.port)/\(variant)"
        return try Updater(store: store, metadataBaseURL: base + "/metadata", targetBaseURL: base + "/targets",
                           fetcher: LoopbackFetcher(), clock: FixedClock(seconds: seconds))
    }

    @Test func aRepositoryPublishedByTUFOnCIRefreshesThroughItsRootRotationAndDeliversPolicyJSON() async throws {
        let client = try updater("genuine", at: Self.published + 3_600)
        try await client.refresh()
        let trusted = await client.trusted
        #expect(trusted.root.signed.version == 2)
        #expect(trusted.timestamp?.signed.version == 2)
        #expect(trusted.snapshot?.signed.version == 2)
        #expect(trusted.targets["targets"]?.metadata.signed.version == 2)
        // Offline roles carry the PIV (P-256) keys, online ones tuf-on-ci's test key.
        #expect(trusted.root.signed.keys[Self.newRootKeyID]?.scheme == "ecdsa-sha2-nistp256")
        #expect(trusted.root.signed.roles[.root]?.keyIDs == [Self.newRootKeyID])
        let timestampKey = try #require(trusted.root.signed.roles[.timestamp]?.keyIDs.first)
        #expect(trusted.root.signed.keys[timestampKey]?.scheme == "ed25519")

        let info = try #require(try await client.targetInfo("policy.json"))
        let directory = TUFTooling.temporaryDirectory("tuf-on-ci-targets")
        let bytes = try await client.downloadTarget(info, to: directory)
        #expect(Digest.hex(Digest.sha256(bytes)) == Self.policySHA256)
        #expect(bytes.count == 278)
        #expect(client.cachedTarget(info, in: directory) == bytes)
        let policy = try TrustPolicyFile(data: bytes)
        #expect(policy.hosts.map(\.pattern.description) == ["api.example.com"])

        // The consistent-snapshot names tuf-on-ci publishes, in the order the client asks for them.
        let requests = Self.served.server.requests().filter { $0.hasPrefix("/genuine/") }
        #expect(requests == [
            "/genuine/metadata/2.root.json", "/genuine/metadata/3.root.json", "/genuine/metadata/timestamp.json",
            "/genuine/metadata/2.snapshot.json", "/genuine/metadata/2.targets.json",
            "/genuine/targets/\(Self.policySHA256).policy.json",
        ])
    }

    @Test func anAlteredSignatureInThePublishedRepositoryIsRefused() async throws {
        // The targets role's PIV signature: refresh stops before any target is trusted.
        let targets = try updater("targets-signature", at: Self.published + 3_600)
        let error = await #expect(throws: TUFError.self) { try await targets.refresh() }
        #expect(error?.code == .unsignedMetadata)
        #expect(await targets.trusted.targets["targets"] == nil)
        // The new root key's signature on root 2 (a rotation must be signed by both roots).
        let root = try updater("root-signature", at: Self.published + 3_600)
        let rootError = await #expect(throws: TUFError.self) { try await root.refresh() }
        #expect(rootError?.code == .unsignedMetadata)
        #expect(await root.trusted.root.signed.version == 1)
    }

    @Test func anAlteredTargetIsRefusedAndNotStored() async throws {
        let client = try updater("target-bytes", at: Self.published + 3_600)
        let info = try #require(try await client.targetInfo("policy.json"))
        let directory = TUFTooling.temporaryDirectory("tuf-on-ci-targets")
        let error = await #expect(throws: TUFError.self) { try await client.downloadTarget(info, to: directory) }
        #expect(error?.code == .lengthOrHashMismatch)
        #expect(client.cachedTarget(info, in: directory) == nil)
    }

    @Test func thePublishedTimestampExpiresTwoDaysAfterPublication() async throws {
        let late = try updater("expiry", at: Self.timestampExpires + 1)
        let error = await #expect(throws: TUFError.self) { try await late.refresh() }
        #expect(error?.code == .expired)
        try await updater("expiry", at: Self.timestampExpires - 1).refresh()
    }
}
