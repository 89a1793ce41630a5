import Foundation
import Synchronization
@testable import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// What a test's body stream did: chunks handed out, calls to `next()`, and when it stopped.
final class UploadProbe: Sendable {
    private let nextCallCount = Atomic<Int>(0)
    private let producedBytes = Atomic<Int>(0)
    let reached: AsyncStream<Void>
    private let reachedContinuation: AsyncStream<Void>.Continuation
    let ended: AsyncStream<Void>
    private let endedContinuation: AsyncStream<Void>.Continuation

    init() {
        (reached, reachedContinuation) = AsyncStream.makeStream(of: Void.self)
        (ended, endedContinuation) = AsyncStream.makeStream(of: Void.self)
    }

    var nextCalls: Int { nextCallCount.load(ordering: .relaxed) }
    var produced: Int { producedBytes.load(ordering: .relaxed) }

    fileprivate func calledNext() { nextCallCount.add(1, ordering: .relaxed) }
    fileprivate func handedOut(_ count: Int) { producedBytes.add(count, ordering: .relaxed) }
    fileprivate func reachTheHold() { reachedContinuation.yield() }
    fileprivate func iteratorReleased() {
        endedContinuation.yield()
        endedContinuation.finish()
    }

    /// Waits until the stream reached `holdAfter` chunks and waits there.
    func waitUntilHeld() async { for await _ in reached { return } }
    /// Waits until the iterator was released: the producer stopped iterating.
    func waitUntilReleased() async { for await _ in ended { return } }
}

struct UploadTestError: Error, CustomStringConvertible {
    var description: String { "the test's body source broke" }
}

/// `count` chunks of `chunkSize` pattern bytes (`LocalHTTPResponse.Body.patternByte(at:)`,
/// continuing across chunks), generated on demand; optionally throwing after `failAfter`
/// chunks or waiting, until cancelled, after `holdAfter` chunks.
struct GeneratedChunks: AsyncSequence, Sendable {
    typealias Element = [UInt8]
    let count: Int
    let chunkSize: Int
    var failAfter: Int? = nil
    var holdAfter: Int? = nil
    var probe: UploadProbe? = nil

    var totalBytes: Int { count * chunkSize }

    /// Periods of the pattern covering any chunk, so a chunk is a copy, not a loop per byte.
    static let periods: [UInt8] = (0..<(1 << 20) + 251).map { LocalHTTPResponse.Body.patternByte(at: $0) }

    static func chunk(at offset: Int, size: Int) -> [UInt8] {
        Array(periods[(offset % 251)..<(offset % 251 + size)])
    }

    /// The whole body, for a test to hash.
    var allBytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(totalBytes)
        for index in 0..<count { bytes += Self.chunk(at: index * chunkSize, size: chunkSize) }
        return bytes
    }

    final class Token: Sendable {
        let probe: UploadProbe?
        init(_ probe: UploadProbe?) { self.probe = probe }
        deinit { probe?.iteratorReleased() }
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let sequence: GeneratedChunks
        let token: Token
        var index = 0

        mutating func next() async throws -> [UInt8]? {
            sequence.probe?.calledNext()
            if let holdAfter = sequence.holdAfter, index == holdAfter {
                sequence.probe?.reachTheHold()
                try await Task.sleep(for: .seconds(3600))  // until the producer is cancelled
            }
            if let failAfter = sequence.failAfter, index == failAfter { throw UploadTestError() }
            guard index < sequence.count else { return nil }
            defer { index += 1 }
            sequence.probe?.handedOut(sequence.chunkSize)
            return GeneratedChunks.chunk(at: index * sequence.chunkSize, size: sequence.chunkSize)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(sequence: self, token: Token(probe)) }
}

/// A handler for `/sink`: answers with the SHA-256 of the body received (hex), its length and
/// its framing, as `X-Body-SHA256`, `X-Body-Length`, `X-Received-Content-Length`,
/// `X-Received-Transfer-Encoding`, `X-Received-Method`. Other paths fall through to the routes.
let uploadSinkHandler: LocalHTTPHandler = { request in
    guard request.path == "/sink" else { return nil }
    return LocalHTTPResponse(
        status: 200,
        headers: [
            ("X-Body-SHA256", hex(sha256(request.body))), ("X-Body-Length", "\(request.body.count)"),
            ("X-Received-Content-Length", request.header("Content-Length") ?? "none"),
            ("X-Received-Transfer-Encoding", request.header("Transfer-Encoding") ?? "none"),
            ("X-Received-Expect", request.header("Expect") ?? "none"),
            ("X-Received-Method", request.method),
        ],
        body: .text("received\n"))
}

func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

/// A temporary file holding `body`'s bytes, removed by the caller.
func patternFile(_ body: GeneratedChunks) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("servertrust-upload-\(UUID().uuidString)")
    try Data(body.allBytes).write(to: url)
    return url
}
