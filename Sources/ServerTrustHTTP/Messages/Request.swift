public import Foundation
public import HTTPTypes
public import ServerTrust

/// An HTTP request.
///
/// The method and header fields are swift-http-types' `HTTPRequest.Method` and `HTTPFields`,
/// so they pass to and from Hummingbird, Vapor, OpenAPI and AsyncHTTPClient code as they are;
/// ``init(_:body:trustEvaluator:timeout:contentDecoding:isIdempotent:)`` and ``httpRequest``
/// convert a whole `HTTPRequest`.
///
/// ```swift
/// var request = Request(method: .put, url: url, headers: [.contentType: "application/json"], body: body)
/// request.headers[HTTPField.Name("X-Request-ID")!] = id
/// ```
public struct Request: Sendable {
    /// The method, sent as its `rawValue` upper-cased (as when the method was a `String`,
    /// `Method("get")` goes out as `GET`).
    public var method: HTTPRequest.Method {
        get { storage.method }
        _modify { yield &unique().method }
    }
    /// The URL: `https:`, or `http:` with ``Session/Configuration/allowsPlainHTTP``, with a host.
    public var url: URL {
        get { storage.url }
        _modify { yield &unique().url }
    }
    /// Header fields in order, repeated names kept; names compare case-insensitively. A value
    /// cannot carry a line break: `HTTPField` turns CR, LF and NUL into spaces when it is made.
    public var headers: HTTPFields {
        get { storage.headers }
        _modify { yield &unique().headers }
    }
    /// The body, as bytes in memory: the ``uploadBody`` of a ``Body/bytes(_:)`` body, nil for
    /// none or for a stream or file body. Setting it sets ``uploadBody`` (nil removes the body).
    public var body: [UInt8]? {
        get { uploadBody?.bytes }
        set { uploadBody = newValue.map(Body.bytes) }
    }
    /// The body: bytes, a stream of chunks, or a file (``Body``); nil for none.
    public var uploadBody: Body? {
        get { storage.uploadBody }
        _modify { yield &unique().uploadBody }
    }
    /// Evaluates this request's host instead of the session's trust manager.
    ///
    /// Requests with different evaluators never share TLS sessions, and a connection opened
    /// under another policy is re-evaluated under this one before the request is sent.
    public var trustEvaluator: (any ServerTrustEvaluating)? {
        get { storage.trustEvaluator }
        _modify { yield &unique().trustEvaluator }
    }
    /// The time limit of this request (each redirect hop), overriding
    /// ``Session/Configuration/requestTimeout``; nil (the default) uses the session's.
    /// Must be positive.
    public var timeout: Duration? {
        get { storage.timeout }
        _modify { yield &unique().timeout }
    }
    /// The content codings to ask for and decode for this request (each redirect hop),
    /// overriding ``Session/Configuration/contentDecoding``; `[]` turns decoding off; nil (the
    /// default) uses the session's. A coding the runtime libcurl lacks is refused
    /// (``SessionError/Code/invalidRequest``).
    public var contentDecoding: [ContentCoding]? {
        get { storage.contentDecoding }
        _modify { yield &unique().contentDecoding }
    }

    /// Whether the request may be sent twice with the effect of once, so that
    /// ``Session/Configuration/retryPolicy`` may retry it. Default nil: by ``method`` — `GET`,
    /// `HEAD`, `PUT`, `DELETE`, `OPTIONS` and `TRACE` are (RFC 9110 §9.2.2), `POST`, `PATCH` and
    /// others are not. Set `true` for a request the server deduplicates (an idempotency key),
    /// `false` to never retry this one. Redirect hops keep the value. A streamed body
    /// (``Body/isReplayable`` false) is never retried, whatever this says.
    public var isIdempotent: Bool? {
        get { storage.isIdempotent }
        _modify { yield &unique().isIdempotent }
    }

    /// A request with bytes in memory as its body, or none.
    ///
    /// The fields default to `HTTPFields()`, not the literal `[:]`: swift-http-types' literal
    /// reserves room for its elements, and `reserveCapacity(0)` on an empty array allocates a
    /// buffer, one allocation (and its release) on every request that names no fields.
    public init(
        method: HTTPRequest.Method = .get, url: URL, headers: HTTPFields = HTTPFields(), body: [UInt8]? = nil,
        trustEvaluator: (any ServerTrustEvaluating)? = nil, timeout: Duration? = nil, contentDecoding: [ContentCoding]? = nil,
        isIdempotent: Bool? = nil
    ) {
        self.storage = Storage(
            method: method, url: url, headers: headers, uploadBody: body.map(Body.bytes), trustEvaluator: trustEvaluator,
            timeout: timeout, contentDecoding: contentDecoding, isIdempotent: isIdempotent)
    }

    /// A request with a streamed, file or in-memory body (``Body``).
    public init(
        method: HTTPRequest.Method, url: URL, headers: HTTPFields = HTTPFields(), uploadBody: Body,
        trustEvaluator: (any ServerTrustEvaluating)? = nil, timeout: Duration? = nil, contentDecoding: [ContentCoding]? = nil,
        isIdempotent: Bool? = nil
    ) {
        self.storage = Storage(
            method: method, url: url, headers: headers, uploadBody: uploadBody, trustEvaluator: trustEvaluator,
            timeout: timeout, contentDecoding: contentDecoding, isIdempotent: isIdempotent)
    }

    // MARK: Storage

    // Fast path: docs/PERFORMANCE.md#fast-paths, "Request storage in one object".
    /// The fields, kept in one copy-on-write object: a request is handed through several layers
    /// per hop (signing, retries, tracing, the transfer), and a copy of it retains one object
    /// instead of eight fields. Written only through ``unique()``, so a copy never sees
    /// another's change.
    private var storage: Storage

    // Its fields are exempt from the runtime's dynamic exclusivity checks: they are written only
    // through the request's own `mutating` accessors, on storage no other request shares, so the
    // compiler's static check of the request covers them.
    private final class Storage: @unchecked Sendable {
        @exclusivity(unchecked) var method: HTTPRequest.Method
        @exclusivity(unchecked) var url: URL
        @exclusivity(unchecked) var headers: HTTPFields
        @exclusivity(unchecked) var uploadBody: Body?
        @exclusivity(unchecked) var trustEvaluator: (any ServerTrustEvaluating)?
        @exclusivity(unchecked) var timeout: Duration?
        @exclusivity(unchecked) var contentDecoding: [ContentCoding]?
        @exclusivity(unchecked) var isIdempotent: Bool?

        init(
            method: HTTPRequest.Method, url: URL, headers: HTTPFields, uploadBody: Body?, trustEvaluator: (any ServerTrustEvaluating)?,
            timeout: Duration?, contentDecoding: [ContentCoding]?, isIdempotent: Bool?
        ) {
            self.method = method
            self.url = url
            self.headers = headers
            self.uploadBody = uploadBody
            self.trustEvaluator = trustEvaluator
            self.timeout = timeout
            self.contentDecoding = contentDecoding
            self.isIdempotent = isIdempotent
        }

        func copy() -> Storage {
            Storage(
                method: method, url: url, headers: headers, uploadBody: uploadBody, trustEvaluator: trustEvaluator, timeout: timeout,
                contentDecoding: contentDecoding, isIdempotent: isIdempotent)
        }
    }

    /// The storage, copied first if another request shares it.
    private mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }

    /// RFC 9110 §9.2.2's idempotent methods, by the upper-cased name the request is sent with.
    private static func isIdempotentMethod(_ name: String) -> Bool {
        switch name {
        case "GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE": true
        default: false
        }
    }

    /// ``isIdempotent``, else whether ``method`` is idempotent; never for a body that cannot be
    /// sent twice (a stream: ``Body/isReplayable``), whatever ``isIdempotent`` says.
    var mayBeRetried: Bool {
        guard uploadBody?.isReplayable ?? true else { return false }
        return isIdempotent ?? Self.isIdempotentMethod(method.sentName)
    }

    /// The first value of a header, compared case-insensitively; nil when there is none, or
    /// when `name` is not a valid field name (RFC 9110 token), which no field can have.
    public func header(_ name: String) -> String? {
        HTTPField.Name(name).flatMap(header)
    }

    /// The first value of a header (`headers[name]` joins repeated fields with commas instead).
    public func header(_ name: HTTPField.Name) -> String? {
        headers.first { $0.name == name }?.value
    }
}

// MARK: - swift-http-types bridge

extension Request {
    /// A request for `request`'s method, URL and header fields.
    ///
    /// The URL is made from the `:scheme`, `:authority` and `:path` pseudo-header fields, as
    /// `HTTPRequest.url` makes it.
    ///
    /// - Throws: ``SessionError`` ``SessionError/Code/invalidRequest`` when `request` has no
    ///   scheme or authority (a request as a server receives it over HTTP/1.1 has only a path:
    ///   set `scheme` and `authority` first), no path, or is a `CONNECT` or `OPTIONS *`, which
    ///   have no URL.
    public init(
        _ request: HTTPRequest, body: [UInt8]? = nil, trustEvaluator: (any ServerTrustEvaluating)? = nil, timeout: Duration? = nil,
        contentDecoding: [ContentCoding]? = nil, isIdempotent: Bool? = nil
    ) throws(SessionError) {
        let url = try Self.url(of: request)
        self.init(
            method: request.method, url: url, headers: request.headerFields, body: body, trustEvaluator: trustEvaluator, timeout: timeout,
            contentDecoding: contentDecoding, isIdempotent: isIdempotent)
    }

    /// A request for `request`'s method, URL and header fields, with a streamed, file or
    /// in-memory body; throws as ``init(_:body:trustEvaluator:timeout:contentDecoding:isIdempotent:)``.
    public init(
        _ request: HTTPRequest, uploadBody: Body, trustEvaluator: (any ServerTrustEvaluating)? = nil, timeout: Duration? = nil,
        contentDecoding: [ContentCoding]? = nil, isIdempotent: Bool? = nil
    ) throws(SessionError) {
        let url = try Self.url(of: request)
        self.init(
            method: request.method, url: url, headers: request.headerFields, uploadBody: uploadBody, trustEvaluator: trustEvaluator,
            timeout: timeout, contentDecoding: contentDecoding, isIdempotent: isIdempotent)
    }

    /// The method, URL (as `:scheme`, `:authority` and `:path`) and header fields as an
    /// `HTTPRequest`; the body and the session options are not part of it.
    public var httpRequest: HTTPRequest {
        HTTPRequest(method: method, url: url, headerFields: headers)
    }

    private static func url(of request: HTTPRequest) throws(SessionError) -> URL {
        var missing: [String] = []
        if request.scheme == nil { missing.append(":scheme") }
        if request.authority == nil { missing.append(":authority") }
        if request.path == nil { missing.append(":path") }
        guard missing.isEmpty else {
            throw SessionError(
                .invalidRequest,
                "The HTTPRequest has no \(missing.joined(separator: " or ")): a client request needs a scheme, an authority and a path to make its URL.")
        }
        guard let url = request.url, url.host != nil else {
            throw SessionError(
                .invalidRequest,
                "The HTTPRequest's scheme \(request.scheme ?? ""), authority \(URLRedaction.redacted(request.authority ?? "")) and path \(URLRedaction.redacted(request.path ?? "")) do not make a URL with a host.")
        }
        return url
    }
}

extension HTTPRequest.Method {
    /// The name a request is sent with: `rawValue` upper-cased (``Request/method``); the
    /// common names, already upper-case, by a comparison of small strings (their bits).
    var sentName: String {
        switch rawValue {
        case "GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "OPTIONS": rawValue
        default: rawValue.utf8.contains(where: { (0x61...0x7A).contains($0) }) ? rawValue.uppercased() : rawValue
        }
    }
}
