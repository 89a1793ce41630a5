import BenchSupport
import CCurlFloor
import Foundation
import Synchronization

// The least an async Swift request costs over libcurl 7.88 on this machine: no ServerTrust code.
//
//   async-floor keepalive URL --cacert F [--requests N] [--executor loop|global]
//   async-floor multi URL --cacert F [--inflight N] [--connections N] [--http2] [--requests N]
//               [--executor loop|global]
//
// What every async HTTP client over libcurl must do per request, and nothing more: parse the
// URL string into a Foundation `URL`, suspend the calling task in a cancellable checked
// continuation, hand the transfer to the thread that drives the multi handle, and resume the
// task with a response (status, the header lines and the body as received, the URL). libcurl runs with every option ServerTrust's
// session sets (CCurlFloor, after scripts/curl-floor.c's full set), and the calling task prefers
// the loop thread as its executor, as `Session.taskExecutor` does: no thread is crossed.
// With `--executor global` the task runs on Swift's global executor, as a caller of
// `Session.data(for:)` does by default: each request is handed to the loop thread (a queued
// command and `curl_multi_wakeup`) and its task resumed from there on a global-executor thread,
// the two cross-thread hand-offs any async client over a dedicated loop thread pays.
// `multi` is the floor of the 64-in-flight workloads: `--inflight` tasks (BenchSupport's closed
// loops) each keep one request in flight on an easy handle of its own, over HTTP/1.1 with at
// most `--connections` connections, or over one HTTP/2 connection with `--http2`, as
// servertrust-bench configures its session.
// Driven by the same BenchSupport workload as servertrust-bench. What it leaves out is what
// ServerTrust adds: the trust policy's lookup and the connection guard's check before each
// request, the response's header fields and trust report, metrics and tracing, retries and
// redirects. scripts/profile.sh counts it beside ServerTrust and raw libcurl.

/// The response: what any client returns. The header lines are kept as curl delivered them,
/// in one array, as ServerTrust's `ReceivedFields` keeps them until they are read.
struct Reply: Sendable {
    let status: Int
    let url: URL
    let head: [UInt8]
    let body: [UInt8]
}

struct FloorError: Error, CustomStringConvertible {
    let description: String
}

/// One libcurl multi handle driven by one thread, which is also the executor of the tasks that
/// prefer it: their jobs run between curl calls. Each transfer in flight holds one of the
/// engine's slots (an easy handle with its buffers) and the task waiting for it.
final class Loop: TaskExecutor, @unchecked Sendable {
    private let engine: OpaquePointer
    private let jobs = Mutex<[UnownedJob]>([])
    private let thread = Atomic<UInt>(0)
    /// Loop thread only: the transfer each slot carries and the task waiting for it; the free
    /// slots; how many are in flight.
    private var waiting: [(url: URL, continuation: CheckedContinuation<Reply, any Error>)?]
    private var free: [Int32]
    private var running = 0
    /// Transfers submitted from other threads (`--executor global`), started by the loop.
    private let submitted = Mutex<[(URL, CheckedContinuation<Reply, any Error>)]>([])

    /// - Parameter slots: the most transfers in flight at once (the workload's).
    init(cacert: String, slots: Int, http2: Bool, connections: Int) throws {
        guard let engine = curl_floor_new(cacert, Int32(slots), http2 ? 1 : 0, connections) else {
            throw FloorError(description: "curl_floor_new failed")
        }
        self.engine = engine
        waiting = Array(repeating: nil, count: slots)
        free = (0..<Int32(slots)).reversed()
        let thread = Thread { [self] in run() }
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        if thread.load(ordering: .relaxed) != UInt(pthread_self()) { curl_floor_wakeup(engine) }
    }

    /// On the loop thread (a job of a task preferring this executor): starts the transfer.
    func start(_ url: URL, _ continuation: CheckedContinuation<Reply, any Error>) {
        guard let slot = free.popLast() else {
            continuation.resume(throwing: FloorError(description: "more transfers in flight than slots"))
            return
        }
        guard curl_floor_start(engine, slot, url.absoluteString) == 0 else {
            free.append(slot)
            continuation.resume(throwing: FloorError(description: "curl_multi_add_handle failed"))
            return
        }
        waiting[Int(slot)] = (url, continuation)
        running += 1
    }

    /// From any other thread: queues the transfer and wakes the loop, which starts it.
    func submit(_ url: URL, _ continuation: CheckedContinuation<Reply, any Error>) {
        submitted.withLock { $0.append((url, continuation)) }
        curl_floor_wakeup(engine)
    }

    /// Whether anything waits for the loop thread: a job or a submitted transfer.
    private var hasWork: Bool { !jobs.withLock { $0.isEmpty } || !submitted.withLock { $0.isEmpty } }

    /// The bytes one of a slot's buffers holds.
    private func bytes(
        _ slot: Int32, _ buffer: (OpaquePointer?, Int32, UnsafeMutablePointer<Int>?) -> UnsafePointer<UInt8>?
    ) -> [UInt8] {
        var length = 0
        let start = buffer(engine, slot, &length)
        return length == 0 ? [] : Array(UnsafeBufferPointer(start: start, count: length))
    }

    private func run() {
        thread.store(UInt(pthread_self()), ordering: .relaxed)
        var taken: [UnownedJob] = []
        var started: [(URL, CheckedContinuation<Reply, any Error>)] = []
        while true {
            jobs.withLock { swap(&$0, &taken) }
            for job in taken { job.runSynchronously(on: asUnownedTaskExecutor()) }
            taken.removeAll(keepingCapacity: true)
            if !free.isEmpty {
                submitted.withLock { submitted in
                    let count = min(free.count, submitted.count)
                    started.append(contentsOf: submitted.prefix(count))
                    submitted.removeFirst(count)
                }
                for (url, continuation) in started { start(url, continuation) }
                started.removeAll(keepingCapacity: true)
            }
            guard running > 0 else {
                if !hasWork { curl_floor_poll(engine) }
                continue
            }
            curl_floor_perform(engine)
            var slot: Int32 = 0
            var code: Int32 = 0
            var status = 0
            var finished = false
            while curl_floor_next(engine, &slot, &code, &status) == 1 {
                finished = true
                guard let (url, continuation) = waiting[Int(slot)] else { continue }
                waiting[Int(slot)] = nil
                free.append(slot)
                running -= 1
                if code == 0 {
                    let reply = Reply(
                        status: status, url: url, head: bytes(slot, curl_floor_head), body: bytes(slot, curl_floor_body))
                    continuation.resume(returning: reply)
                } else {
                    continuation.resume(throwing: FloorError(description: "curl error \(code)"))
                }
            }
            if !finished, !hasWork { curl_floor_poll(engine) }
        }
    }
}

/// `GET string`, as an async client's entry point does it: started in place from a job on the
/// loop thread, handed to it from any other thread.
func get(_ string: String, on loop: Loop, fromLoop: Bool) async throws -> Reply {
    guard let url = URL(string: string), url.host != nil else { throw FloorError(description: "bad URL \(string)") }
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            if fromLoop { loop.start(url, continuation) } else { loop.submit(url, continuation) }
        }
    } onCancel: {
        // A client cancels the transfer here; the workload never cancels.
    }
}

runBlocking {
    let options = Options()
    guard options.mode == "keepalive" || options.mode == "multi", let cacert = options.caCertificates else {
        Options.fail("usage: async-floor keepalive|multi URL --cacert FILE [--requests N] [--inflight N] [--http2]")
    }
    let slots = options.mode == "multi" ? options.inFlight : 1
    let loop = try Loop(cacert: cacert, slots: slots, http2: options.http2, connections: options.connections)
    let url = options.url
    switch options.extra["executor"] {
    case nil, "loop":
        try await withTaskExecutorPreference(loop) { () async throws -> Void in
            try await runWorkload(options) {
                let reply = try await get(url, on: loop, fromLoop: true)
                guard reply.status == 200 else { throw FloorError(description: "status \(reply.status)") }
            }
        }
    case "global":
        try await runWorkload(options) {
            let reply = try await get(url, on: loop, fromLoop: false)
            guard reply.status == 200 else { throw FloorError(description: "status \(reply.status)") }
        }
    case let other?:
        Options.fail("--executor is loop or global, not \(other)")
    }
}
