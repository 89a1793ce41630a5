import Foundation
import ServerTrustTestSupport
import Testing

/// The client against python-tuf repositories served on loopback (tuf_repo.py): the happy path
/// and one test per attack, each asserting the kind of failure `servertrust updates` reports.
@Suite(.serialized) struct AttackTests {
    @Test func happyPathRefreshesDownloadsThroughDelegationsAndCachesTargets() throws {
        let client = UpdatesClient("happy")
        let refresh = client.refresh(state: 0)
        #expect(refresh.status == 0, "\(refresh)")
        let download = client.download(state: 0, ["file.txt", "sub/deep.txt"])
        #expect(download.status == 0, "\(download)")
        #expect(try String(contentsOfFile: client.targetDirectory + "/file.txt", encoding: .utf8) == "hello, world\n")
        #expect(try String(contentsOfFile: client.targetDirectory + "/sub%2Fdeep.txt", encoding: .utf8) == "delegated target\n")
        // Only the delegation that matches is fetched: "unused" (other/*) never is.
        #expect(!client.server.requests().contains { $0.contains("/happy/0/metadata/1.unused.json") })
        // A second download of an unchanged target uses the cached copy.
        let before = client.server.requests().filter { $0.contains("/happy/0/targets/") }.count
        let again = client.download(state: 0, ["file.txt"])
        #expect(again.status == 0 && again.output.contains("cached copy is current"), "\(again)")
        #expect(client.server.requests().filter { $0.contains("/happy/0/targets/") }.count == before)
        // The changed target is fetched again into the same file; files are mode 0600.
        #expect(client.download(state: 1, ["file.txt"]).status == 0)
        #expect(try String(contentsOfFile: client.targetDirectory + "/file.txt", encoding: .utf8) == "hello, world, version 2\n")
        let attributes = try FileManager.default.attributesOfItem(atPath: client.metadataDirectory + "/timestamp.json")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        expectFailure(client.download(state: 1, ["absent.txt"]), "targetNotFound")
    }

    @Test func succinctHashBinDelegationsResolveEveryTarget() {
        let client = UpdatesClient("hashbins")
        let result = client.download(state: 0, (0..<20).map { "packages/p\($0).json" })
        #expect(result.status == 0, "\(result)")
        #expect((try? String(contentsOfFile: client.targetDirectory + "/packages%2Fp7.json", encoding: .utf8)) == "package 7\n")
    }

    @Test func rootRotatesThroughEveryVersionEvenWhenTheOldRootKeyIsRemoved() {
        let client = UpdatesClient("rotation")
        #expect(client.refresh(state: 0).status == 0)
        let rotated = client.refresh(state: 1)
        #expect(rotated.status == 0, "\(rotated)")
        #expect(client.show().contains("root: version 3"))
        // Version 4 must meet both thresholds; each state fails exactly one, so neither check
        // hides behind the other. State 2: one signature of the two the trusted v3 requires
        // (v4's own threshold is met).
        expectFailure(client.refresh(state: 2), "unsignedMetadata")
        #expect(client.show().contains("root: version 3"))
        // State 3: both v3 signatures, but none by the key v4 itself names.
        expectFailure(client.refresh(state: 3), "unsignedMetadata")
        #expect(client.show().contains("root: version 3"))
    }

    @Test func aTimestampBelowItsThresholdIsRefused() {
        let client = UpdatesClient("threshold")
        expectFailure(client.refresh(state: 0), "unsignedMetadata")
        #expect(client.refresh(state: 1).status == 0)
    }

    @Test func rollbackOfEachRoleIsRefused() {
        let client = UpdatesClient("rollback")
        #expect(client.refresh(state: 0).status == 0)
        expectFailure(client.refresh(state: 1), "rollback")  // timestamp 2 → 1
        expectFailure(client.refresh(state: 2), "rollback")  // snapshot 2 → 1
        expectFailure(client.refresh(state: 3), "rollback")  // targets 2 → 1
        let fresh = UpdatesClient("rollback")
        expectFailure(fresh.refresh(state: 4), "rollback")  // 2.root.json holds root version 1
        // Timestamp 3 of state 3 is valid and kept (as python-tuf does); the snapshot that rolls
        // targets back never is, so the stored snapshot 2 no longer matches and is not trusted.
        let shown = client.show()
        #expect(shown.contains("timestamp: version 3") && shown.contains("snapshot: versionMismatch"), "\(shown)")
    }

    @Test func freezeAttacksWithExpiredTimestampSnapshotOrTargetsAreRefused() {
        // States 1–3: an expired timestamp, snapshot, targets; 4: an expired final root.
        for state in 1...4 {
            let client = UpdatesClient("freeze")
            #expect(client.refresh(state: 0).status == 0)
            expectFailure(client.refresh(state: state), "expired")
        }
    }

    @Test func mixAndMatchOfAnotherTargetsVersionIsRefused() {
        let client = UpdatesClient("mixmatch")
        #expect(client.refresh(state: 0).status == 0)
        expectFailure(client.refresh(state: 1), "versionMismatch")
    }

    @Test func aTargetWithTheWrongHashOrLengthIsRefusedAndNotStored() {
        let client = UpdatesClient("happy")
        expectFailure(client.download(state: 2, ["file.txt"]), "lengthOrHashMismatch")
        expectFailure(client.download(state: 3, ["file.txt"]), "downloadTooLarge")
        #expect(!FileManager.default.fileExists(atPath: client.targetDirectory + "/file.txt"))
    }

    @Test func endlessDataIsCutAtTheLengthLimit() {
        let client = UpdatesClient("happy")
        // Not timed: an endless body that were not cut would run until the child's kill
        // deadline, and the failure would not be downloadTooLarge.
        expectFailure(client.refresh(state: 4), "downloadTooLarge")
    }

    @Test func slowRetrievalIsCutAtTheTimeBudget() {
        let client = UpdatesClient("happy")
        // Not timed: the code says the time budget, not the child's kill deadline, ended it.
        expectFailure(client.refresh(state: 5, extra: ["--download-timeout", "2"]), "slowRetrieval")
    }

    @Test func aMaliciousMirrorsMetadataAndTargetsAreRefused() {
        let client = UpdatesClient("mirror")
        #expect(client.download(state: 0, ["file.txt"]).status == 0)
        expectFailure(client.download(state: 1, ["file.txt"]), "unsignedMetadata")
        #expect((try? String(contentsOfFile: client.targetDirectory + "/file.txt", encoding: .utf8)) == "genuine\n")
        // Altered targets metadata under its genuine signatures (the trusted key IDs, signatures
        // that no longer verify), to a client that has not seen the genuine version yet.
        let fresh = UpdatesClient("mirror")
        expectFailure(fresh.download(state: 2, ["file.txt"]), "unsignedMetadata")
        #expect(!FileManager.default.fileExists(atPath: fresh.targetDirectory + "/file.txt"))
    }

    @Test func plainHTTPIsRefusedForAnyHostButLoopback() {
        let client = UpdatesClient("happy")
        for url in ["http://example.com/metadata", "http://127.0.0.1.example.com/metadata", "http://user@127.0.0.1/metadata", "ftp://127.0.0.1/metadata"] {
            let result = Child.run(PackageFiles.servertrustBinary, ["updates", "--metadata-dir", client.metadataDirectory, "--metadata-url", url, "refresh"])
            expectFailure(result, "invalidURL")
        }
    }

    /// The client protocol wants exit status exactly 1 for any failure: an unknown option, a
    /// missing `--metadata-dir` or action, not only a failed update (ArgumentParser's parse
    /// errors exit 2 elsewhere in the CLI).
    @Test func anUnparsableCommandLineExitsWithStatusOne() {
        for arguments in [["updates", "--bogus"], ["updates", "refresh"], ["updates", "--metadata-dir", "/tmp/none", "frobnicate"]] {
            let result = Child.run(PackageFiles.servertrustBinary, arguments)
            #expect(result.status == 1, "\(arguments): \(result)")
        }
        // The rest of the CLI keeps its usage status.
        #expect(Child.run(PackageFiles.servertrustBinary, ["fetch", "--bogus"]).status == 2)
    }
}
