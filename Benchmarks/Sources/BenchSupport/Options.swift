import Foundation
import Synchronization

/// The command line every Swift client takes, the same as `libcurl-bench`'s:
///
///     CLIENT MODE URL [--cacert FILE] [--seconds S] [--warmup S] [--inflight N]
///                     [--connections N] [--http2] [--counts A,B] [--policy NAME] [--pin PIN]...
///                     [--requests N]
///
/// `MODE` is `handshake`, `keepalive`, `multi` or `memory`. Results go to standard output as
/// `rate R` (requests/s) and `cpu_us C` (process CPU µs per request), or `rss_kb_after_N KB`
/// lines; the driver script reads nothing else.
public struct Options: Sendable {
    public var mode = ""
    public var url = ""
    /// The anchors file; nil means the client's default (the system bundle).
    public var caCertificates: String?
    public var seconds = 2.0
    public var warmup = 0.3
    public var inFlight = 64
    public var connections = 64
    public var http2 = false
    public var counts = [10_000, 50_000]
    /// Profiling: exactly this many requests, untimed (`--requests N`): sequential, or
    /// `inFlight` at a time in the multi mode.
    public var requests: Int?
    public var policy = "default"
    public var pins: [String] = []
    /// Anything else, `--name value`, for client-specific settings.
    public var extra: [String: String] = [:]

    public init(arguments: [String] = Array(CommandLine.arguments.dropFirst())) {
        var rest = arguments[...]
        func next() -> String? { rest.popFirst() }
        mode = next() ?? ""
        url = next() ?? ""
        while let option = next() {
            if option == "--http2" {
                http2 = true
                continue
            }
            guard let value = next() else { Self.fail("option \(option) needs a value") }
            switch option {
            case "--cacert": caCertificates = value
            case "--seconds": seconds = Double(value) ?? seconds
            case "--warmup": warmup = Double(value) ?? warmup
            case "--inflight": inFlight = Int(value) ?? inFlight
            case "--connections": connections = Int(value) ?? connections
            case "--counts": counts = value.split(separator: ",").compactMap { Int($0) }
            case "--requests": requests = Int(value)
            case "--policy": policy = value
            case "--pin": pins.append(value)
            default: extra[String(option.drop { $0 == "-" })] = value
            }
        }
        guard !mode.isEmpty, !url.isEmpty else { Self.fail("usage: MODE URL [options]") }
    }

    public static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("\(CommandLine.arguments.first.map { ($0 as NSString).lastPathComponent } ?? "bench"): \(message)\n".utf8))
        exit(1)
    }
}

/// Runs the mode `options` names with `request` as the unit of work, and prints the result.
public func runWorkload(_ options: Options, _ request: @escaping @Sendable () async throws -> Void) async throws {
    if let requests = options.requests {
        if options.mode == "multi" {
            // Profiling the multi workload: exactly `requests` requests, `inFlight` at a time,
            // sent by `inFlight` closed loops as in the timed workload (`Workload.concurrent`),
            // not a task per request: the count then holds the client's work, not task creation.
            let remaining = RequestBudget(requests)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<min(options.inFlight, requests) {
                    group.addTask {
                        while remaining.take() { try await request() }
                    }
                }
                try await group.waitForAll()
            }
        } else {
            for _ in 0..<requests { try await request() }
        }
        print("requests \(requests)")
        return
    }
    switch options.mode {
    case "handshake", "keepalive", "multi":
        let inFlight = options.mode == "multi" ? options.inFlight : 1
        let result = try await Workload.concurrent(inFlight: inFlight, seconds: options.seconds, warmup: options.warmup, request)
        print("rate \(String(format: "%.1f", result.rate))")
        print("cpu_us \(String(format: "%.2f", result.cpuMicrosecondsPerRequest))")
    case "memory":
        for sample in try await Workload.memory(counts: options.counts, request) {
            print("peak_rss_kb_after_\(sample.count) \(sample.peakKiB)")
            print("rss_kb_after_\(sample.count) \(sample.currentKiB)")
        }
    default:
        Options.fail("unknown mode \(options.mode)")
    }
}

/// Runs `body` on Swift's global executor while the main thread waits on a semaphore, then
/// exits: 0, or 1 after printing the error.
///
/// Not an `async` top level on purpose: that parks the main thread in `dispatch_main`, and
/// valgrind 3.19 (the profiler, see docs/PERFORMANCE.md) crashes as soon as a continuation is
/// resumed from another thread in such a process.
public func runBlocking(_ body: @escaping @Sendable () async throws -> Void) -> Never {
    let done = DispatchSemaphore(value: 0)
    let failure = FailureBox()
    Task {
        do { try await body() } catch { failure.error = "\(error)" }
        done.signal()
    }
    done.wait()
    if let error = failure.error { Options.fail(error) }
    exit(0)
}

/// Written by the task before it signals, read by the main thread after: the semaphore orders them.
private final class FailureBox: @unchecked Sendable {
    var error: String?
}

/// The requests left to send, taken one at a time by concurrent loops.
final class RequestBudget: Sendable {
    private let remaining: Atomic<Int>
    init(_ count: Int) { remaining = Atomic(count) }
    /// True when one request was taken (the count was positive).
    func take() -> Bool { remaining.subtract(1, ordering: .relaxed).newValue >= 0 }
}
