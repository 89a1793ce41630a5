import BenchFixtures
import Benchmark
import Foundation
import ServerTrust

// Micro-benchmarks of the pieces a handshake or a request pays for: SPKI hashing, a composite
// evaluation, and the trust manager's host lookup among 10, 1,000 and 10,000 patterns (its cost
// must depend on the host, not on the number of patterns).
//
// Run with `swift package benchmark --target ServerTrustMicro` (run.sh does).
// Fixtures: the committed sample chain in Certificates/, judged at a fixed time inside its validity.

let benchmarks: @Sendable () -> Void = {
    let fixtures = Fixtures.load()
    let fast = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal], timeUnits: .nanoseconds,
        maxDuration: .seconds(1), maxIterations: 1_000_000)
    let slow = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal], timeUnits: .microseconds,
        maxDuration: .seconds(1), maxIterations: 100_000)

    Benchmark("SPKI SHA-256 pin of the leaf", configuration: fast) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(fixtures.leaf.spkiPin) }
    }

    Benchmark("Composite evaluation (default + SPKI pins), new trust", configuration: slow) { benchmark in
        for _ in benchmark.scaledIterations {
            let trust = PeerTrust(presentedChain: fixtures.chain, anchors: fixtures.anchors, validationTime: fixtures.time)
            try fixtures.composite.evaluate(trust, forHost: fixtures.host)
        }
    }

    // The evaluators' own work, without path validation (done once, here, and cached by the trust).
    let validated = PeerTrust(presentedChain: fixtures.chain, anchors: fixtures.anchors, validationTime: fixtures.time)
    _ = try? validated.validatedChain()
    Benchmark("Composite evaluation (default + SPKI pins), chain already validated", configuration: fast) { benchmark in
        for _ in benchmark.scaledIterations { try fixtures.composite.evaluate(validated, forHost: fixtures.host) }
    }

    for count in [10, 1_000, 10_000] {
        let manager: ServerTrustManager
        do {
            manager = try ManagerFixtures.manager(patterns: count)
        } catch {
            fatalError("ServerTrustMicro: \(error)")
        }
        Benchmark("Manager lookup, \(count) patterns, **. match 3 labels deep", configuration: fast) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try manager.resolve(host: ManagerFixtures.deepHost)) }
        }
        Benchmark("Manager lookup, \(count) patterns, exact match", configuration: fast) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try manager.resolve(host: ManagerFixtures.exactHost)) }
        }
    }
}

struct Fixtures: @unchecked Sendable {
    let chain: [Certificate]
    let leaf: Certificate
    let anchors: TrustAnchors
    let composite: CompositeTrustEvaluator
    let host = "demo.servertrust.test"
    let time: Date

    static func load() -> Fixtures {
        // Benchmarks/Benchmarks/ServerTrustMicro/ServerTrustMicro.swift → the repository root.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Certificates")
        do {
            let chain = try Certificate.certificates(contentsOfFile: root.appendingPathComponent("sample-chain.pem.txt").path)
            let anchors = try TrustAnchors(contentsOfFile: root.appendingPathComponent("sample-root.pem").path)
            let backup = try Certificate.certificates(contentsOfFile: root.appendingPathComponent("sample-backup.pem").path)
            let composite = try CompositeTrustEvaluator([
                DefaultTrustEvaluator(),
                try PinnedKeyHashesTrustEvaluator(pins: [chain[0].spkiPin] + backup.map(\.spkiPin)),
            ])
            return Fixtures(
                chain: chain, leaf: chain[0], anchors: anchors, composite: composite,
                time: chain[0].notValidBefore.addingTimeInterval(86_400))
        } catch {
            fatalError("ServerTrustMicro: cannot load the sample certificates in \(root.path): \(error)")
        }
    }
}
