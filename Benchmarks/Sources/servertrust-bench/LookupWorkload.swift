import BenchFixtures
import BenchSupport
import Foundation
import ServerTrust

/// Manager lookups among 10, 1,000 and 10,000 patterns, interleaved: every round times a batch
/// of lookups on each manager in turn, so the three see the same machine load, and the ratio
/// is the median over rounds of the per-round ratio. Prints `lookup_ns_KIND_N` (median ns per
/// lookup) and `lookup_ratio_KIND_10000_vs_10`, for KIND `exact` and `deep` (a `**.` match
/// three labels under its suffix).
enum LookupWorkload {
    static func run(_ options: Options) throws {
        let sizes = [10, 1_000, 10_000]
        let managers = try sizes.map { try ManagerFixtures.manager(patterns: $0) }
        let rounds = max(5, Int(options.seconds * 20))
        let batch = 2_000
        for (kind, host) in [("exact", ManagerFixtures.exactHost), ("deep", ManagerFixtures.deepHost)] {
            var samples = [[Double]](repeating: [], count: sizes.count)
            for round in 0..<rounds {
                for offset in 0..<sizes.count {
                    let index = (offset + round) % sizes.count
                    let start = ContinuousClock.now
                    for _ in 0..<batch {
                        guard try managers[index].resolve(host: host).pattern != nil else { Options.fail("\(host) matched nothing") }
                    }
                    let elapsed = ContinuousClock.now - start
                    samples[index].append(
                        (Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9) / Double(batch))
                }
            }
            for (index, size) in sizes.enumerated() {
                print("lookup_ns_\(kind)_\(size) \(String(format: "%.1f", median(samples[index])))")
            }
            let ratios = zip(samples[2], samples[0]).map { $0 / $1 }
            print("lookup_ratio_\(kind)_10000_vs_10 \(String(format: "%.3f", median(ratios)))")
        }
    }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
}
