public import Foundation
public import ServerTrust

/// An HTTP request.
public struct Request: Sendable {
    public var method: String
    public var url: URL
    /// Header fields in order; names are case-insensitive.
    public var headers: [(name: String, value: String)]
    /// The body, as bytes in memory: the ``uploadBody`` of a ``Body/bytes(_:)`` body, nil for
    /// none or for a stream or file body. Setting it sets ``uploadBody`` (nil removes the body).
    public var body: [UInt8]? {
        get { uploadBody?.bytes }
        set { uploadBody = newValue.map(Body.bytes) }
    }
    /// The body: bytes, a stream of chunks, or a file (``Body``); nil for none.
    public var uploadBody: Body?
    /// Evaluates this request's host instead of the session's trust manager.
    ///
    /// Requests with different evaluators never share TLS sessions, and a connection opened
    /// under another policy is re-evaluated under this one before the request is sent.
    public var trustEvaluator: (any ServerTrustEvaluating)?
    /// The time limit of this request (each redirect hop), overriding
    /// ``Session/Configuration/requestTimeout``; nil (the default) uses the session's.
    /// Must be positive.
    public var timeout: Duration?
    /// The content codings to ask for and decode for this request (each redirect hop),
    /// overriding ``Session/Configuration/contentDecoding``; `[]` turns decoding off; nil (the
    /// default) uses the session's. A coding the runtime libcurl lacks is refused
    /// (``SessionError/Code/invalidRequest``).
    public var contentDecoding: [ContentCoding]?

    /// Whether the request may be sent twice with the effect of once, so that
    /// ``Session/Configuration/retryPolicy`` may retry it. Default nil: by ``method`` — `GET`,
    /// `HEAD`, `PUT`, `DELETE`, `OPTIONS` and `TRACE` are (RFC 9110 §9.2.2), `POST`, `PATCH` and
    /// others are not. Set `true` for a request the server deduplicates (an idempotency key),
    /// `false` to never retry this one. Redirect hops keep the value. A streamed body
    /// (``Body/isReplayable`` false) is never retried, whatever this says.
    public var isIdempotent: Bool?

    public init(
        method: String = "GET", url: URL, headers: [(name: String, value: String)] = [], body: [UInt8]? = nil,
        trustEvaluator: (any ServerTrustEvaluating)? = nil, timeout: Duration? = nil, contentDecoding: [ContentCoding]? = nil,
        isIdempotent: Bool? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.uploadBody = body.map(Body.bytes)
        self.trustEvaluator = trustEvaluator
        self.timeout = timeout
        self.contentDecoding = contentDecoding
        self.isIdempotent = isIdempotent
    }

    /// A request with a streamed, file or in-memory body (``Body``).
    public init(
        method: String, url: URL, headers: [(name: String, value: String)] = [], uploadBody: Body,
        trustEvaluator: (any ServerTrustEvaluating)? = nil, timeout: Duration? = nil, contentDecoding: [ContentCoding]? = nil,
        isIdempotent: Bool? = nil
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

    private static let idempotentMethods: Set<String> = ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"]

    /// ``isIdempotent``, else whether ``method`` is idempotent; never for a body that cannot be
    /// sent twice (a stream: ``Body/isReplayable``), whatever ``isIdempotent`` says.
    var mayBeRetried: Bool {
        guard uploadBody?.isReplayable ?? true else { return false }
        return isIdempotent ?? Self.idempotentMethods.contains(method.uppercased())
    }

    /// The first value of a header, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}
