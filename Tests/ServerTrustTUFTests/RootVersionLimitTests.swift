import Foundation
import ServerTrustTUF
import ServerTrustTestSupport
import Testing

/// Root versions at the top of 64 bits: the next version of a root is computed without
/// overflow, and a root at `Int64.max`, which no root can follow, is refused with an error.
@Suite struct RootVersionLimitTests {
    static func expectLargest(_ error: TUFError?, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(error?.code == .malformedMetadata, "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(
            error?.reason.hasPrefix("root version 9223372036854775807 is the largest a version can be") == true,
            "\(String(describing: error))", sourceLocation: sourceLocation)
    }

    /// The trusted root is version 2^63 - 2; the repository publishes 2^63 - 1. The rotation to
    /// it is verified and stored, and the next rotation, which cannot exist, is refused: in the
    /// same refresh and in every later one.
    @Test func aRootAtTheLargestVersionIsRefusedInsteadOfOverflowing() async throws {
        let directory = TUFTooling.temporaryDirectory("maxversion")
        let updater = try TUFTooling.updater("maxversion", store: directory)
        #expect(await updater.trusted.root.signed.version == .max - 1)
        Self.expectLargest(await #expect(throws: TUFError.self) { try await updater.refresh() })
        #expect(await updater.trusted.root.signed.version == .max)

        let restarted = try TUFTooling.updater("maxversion", store: directory)
        Self.expectLargest(await #expect(throws: TUFError.self) { try await restarted.refresh() })

        let largest = try TUFTooling.file("maxversion/0/metadata/9223372036854775807.root.json")
        var trusted = try TrustedMetadataSet(rootBytes: largest, referenceTime: TUFFixtures.now)
        Self.expectLargest(#expect(throws: TUFError.self) { try trusted.updateRoot(largest) })
    }
}
