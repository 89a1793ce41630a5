import Foundation
import ServerTrustTUF
import ServerTrustTestSupport
import Testing

/// The target search against python-tuf 7.0.1's `_preorder_depth_first_walk`, run on the same
/// repository as the oracle.
@Suite struct DelegationWalkTests {
    /// One role name, "shared", delegated by A and by B with different keys; only A's key signed
    /// it. python-tuf 7 (since python-tuf#1683; the specification's "if this role has been
    /// visited before, then skip this role") marks a role visited by its name: reached again
    /// through B, shared is skipped, not loaded again for B's keys, and the search goes on to Z,
    /// which lists wanted.txt. A walk that marked (role, delegator) pairs would load shared for
    /// B and refuse it (`unsignedMetadata`).
    @Test func aRoleReachedThroughASecondDelegatorIsSkippedByNameAsInPythonTUF() async throws {
        let directory = "\(TUFTooling.repositories)/twodelegators"
        let python = Child.run(PackageFiles.python, [TUFTooling.repositoryScript, "find", directory, "0", "wanted.txt"])
        #expect(python.status == 0, "\(python)")
        let inZ = "a1e7980bcc9c63e40e62b6e6f4868e1821461d5e53450133e7769e1f58d36c55"  // sha256 of "in Z\n"
        #expect(python.output.contains(#"{"sha256": "\#(inZ)"}"#), "\(python)")

        let updater = try TUFTooling.updater("twodelegators")
        let target = try #require(try await updater.targetInfo("wanted.txt"))
        #expect(target.hashes.first { $0.algorithm == "sha256" }?.digest == inZ)
        #expect(await updater.trusted.contains("shared", delegator: "A"))
        #expect(await updater.trusted.contains("shared", delegator: "B") == false)
        #expect(await updater.trusted.contains("Z", delegator: "B"))
    }
}
