import Foundation
import ServerTrustTUF
import ServerTrustTestSupport
import Testing

/// A threshold counts key holders: one key listed under two key IDs and signed with once does
/// not meet a threshold of 2 (go-tuf's GHSA-4f8r-qqr9-fq8j; python-tuf 7 counts key IDs and
/// accepts these repositories) — for the roles root delegates, for root itself and for a
/// delegated targets role.
@Suite struct DistinctKeyThresholdTests {
    static func expectCountedOnce(_ error: TUFError?, role: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(error?.code == .unsignedMetadata, "\(String(describing: error))", sourceLocation: sourceLocation)
        let reason = error?.reason ?? ""
        #expect(reason.hasPrefix("\(role): 1 valid signature(s), threshold 2"), "\(reason)", sourceLocation: sourceLocation)
        #expect(reason.contains("is the same key as") && reason.contains("counted once"), "\(reason)", sourceLocation: sourceLocation)
    }

    /// The reproduction, and the same key's second copy written in upper-case hex: the
    /// key material decides, not its spelling.
    @Test(arguments: ["samekey_timestamp", "samekey_timestamp_uppercase"])
    func aTimestampSignedOnceMissesAThresholdOfTwoWhenTheRootListsItsKeyUnderTwoIDs(scenario: String) async throws {
        let updater = try TUFTooling.updater(scenario)
        let error = await #expect(throws: TUFError.self) { try await updater.refresh() }
        Self.expectCountedOnce(error, role: "timestamp")
        #expect(await updater.trusted.timestamp == nil)
    }

    @Test func theCLIRefusesTheTimestampToo() {
        expectFailure(UpdatesClient("samekey_timestamp").refresh(state: 0), "unsignedMetadata")
    }

    @Test func aNewRootSignedOnceByItsKeyMissesItsOwnThresholdOfTwoWhenItListsTheKeyUnderTwoIDs() async throws {
        let updater = try TUFTooling.updater("samekey_root")
        let error = await #expect(throws: TUFError.self) { try await updater.refresh() }
        Self.expectCountedOnce(error, role: "root")
        #expect(await updater.trusted.root.signed.version == 1)
    }

    @Test func aDelegatedRoleSignedOnceMissesAThresholdOfTwoWhenItsDelegatorListsItsKeyUnderTwoIDs() async throws {
        let updater = try TUFTooling.updater("samekey_delegated")
        try await updater.refresh()
        let error = await #expect(throws: TUFError.self) { try await updater.targetInfo("policy.json") }
        Self.expectCountedOnce(error, role: "policies")
        #expect(await updater.trusted.targets["policies"] == nil)
    }

    /// The control: two distinct keys meet a threshold of 2 for the timestamp, for root
    /// version 2 and for a delegated role.
    @Test func twoDistinctKeysMeetAThresholdOfTwo() async throws {
        let updater = try TUFTooling.updater("distinctkeys")
        try await updater.refresh()
        #expect(await updater.trusted.root.signed.version == 2)
        let target = try #require(try await updater.targetInfo("policy.json"))
        #expect(target.length == 10)
    }
}
