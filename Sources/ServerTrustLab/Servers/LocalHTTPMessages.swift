import Foundation

/// One HTTP/1.1 request as a local server received it.
public struct LocalHTTPRequest: Sendable {
    /// The method, e.g. `GET`.
    public var method: String
    /// The request target as sent: `/echo?x=1` (origin form), or `host:port` for `CONNECT`.
    public var target: String
    /// The protocol version as sent, e.g. `HTTP/1.1`.
    public var version: String
    /// Header fields in the order received, names as sent.
    public var headers: [(name: String, value: String)]
    /// The body, de-chunked if it was sent chunked.
    public var body: [UInt8]
    /// Which accepted connection carried the request (1 for the first), so a handler or a test
    /// can tell a reused connection from a new one.
    public var connectionNumber: Int

    /// A request as a handler or a test builds it; the servers fill in every field from the wire.
    public init(
        method: String, target: String, version: String = "HTTP/1.1",
        headers: [(name: String, value: String)] = [], body: [UInt8] = [], connectionNumber: Int = 0
    ) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.body = body
        self.connectionNumber = connectionNumber
    }

    /// The target without its query: `/echo` for `/echo?x=1`.
    public var path: String {
        String(target.prefix { $0 != "?" })
    }

    /// Query items in order, percent-decoded (`+` is left as is).
    public var queryItems: [(name: String, value: String)] {
        guard let mark = target.firstIndex(of: "?") else { return [] }
        return target[target.index(after: mark)...].split(separator: "&").map { item in
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (text: Substring) in String(text).removingPercentEncoding ?? String(text) }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    /// The first query item named `name`.
    public func queryValue(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }

    /// The first header field named `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Every header field named `name` (case-insensitive), in order.
    public func headers(named name: String) -> [String] {
        headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    /// The body as UTF-8 text.
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// A response for a local server to send.
///
/// The server adds `Content-Length` (unless already set, or the status has no body) and
/// `Connection: close` when it will close the connection after this response.
public struct LocalHTTPResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Header fields to send, in order.
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: Body
    /// Time to wait before sending anything. Default: none.
    public var delay: Duration
    /// When set, the body is sent in pieces of `chunkSize` bytes with `interval` between them
    /// (after the header, which goes out at once). Default: all at once.
    public var pacing: (chunkSize: Int, interval: Duration)?
    /// Close the connection after this response. Default: false (keep-alive).
    public var closesConnection: Bool
    /// Send only the first `n` bytes of the response (head first), then close the connection
    /// cleanly (TLS `close_notify`, then FIN); 0 sends nothing at all, as nginx's `return 444`.
    /// For testing clients against a server that drops requests. Default: nil (the whole response).
    public var truncatedAfter: Int? = nil

    /// A response of which no byte is sent: the connection closes as soon as the request has
    /// been read (nginx's `return 444`).
    public static var noResponse: LocalHTTPResponse {
        var response = LocalHTTPResponse()
        response.truncatedAfter = 0
        return response
    }

    /// A response; every argument defaults to its property's default.
    public init(
        status: Int = 200, headers: [(name: String, value: String)] = [], body: Body = .empty,
        delay: Duration = .zero, pacing: (chunkSize: Int, interval: Duration)? = nil, closesConnection: Bool = false
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.delay = delay
        self.pacing = pacing
        self.closesConnection = closesConnection
    }

    /// A `text/plain; charset=utf-8` response.
    public static func text(_ text: String, status: Int = 200) -> LocalHTTPResponse {
        LocalHTTPResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: .text(text))
    }

    /// The first header field named `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// A response body: bytes, or a generated pattern so large bodies cost no memory.
    public struct Body: Sendable {
        private enum Storage: Sendable {
            case bytes([UInt8])
            case pattern(count: Int)
        }

        private let storage: Storage

        /// No body.
        public static let empty = Body(storage: .bytes([]))

        /// These bytes.
        public static func bytes(_ bytes: [UInt8]) -> Body { Body(storage: .bytes(bytes)) }

        /// The UTF-8 of `text`.
        public static func text(_ text: String) -> Body { Body(storage: .bytes(Array(text.utf8))) }

        /// `count` bytes of ``patternByte(at:)``, generated while sending.
        public static func pattern(count: Int) -> Body { Body(storage: .pattern(count: max(count, 0))) }

        /// Byte `index` of a pattern body: `index % 251`. The period is prime so that a
        /// dropped, duplicated or shifted block of any power-of-two size shows up.
        public static func patternByte(at index: Int) -> UInt8 { UInt8(index % 251) }

        /// The first `count` bytes of the pattern, for a test to compare with what it received.
        public static func patternBytes(count: Int) -> [UInt8] { (0..<max(count, 0)).map(patternByte(at:)) }

        /// The number of bytes.
        public var count: Int {
            switch storage {
            case .bytes(let bytes): bytes.count
            case .pattern(let count): count
            }
        }

        /// Bytes `range` of the body.
        package func slice(_ range: Range<Int>) -> [UInt8] {
            switch storage {
            case .bytes(let bytes):
                return Array(bytes[range])
            case .pattern:
                let start = range.lowerBound % 251
                guard start + range.count <= Body.patternPeriods.count else { return range.map(Body.patternByte(at:)) }
                return Array(Body.patternPeriods[start..<(start + range.count)])
            }
        }

        /// Whole periods of the pattern covering any 64 KiB slice, so sending a large body is
        /// a copy rather than a computation per byte.
        private static let patternPeriods: [UInt8] = (0..<(64 * 1024 + 251)).map(patternByte(at:))
    }
}
