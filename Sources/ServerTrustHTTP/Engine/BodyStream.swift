import Synchronization
internal import ServerTrust

/// The bridge between curl's write callback and a consumer iterating ``ResponseBody``.
///
/// Bounded: when more than ``highWater`` bytes wait unread, the write callback pauses the
/// transfer (`CURL_WRITEFUNC_PAUSE`) and the consumer resumes it once it has read below
/// ``lowWater``. Shared between the loop thread and the consumer's task; every field is atomic
/// or behind a mutex.
final class BodyStream: Sendable {
    static let highWater = 1 << 20
    static let lowWater = 256 << 10

    let chunks: AsyncThrowingStream<[UInt8], any Error>
    private let continuation: AsyncThrowingStream<[UInt8], any Error>.Continuation
    private let buffered = Atomic<Int>(0)
    private let paused = Atomic<Bool>(false)
    /// Asks the loop to resume the paused transfer.
    private let resume: Locked<(@Sendable () -> Void)?> = Locked(nil)

    init() {
        (chunks, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
    }

    func setResumeHandler(_ handler: @escaping @Sendable () -> Void) { resume.withLock { $0 = handler } }

    /// Loop thread: offers bytes; false means "pause, and offer them again later".
    func offer(_ bytes: [UInt8]) -> Bool {
        if buffered.load(ordering: .acquiring) > Self.highWater {
            paused.store(true, ordering: .releasing)
            // The consumer may have drained everything between the check and the store.
            guard buffered.load(ordering: .acquiring) <= Self.lowWater,
                paused.compareExchange(expected: true, desired: false, ordering: .acquiringAndReleasing).exchanged
            else { return false }
        }
        buffered.add(bytes.count, ordering: .releasing)
        continuation.yield(bytes)
        return true
    }

    /// Ends the stream. Also drops the resume handler: it captures the transfer, which holds
    /// this stream, and the cycle would otherwise keep both (and the loop, the policy and any
    /// unread chunks) alive for ever — found by LeakSanitizer (docs/SECURITY-TESTING.md, finding 1).
    func finish(throwing error: SessionError?) {
        resume.withLock { $0 = nil }
        if let error { continuation.finish(throwing: error) } else { continuation.finish() }
    }

    /// Consumer: `count` bytes were taken.
    func consumed(_ count: Int) {
        let left = buffered.subtract(count, ordering: .acquiringAndReleasing).newValue
        if left <= Self.lowWater, paused.compareExchange(expected: true, desired: false, ordering: .acquiringAndReleasing).exchanged {
            resume.withLock { $0 }?()
        }
    }

    func cancel() {
        resume.withLock { $0 = nil }
        continuation.finish(throwing: CancellationError())
    }
}

/// A response body delivered in chunks as it arrives.
public struct ResponseBody: AsyncSequence, Sendable {
    public typealias Element = [UInt8]
    let stream: BodyStream
    let onTermination: @Sendable () -> Void

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<[UInt8], any Error>.AsyncIterator
        let stream: BodyStream
        public mutating func next() async throws -> [UInt8]? {
            guard let chunk = try await base.next() else { return nil }
            stream.consumed(chunk.count)
            return chunk
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.chunks.makeAsyncIterator(), stream: stream)
    }

    /// Stops the transfer: a reader still gets the chunks already received, then
    /// ``SessionError/Code/cancelled``. Call it when the rest of the body will not be read, so
    /// that the transfer and its connection are not held (paused once 1 MiB waits unread) until
    /// ``Session/Configuration/requestTimeout``. Does nothing once the transfer has ended.
    public func cancel() { onTermination() }

    /// Collects the whole body (up to `limit` bytes).
    public func collect(upTo limit: Int) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in self {
            bytes += chunk
            guard bytes.count <= limit else {
                onTermination()
                throw SessionError(.responseTooLarge, "The response body exceeds the \(limit)-byte limit.")
            }
        }
        return bytes
    }
}
