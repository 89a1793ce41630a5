public import Foundation
import Synchronization

extension Request {
    /// A request body: bytes in memory, a stream of chunks, or a file read from disk as it is sent.
    ///
    /// A stream or a file is uploaded with back-pressure: the session holds at most 1 MiB of it
    /// (plus one chunk) at a time, and the producer
    /// waits until curl has sent what it holds. The producer is started only once the request's
    /// connection has passed its trust policy and curl asks for the first body byte; it is
    /// cancelled when the request ends, fails or is cancelled.
    ///
    /// A streamed body cannot be sent twice: a redirect that keeps the body (307, 308; 301 and
    /// 302 for methods other than `POST`) fails
    /// with ``SessionError/Code/bodyNotReplayable``, and a retry policy must not resend it
    /// (``isReplayable``). A file is read again from the start for each hop.
    public struct Body: Sendable {
        enum Storage: Sendable {
            case bytes([UInt8])
            case stream(UploadSource, length: Int?)
            case file(URL)
        }

        let storage: Storage

        /// A body in memory, sent with `Content-Length`.
        public static func bytes(_ bytes: [UInt8]) -> Body { Body(storage: .bytes(bytes)) }

        /// A body streamed from `chunks`, iterated once, as curl is ready for more.
        ///
        /// - Parameters:
        ///   - chunks: the body's bytes in order; empty chunks are skipped. An error it throws
        ///     fails the request with ``SessionError/Code/uploadFailed``.
        ///   - length: the total byte count when known: it is sent as `Content-Length`, and a
        ///     stream that ends short of it or runs past it fails the request
        ///     (``SessionError/Code/uploadFailed``). Nil (the default): HTTP/1.1 sends the body
        ///     with `Transfer-Encoding: chunked`, HTTP/2 as DATA frames until the stream ends.
        ///
        /// The body is read once: sending the same `Body` again (in another request, or a retry)
        /// fails with ``SessionError/Code/bodyNotReplayable`` before anything is sent, as many
        /// sequences (an `AsyncStream`) would yield nothing the second time. Make a new body per
        /// request.
        public static func stream<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks, length: Int? = nil) -> Body
        where Chunks.Element: Collection<UInt8> {
            Body(storage: .stream(UploadSource(once: true) { sink in
                for try await chunk in chunks {
                    try await sink.write(Array(chunk))
                }
            }, length: length))
        }

        /// The contents of the file at `url` (a `file:` URL), read in chunks as they are sent,
        /// with `Content-Length` set to the file's size when the request starts.
        ///
        /// A file that cannot be opened fails the request with ``SessionError/Code/uploadFailed``
        /// before anything is sent. Replayable: a 307 or 308 redirect reads it again.
        public static func file(_ url: URL) -> Body { Body(storage: .file(url)) }

        /// Whether the body can be sent again (a redirect keeping the body, a retry): true for
        /// bytes and files, false for a stream, whose sequence is iterated once.
        public var isReplayable: Bool {
            if case .stream = storage { return false }
            return true
        }

        /// The bytes of a ``bytes(_:)`` body; nil for a stream or a file.
        public var bytes: [UInt8]? {
            if case .bytes(let bytes) = storage { return bytes }
            return nil
        }
    }
}

/// A type-erased body producer: writes the body's chunks to a sink, in order, then returns.
///
/// A one-time source (a stream) refuses a second run with ``SessionError/Code/bodyNotReplayable``:
/// whatever path would send it twice, a one-shot sequence is never silently sent short or empty.
struct UploadSource: Sendable {
    private let run: @Sendable (UploadSink) async throws -> Void
    private let spent: SpentFlag?

    init(once: Bool = false, _ run: @escaping @Sendable (UploadSink) async throws -> Void) {
        self.run = run
        spent = once ? SpentFlag() : nil
    }

    /// Whether a one-time source has already been run.
    var isSpent: Bool { spent?.isSet ?? false }

    func produce(_ sink: UploadSink) async throws {
        if let spent, !spent.set() {
            throw SessionError(.bodyNotReplayable, "The request body stream was already read; a stream body can be sent once.")
        }
        try await run(sink)
    }

    private final class SpentFlag: Sendable {
        private let flag = Atomic<Bool>(false)
        var isSet: Bool { flag.load(ordering: .acquiring) }
        /// Sets the flag; false if it was already set.
        func set() -> Bool { flag.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged }
    }
}

/// Where a producer writes: an upload's buffer (``UploadStream/write(_:)``, which waits while
/// it is full) or a collector (a signed-response host's body, buffered before sending).
struct UploadSink: Sendable {
    let write: @Sendable ([UInt8]) async throws -> Void
}
