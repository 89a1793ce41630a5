import Foundation
@testable import ServerTrustTUF
import ServerTrustTestSupport
import Testing

/// The attacks other TUF clients published advisories for in 2026 (go-tuf), each tried on this
/// client with a repository python-tuf signed (`tuf_repo.py`, scenarios `advisory_*`) and
/// refused with a typed error. Duplicate keys counted twice are `DistinctKeyThresholdTests`; a
/// delegation reachable by two paths is `DelegationWalkTests`.
@Suite struct AdvisoryTests {
    /// A delegation with a threshold of 0, whose role carries no signature: refused as
    /// malformed before any signature is counted, so zero valid signatures never pass.
    @Test func aDelegationWithAThresholdOfZeroIsRefused() async throws {
        let updater = try TUFTooling.updater("advisory_threshold0")
        let error = await #expect(throws: TUFError.self) { try await updater.targetInfo("zero.txt") }
        #expect(error?.code == .malformedMetadata, "\(String(describing: error))")
        #expect(error?.description.contains("threshold is below 1") == true, "\(String(describing: error))")
    }

    /// A new root, properly signed, that sets a top-level role's threshold to 0: refused, and
    /// the trusted root stays version 1.
    @Test func aRootWithARoleThresholdOfZeroIsRefused() async throws {
        let store = TUFTooling.temporaryDirectory("store")
        let updater = try TUFTooling.updater("advisory_threshold0", state: 1, store: store)
        let error = await #expect(throws: TUFError.self) { try await updater.refresh() }
        #expect(error?.code == .malformedMetadata, "\(String(describing: error))")
        #expect(error?.description.contains("threshold is below 1") == true, "\(String(describing: error))")
        let stored = try #require(try MetadataStore(directory: store).read("root.json"))
        #expect(String(decoding: stored, as: UTF8.self).contains("\"version\":1"), "the refused root was stored")
    }

    /// A role named "../../escape": fetched and stored under its percent-encoded name inside the
    /// store, never as a path: nothing is written outside the metadata folder.
    @Test func aRoleNameNeverEscapesTheMetadataFolder() async throws {
        let parent = TUFTooling.temporaryDirectory("traversal")
        let store = parent + "/a/b/store"
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
        let updater = try TUFTooling.updater("advisory_traversal", store: store)
        let target = try #require(try await updater.targetInfo("escape.txt"))
        #expect(target.length == 9)
        #expect(FileManager.default.fileExists(atPath: store + "/..%2F..%2Fescape.json"))
        let everything = try #require(FileManager.default.subpathsOfDirectory(atPath: parent) as [String]?)
        #expect(everything.filter { $0.hasSuffix("escape.json") } == ["a/b/store/..%2F..%2Fescape.json"], "\(everything)")
    }

    /// Empty hashes — a target's, or the snapshot's in the timestamp — leave nothing to check
    /// the bytes against: refused as malformed.
    @Test func emptyHashesAreRefused() async throws {
        let targets = try TUFTooling.updater("advisory_emptyhashes")
        let targetError = await #expect(throws: TUFError.self) { try await targets.targetInfo("empty.txt") }
        #expect(targetError?.code == .malformedMetadata, "\(String(describing: targetError))")
        #expect(targetError?.description.contains("hashes is not a non-empty object") == true, "\(String(describing: targetError))")
        let snapshot = try TUFTooling.updater("advisory_emptyhashes", state: 1)
        let snapshotError = await #expect(throws: TUFError.self) { try await snapshot.refresh() }
        #expect(snapshotError?.code == .malformedMetadata, "\(String(describing: snapshotError))")
        #expect(snapshotError?.description.contains("hashes is not a non-empty object") == true, "\(String(describing: snapshotError))")
    }

    /// An ed25519 key of 31 or 33 bytes is a key this client cannot use: it never verifies a
    /// signature, so it counts towards no threshold; 32 bytes is usable.
    @Test(arguments: [31, 32, 33])
    func anEd25519KeyOfTheWrongLengthNeverVerifies(length: Int) throws {
        let hex = String(repeating: "ab", count: length)
        let json = #"{"keytype": "ed25519", "scheme": "ed25519", "keyval": {"public": "\#(hex)"}}"#
        let key = try TUFKey(try JSONParser().parse(Array(json.utf8)), "key")
        #expect(key.isSupported == (length == 32))
        #expect(!key.verifies(signatureHex: String(repeating: "00", count: 64), payload: [1, 2, 3]))
    }
}
