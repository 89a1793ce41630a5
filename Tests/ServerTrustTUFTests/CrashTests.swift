import Foundation
import Testing

/// The store survives a crash at any point of an update: `servertrust updates refresh` is
/// killed (SIGKILL) at a random moment 200 times, each time against a newer repository state;
/// every time, the next start verifies what it finds and ends consistent.
///
/// Under ThreadSanitizer (`scripts/sanitizers.sh tsan` sets `TSAN_OPTIONS`) it kills 50 times:
/// every one of its 600 processes starts instrumented, and with 200 kills the TUF suite took
/// 465 s there (118 s with 50; about 35 s in the normal run). The property is the store's,
/// which the normal and AddressSanitizer runs check with all 200.
@Suite(.serialized) struct CrashTests {
    static let kills = ProcessInfo.processInfo.environment["TSAN_OPTIONS"] == nil ? 200 : 50

    @Test func killingRefreshAtRandomPointsNeverLeavesATornTrustedStore() throws {
        let client = UpdatesClient("crash")
        var generator = SystemRandomNumberGenerator()
        var killedMidUpdate = 0
        for state in 1...Self.kills {
            let output = NSTemporaryDirectory() + "servertrust-tuf-crash-\(UUID().uuidString)"
            defer { unlink(output) }
            let pid = Child.spawn(
                TUFFixtures.binary(),
                ["updates", "--metadata-dir", client.metadataDirectory, "--metadata-url", client.server.url("crash", state, "metadata"), "refresh"],
                outputFile: output)
            usleep(UInt32.random(in: 0..<40_000, using: &generator))
            if kill(pid, SIGKILL) == 0 { killedMidUpdate += 1 }
            _ = Child.wait(pid)
            // The next start: the stored files are loaded through the same checks as a
            // download; whatever the kill left, the refresh ends at this state, consistent.
            let next = client.refresh(state: state)
            #expect(next.status == 0, "state \(state): \(next)")
            let shown = client.show()
            #expect(shown.contains("timestamp: version \(state + 1)") && shown.contains("snapshot: version \(state + 1)")
                && shown.contains("targets: version \(state + 1)"), "state \(state): \(shown)")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: client.metadataDirectory).filter { $0.contains(".tmp-") }
            #expect(leftovers.isEmpty, "\(leftovers)")
        }
        #expect(killedMidUpdate > 0)
    }
}
