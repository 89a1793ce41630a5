#if OpenAPIAdapter
import ServerTrustHTTP

/// A streamed response body as the generated client reads it: the session's `ResponseBody`,
/// cancelled once nothing can read it any more.
///
/// `HTTPBody` holds this sequence and each iterator holds it too, so the transfer is
/// cancelled when the `HTTPBody` and every iterator of it are gone — a body the caller drops
/// unread, or stops reading, releases its transfer and connection at once instead of holding
/// them (paused once 1 MiB waits unread) until the session's `requestTimeout`. Cancelling a
/// transfer that has already ended does nothing.
struct StreamedResponseBody: AsyncSequence, Sendable {
    typealias Element = [UInt8]

    private let release: Release

    init(_ body: ResponseBody) { release = Release(body) }

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: ResponseBody.AsyncIterator
        let release: Release

        mutating func next() async throws -> [UInt8]? { try await base.next() }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: release.body.makeAsyncIterator(), release: release) }

    /// Cancels the body's transfer when the last reference goes.
    final class Release: Sendable {
        let body: ResponseBody
        init(_ body: ResponseBody) { self.body = body }
        deinit { body.cancel() }
    }
}
#endif
