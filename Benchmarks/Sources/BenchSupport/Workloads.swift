import Foundation

/// The workloads every Swift client runs, so that each is driven the same way: the client
/// supplies one request, the workload decides how many, how concurrently and for how long.
///
/// Every loop is bounded: it stops at its deadline (or count) by itself.
public enum Workload {
    /// What a measured phase gives: completions per second, and this process's CPU time
    /// (user + system, every thread) per completed request.
    public struct Measurement: Sendable {
        public var rate: Double
        public var cpuMicrosecondsPerRequest: Double
    }

    /// Requests per second with `inFlight` requests outstanding at all times (closed loop):
    /// each of `inFlight` tasks sends its next request as soon as the previous one completes.
    /// A warm-up phase of `warmup` seconds runs first, unmeasured; then only completions inside
    /// the measured window count for the rate, and the CPU time of the whole phase is divided by
    /// every completion of it.
    public static func concurrent(
        inFlight: Int, seconds: Double, warmup: Double, _ request: @escaping @Sendable () async throws -> Void
    ) async throws -> Measurement {
        if warmup > 0 { _ = try await phase(inFlight: inFlight, seconds: warmup, request) }
        let cpuBefore = ProcessStatus.cpuMicroseconds()
        let (inWindow, all) = try await phase(inFlight: inFlight, seconds: seconds, request)
        let cpu = ProcessStatus.cpuMicroseconds() - cpuBefore
        return Measurement(rate: Double(inWindow) / seconds, cpuMicrosecondsPerRequest: all > 0 ? cpu / Double(all) : 0)
    }

    /// Runs `inFlight` closed loops until `seconds` have passed; returns the completions inside
    /// the window and all completions (the last requests of each loop end after it).
    private static func phase(
        inFlight: Int, seconds: Double, _ request: @escaping @Sendable () async throws -> Void
    ) async throws -> (inWindow: Int, all: Int) {
        let clock = ContinuousClock()
        let end = clock.now + .milliseconds(Int(seconds * 1000))
        return try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for _ in 0..<inFlight {
                group.addTask {
                    var inWindow = 0
                    var all = 0
                    while clock.now < end {
                        try await request()
                        all += 1
                        if clock.now < end { inWindow += 1 }
                    }
                    return (inWindow, all)
                }
            }
            return try await group.reduce((0, 0)) { ($0.0 + $1.0, $0.1 + $1.1) }
        }
    }

    /// Sends `counts.last` requests one at a time and reports the resident set after each
    /// count in `counts`: peak (`VmHWM`) and current (`VmRSS`), in KiB.
    public static func memory(
        counts: [Int], _ request: @Sendable () async throws -> Void
    ) async throws -> [(count: Int, peakKiB: Int, currentKiB: Int)] {
        guard let last = counts.max(), last > 0 else { Options.fail("memory needs --counts A,B") }
        var results: [(count: Int, peakKiB: Int, currentKiB: Int)] = []
        let checkpoints = Set(counts)
        for index in 1...last {
            try await request()
            if checkpoints.contains(index) {
                results.append((index, ProcessStatus.kibibytes("VmHWM"), ProcessStatus.kibibytes("VmRSS")))
            }
        }
        return results
    }
}

/// Reads `/proc/self/status` and `getrusage`.
public enum ProcessStatus {
    /// User + system CPU time of this process (all threads) so far, in microseconds.
    public static func cpuMicroseconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
    }

    /// A `kB` field of `/proc/self/status` (`VmRSS`, `VmHWM`), or -1.
    public static func kibibytes(_ field: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") ?? -1
        }
        return -1
    }
}
