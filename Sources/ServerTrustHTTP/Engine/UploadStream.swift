import Foundation
internal import CCurl
import Synchronization
internal import ServerTrust

/// The bridge between a request body's producer and curl's read callback: the request side of
/// ``BodyStream``.
///
/// Bounded: the producer (a task running the body's ``UploadSource``) waits in ``write(_:)``
/// while ``bufferLimit`` bytes or more are buffered, so at most `bufferLimit` plus one chunk is
/// held. When curl asks for bytes and none are buffered, the read callback pauses the transfer
/// (`CURL_READFUNC_PAUSE`); the next chunk, the end of the body or a failure resumes it through
/// the loop (`curl_easy_pause` on the loop thread).
///
/// The producer starts on curl's first read, which comes after the connection passed the
/// request's trust policy and the request head went out: a rejected server never causes a
/// single byte to be produced. ``close()`` (the transfer ended) cancels it.
///
/// Shared between the loop thread and the producer's task; all state is behind one lock.
final class UploadStream: Sendable {
    static let bufferLimit = 1 << 20

    private struct State {
        var chunks: [[UInt8]] = []
        /// The first unread chunk in `chunks`, and how much of it was read.
        var head = 0
        var offset = 0
        var buffered = 0
        /// Bytes the producer has written so far.
        var produced = 0
        var started = false
        /// The producer returned (the body is complete unless `failure` is set).
        var ended = false
        /// The transfer is over; the producer is cancelled and writes throw.
        var closed = false
        var failure: SessionError?
        var curlPaused = false
        var waitingProducer: CheckedContinuation<Void, any Error>?
        var task: Task<Void, Never>?
    }

    /// The declared length (`Content-Length`), or nil for a body of unknown length.
    let length: Int?
    /// What the body is, for error messages: "the request body stream", "file /tmp/x".
    let name: String
    private let url: String
    private let source: UploadSource
    private let statistics: UploadStatistics?
    private let state = Locked(State())
    /// Asks the loop to resume the paused transfer; dropped by ``close()``.
    private let resume: Locked<(@Sendable () -> Void)?> = Locked(nil)

    init(source: UploadSource, length: Int?, name: String, url: String, statistics: UploadStatistics?) {
        self.source = source
        self.length = length
        self.name = name
        self.url = url
        self.statistics = statistics
    }

    func setResumeHandler(_ handler: @escaping @Sendable () -> Void) { resume.withLock { $0 = handler } }

    /// Why the body could not be produced, if it could not.
    var failure: SessionError? { state.withLock { $0.failure } }
    /// Whether the producer has been started (curl asked for the body).
    var hasStarted: Bool { state.withLock { $0.started } }

    // MARK: Loop thread

    /// `CURLOPT_READFUNCTION`: copies buffered bytes into `buffer`. Returns the count, 0 at the
    /// end of the body, `CURL_READFUNC_PAUSE` when nothing is buffered yet, or
    /// `CURL_READFUNC_ABORT` when the producer failed.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var start = false
        var producer: CheckedContinuation<Void, any Error>?
        let result: Int = state.withLock { state in
            if state.failure != nil || state.closed { return Int(CURL_READFUNC_ABORT) }
            if !state.started {
                state.started = true
                start = true
            }
            var copied = 0
            while copied < buffer.count, state.head < state.chunks.count {
                let chunk = state.chunks[state.head]
                let count = min(chunk.count - state.offset, buffer.count - copied)
                chunk.withUnsafeBytes { bytes in
                    buffer.baseAddress!.advanced(by: copied).copyMemory(from: bytes.baseAddress!.advanced(by: state.offset), byteCount: count)
                }
                copied += count
                state.offset += count
                if state.offset == chunk.count {
                    state.chunks[state.head] = []
                    state.head += 1
                    state.offset = 0
                }
            }
            if state.head == state.chunks.count {
                state.chunks.removeAll(keepingCapacity: true)
                state.head = 0
            } else if state.head >= 64, state.head * 2 >= state.chunks.count {
                state.chunks.removeFirst(state.head)
                state.head = 0
            }
            state.buffered -= copied
            if state.buffered < Self.bufferLimit, let waiting = state.waitingProducer {
                state.waitingProducer = nil
                producer = waiting
            }
            if copied > 0 { return copied }
            if state.ended { return 0 }
            state.curlPaused = true
            return Int(CURL_READFUNC_PAUSE)
        }
        producer?.resume()
        if start { startProducer() }
        return result
    }

    /// Ends the upload: the transfer finished, failed or was cancelled. Cancels the producer,
    /// wakes it if it waits for room, and drops the resume handler (it captures the transfer,
    /// which holds this stream). Idempotent.
    func close() {
        let (task, waiting) = state.withLock { state in
            state.closed = true
            defer {
                state.task = nil
                state.waitingProducer = nil
            }
            return (state.task, state.waitingProducer)
        }
        resume.withLock { $0 = nil }
        waiting?.resume(throwing: CancellationError())
        task?.cancel()
    }

    private func startProducer() {
        statistics?.producerStarted()
        let task = Task { [self] in
            do {
                try await source.produce(UploadSink(write: { try await self.write($0) }))
                producerEnded(nil)
            } catch {
                producerEnded(error)
            }
        }
        let closed = state.withLock { state in
            if !state.closed, !state.ended { state.task = task }
            return state.closed
        }
        if closed { task.cancel() }
    }

    // MARK: Producer task

    /// Buffers `chunk`, first waiting while the buffer is full. Throws once the transfer is over.
    func write(_ chunk: [UInt8]) async throws {
        guard !chunk.isEmpty else { return }
        try await waitForRoom()
        let wake = try state.withLock { state throws(SessionError) -> Bool in
            if state.closed { throw SessionError(.cancelled, "The request ended before its body was sent.", url: url) }
            if let length, state.produced + chunk.count > length {
                let error = SessionError(
                    .uploadFailed, "Reading \(name) failed: it produced more than its declared length of \(length) bytes.", url: url)
                state.failure = state.failure ?? error
                state.ended = true
                throw error
            }
            state.chunks.append(chunk)
            state.buffered += chunk.count
            state.produced += chunk.count
            statistics?.buffered(state.buffered)
            defer { state.curlPaused = false }
            return state.curlPaused
        }
        if wake { resume.withLock { $0 }?() }
    }

    private func waitForRoom() async throws {
        if state.withLock({ !$0.closed && $0.buffered < Self.bufferLimit }) { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let ready: Bool? = state.withLock { state in
                if state.closed { return false }
                if state.buffered < Self.bufferLimit { return true }
                state.waitingProducer = continuation
                return nil
            }
            switch ready {
            case true?: continuation.resume()
            case false?: continuation.resume(throwing: CancellationError())
            case nil: break
            }
        }
    }

    /// The producer returned, or threw `error`: the body is complete, or the upload fails.
    private func producerEnded(_ error: (any Error)?) {
        let wake = state.withLock { state in
            state.task = nil
            guard !state.closed else { return false }
            if state.failure == nil {
                if let error = error as? SessionError, error.code == .bodyNotReplayable {
                    state.failure = SessionError(error.code, error.reason, url: url)
                } else if let error {
                    let detail = (error as? SessionError)?.reason ?? "\(error)"
                    state.failure = SessionError(.uploadFailed, "Reading \(name) failed: \(detail)", url: url)
                } else if let length, state.produced != length {
                    state.failure = SessionError(
                        .uploadFailed, "Reading \(name) failed: it ended after \(state.produced) of its declared \(length) bytes.", url: url)
                }
            }
            state.ended = true
            defer { state.curlPaused = false }
            return state.curlPaused
        }
        if wake { resume.withLock { $0 }?() }
    }
}

/// Upload figures of a session, for tests: the most body bytes any upload buffered at once,
/// and how many producers were started.
final class UploadStatistics: Sendable {
    private let peak = Atomic<Int>(0)
    private let started = Atomic<Int>(0)

    var peakBufferedBytes: Int { peak.load(ordering: .relaxed) }
    var producersStarted: Int { started.load(ordering: .relaxed) }

    func buffered(_ count: Int) { _ = peak.max(count, ordering: .relaxed) }
    func producerStarted() { started.add(1, ordering: .relaxed) }
}
