import Foundation
internal import ServerTrust

/// A custom route: return a response, or nil to fall through to ``LocalHTTPRoutes``.
///
/// Runs on the connection's own thread; it may block (that delays only its connection).
public typealias LocalHTTPHandler = @Sendable (LocalHTTPRequest) -> LocalHTTPResponse?

/// What both servers share above the transport: the handler, the routes, and the counts.
final class HTTPService: Sendable {
    /// How many recent requests ``recentRequests`` keeps…
    static let recentRequestLimit = 64
    /// …as long as their bodies add up to no more than this (the last one is always kept), so
    /// a benchmark uploading all day does not grow the test process.
    static let recentBodyByteLimit = 16 * 1024 * 1024

    private let state: Locked<State>

    private struct State {
        var handler: LocalHTTPHandler?
        var requestsServed = 0
        var recentRequests: [LocalHTTPRequest] = []
        var recentBodyBytes = 0
    }

    init(handler: LocalHTTPHandler?) {
        state = Locked(State(handler: handler))
    }

    var requestsServed: Int { state.withLock { $0.requestsServed } }

    var recentRequests: [LocalHTTPRequest] { state.withLock { $0.recentRequests } }

    func setHandler(_ handler: LocalHTTPHandler?) {
        state.withLock { $0.handler = handler }
    }

    /// Serves HTTP/1.1 on `stream` until it closes.
    func serve(_ stream: any ByteStream, connectionNumber: Int, stopSignal: StopSignal) {
        HTTPConnection(stream: stream, stopSignal: stopSignal, number: connectionNumber).serve(respond(to:))
    }

    /// Counts the request as served before its response is written, so a client that has read
    /// the response always sees it counted.
    private func respond(to request: LocalHTTPRequest) -> LocalHTTPResponse {
        let handler = state.withLock { state in
            state.requestsServed += 1
            state.recentRequests.append(request)
            state.recentBodyBytes += request.body.count
            while state.recentRequests.count > 1,
                  state.recentRequests.count > Self.recentRequestLimit || state.recentBodyBytes > Self.recentBodyByteLimit {
                state.recentBodyBytes -= state.recentRequests.removeFirst().body.count
            }
            return state.handler
        }
        return handler?(request) ?? LocalHTTPRoutes.response(to: request)
    }
}
