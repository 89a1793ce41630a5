import Foundation
import ServerTrustTestSupport
import Testing
import ServerTrustTUF

/// The library API with an injected fetcher (files of a generated repository state, no HTTP)
/// and an injected clock.
@Suite struct UpdaterLibraryTests {
    func updater(state: Int, clock: Int64, store directory: String) throws -> Updater {
        let store = try MetadataStore(directory: directory)
        if store.read("root.json") == nil {
            let root = try #require(FileManager.default.contents(atPath: "\(TUFTooling.repositories)/happy/root.json"))
            try store.write("root.json", Array(root))
        }
        return try Updater(
            store: store, metadataBaseURL: "repo://\(state)/metadata", targetBaseURL: "repo://\(state)/targets",
            fetcher: FileFetcher(base: "\(TUFTooling.repositories)/happy"), clock: FixedClock(seconds: clock))
    }

    @Test func expiryIsCheckedAgainstTheInjectedClock() async throws {
        let now = Int64(Date().timeIntervalSince1970)
        let late = TUFTooling.temporaryDirectory("clock")
        let error = await #expect(throws: TUFError.self) { try await updater(state: 0, clock: now + 400 * 86_400, store: late).refresh() }
        #expect(error?.code == .expired)
        let onTime = TUFTooling.temporaryDirectory("clock")
        try await updater(state: 0, clock: now, store: onTime).refresh()
    }

    @Test func targetsAreFoundThroughDelegationsAndVerifiedBeforeTheyAreStored() async throws {
        let now = Int64(Date().timeIntervalSince1970)
        let directory = TUFTooling.temporaryDirectory("lib")
        let targets = TUFTooling.temporaryDirectory("lib-targets")
        let client = try updater(state: 0, clock: now, store: directory)
        let info = try #require(try await client.targetInfo("sub/deep.txt"))
        #expect(client.cachedTarget(info, in: targets) == nil)
        #expect(try await client.downloadTarget(info, to: targets) == Array("delegated target\n".utf8))
        #expect(client.cachedTarget(info, in: targets) == Array("delegated target\n".utf8))
        #expect(try await client.targetInfo("other/absent.txt") == nil)
        let tampered = try updater(state: 2, clock: now, store: TUFTooling.temporaryDirectory("lib"))
        let file = try #require(try await tampered.targetInfo("file.txt"))
        let error = await #expect(throws: TUFError.self) { try await tampered.downloadTarget(file, to: targets) }
        #expect(error?.code == .lengthOrHashMismatch)
        #expect(!FileManager.default.fileExists(atPath: targets + "/file.txt"))
    }

    @Test func storedFilesAreMode0600AndTheLockIsExclusive() throws {
        let directory = TUFTooling.temporaryDirectory("store")
        let store = try MetadataStore(directory: directory)
        try store.write("timestamp.json", Array("{}".utf8))
        let mode = try FileManager.default.attributesOfItem(atPath: directory + "/timestamp.json")[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let held = try store.lock()
        let fd = open(directory + "/.lock", O_RDWR)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX | LOCK_NB) != 0)
        withExtendedLifetime(held) {}
    }
}
