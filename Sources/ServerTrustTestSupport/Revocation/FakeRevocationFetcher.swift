public import Foundation
public import ServerTrust

/// An in-memory ``RevocationFetcher``: URLs are routed by prefix to canned replies, and every
/// request is logged with the deadline it was given.
public final class FakeRevocationFetcher: RevocationFetcher {
    public init() {}

    public typealias Handler = @Sendable (RevocationFetchRequest, ContinuousClock.Instant) -> Result<[UInt8], TrustError>

    private let routes = Locked<[(prefix: String, handler: Handler)]>([])
    private let log = Locked<[(request: RevocationFetchRequest, deadline: ContinuousClock.Instant)]>([])

    /// Answers requests whose URL starts with `prefix`; later routes win.
    public func route(_ prefix: String, _ handler: @escaping Handler) {
        routes.withLock { $0.insert((prefix, handler), at: 0) }
    }

    public func serve(_ prefix: String, _ bytes: [UInt8]) { route(prefix) { _, _ in .success(bytes) } }
    public func fail(_ prefix: String, _ error: TrustError) { route(prefix) { _, _ in .failure(error) } }

    /// A responder that never answers: it waits out the deadline, as a fetcher must, and times out.
    public func hang(_ prefix: String) {
        route(prefix) { _, deadline in
            while ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.005) }
            return .failure(.fetchTimedOut("no answer"))
        }
    }

    public var requests: [RevocationFetchRequest] { log.withLock { $0.map(\.request) } }
    public var deadlines: [ContinuousClock.Instant] { log.withLock { $0.map(\.deadline) } }
    public var count: Int { log.withLock { $0.count } }
    public func count(_ prefix: String) -> Int { requests.filter { $0.url.hasPrefix(prefix) }.count }

    public func fetch(_ request: RevocationFetchRequest, deadline: ContinuousClock.Instant) -> Result<[UInt8], TrustError> {
        log.withLock { $0.append((request, deadline)) }
        let handler = routes.withLock { routes in routes.first { request.url.hasPrefix($0.prefix) }?.handler }
        return handler?(request, deadline) ?? .failure(.fetchHTTPStatus(404, "no route for \(request.url)"))
    }
}
