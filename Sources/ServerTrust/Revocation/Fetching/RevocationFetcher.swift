/// Fetches OCSP responses and CRLs over the network for ``RevocationTrustEvaluator``.
///
/// ServerTrust knows nothing of HTTP: the network is injected through this protocol, as
/// swift-certificates injects its `OCSPRequester`. ServerTrustHTTP provides a libcurl-backed
/// implementation; tests use an in-memory one.
///
/// The contract, which every implementation must keep:
///
/// - **Synchronous and bounded.** `fetch` is called inside a TLS handshake, which waits for it.
///   It must return by `deadline` — with `TrustError.fetchTimedOut(_:)` if nothing complete
///   has arrived — and must never block past it (connect, DNS and transfer included).
/// - **Size-limited.** It must stop reading once the body exceeds
///   ``RevocationFetchRequest/maximumSize`` and return `TrustError.fetchTooLarge(_:)`; it
///   must not buffer an unbounded body first. The evaluator checks the size again.
/// - **No recursion.** The request must not go through a trust policy that itself checks
///   revocation (OCSP and CRL URLs are normally plain `http://`; for an `https://` URL use
///   default validation without revocation), or one handshake could wait on another forever.
/// - **Honest failures.** Any failure — connection refused, HTTP status other than 200, a
///   truncated body — is an error (`fetchFailed`, `fetchHTTPStatus`, … of `TrustError`), never
///   an empty success. The evaluator turns every error into an unknown status, never "good".
/// - **Thread-safe.** Concurrent handshakes call it concurrently.
///
/// The bytes are not trusted: the evaluator verifies every response and CRL it gets
/// (signature, issuer, certificate ID, freshness) before using it.
public protocol RevocationFetcher: Sendable {
    /// Performs `request` and returns the response body.
    ///
    /// - Parameters:
    ///   - request: what to fetch, how, and the size limit.
    ///   - deadline: the instant by which to return, on the continuous clock.
    /// - Returns: the body of a successful (HTTP 200) response, at most
    ///   ``RevocationFetchRequest/maximumSize`` bytes, or why there is none.
    func fetch(_ request: RevocationFetchRequest, deadline: ContinuousClock.Instant) -> Result<[UInt8], TrustError>
}

/// One HTTP request for revocation data: an OCSP query (POST with a body, or GET with the
/// request in the URL, RFC 6960 Appendix A) or a CRL download (GET).
public struct RevocationFetchRequest: Hashable, Sendable, CustomStringConvertible {
    /// What is being fetched.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case ocsp
            case crl
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// An OCSP response (`application/ocsp-response`).
        public static let ocsp = Kind(.ocsp)
        /// A CRL (`application/pkix-crl`), complete or delta.
        public static let crl = Kind(.crl)

        public var description: String { base == .ocsp ? "ocsp" : "crl" }
    }

    public let kind: Kind
    /// The absolute `http://` or `https://` URL; for an OCSP GET it already carries the
    /// encoded request.
    public let url: String
    /// The body to POST, or `nil` for a GET.
    public let body: [UInt8]?
    /// The most bytes of body to accept.
    public let maximumSize: Int

    /// `GET` or `POST`.
    public var method: String { body == nil ? "GET" : "POST" }

    /// The `Content-Type` of the body: `application/ocsp-request` for an OCSP POST, else `nil`.
    public var contentType: String? { body == nil ? nil : "application/ocsp-request" }

    /// The media type a correct response carries, for an `Accept` header.
    public var acceptedContentType: String { kind == .ocsp ? "application/ocsp-response" : "application/pkix-crl" }

    /// An OCSP request sent by POST (RFC 6960 A.1).
    package static func ocspPOST(url: String, body: [UInt8], maximumSize: Int) -> RevocationFetchRequest {
        RevocationFetchRequest(kind: .ocsp, url: url, body: body, maximumSize: maximumSize)
    }

    /// An OCSP request sent by GET, already encoded into `url` (RFC 6960 A.1, RFC 5019 §5):
    /// cacheable by HTTP caches.
    package static func ocspGET(url: String, maximumSize: Int) -> RevocationFetchRequest {
        RevocationFetchRequest(kind: .ocsp, url: url, body: nil, maximumSize: maximumSize)
    }

    /// A CRL download.
    package static func crl(url: String, maximumSize: Int) -> RevocationFetchRequest {
        RevocationFetchRequest(kind: .crl, url: url, body: nil, maximumSize: maximumSize)
    }

    private init(kind: Kind, url: String, body: [UInt8]?, maximumSize: Int) {
        self.kind = kind
        self.url = url
        self.body = body
        self.maximumSize = maximumSize
    }

    public var description: String { "\(kind) \(method) \(url)" }
}

extension TrustError {
    /// A fetch failure's stable name, for metrics and unknown reasons: its code, with the
    /// status for an HTTP status (`fetchTimedOut`, `fetchHTTPStatus(503)`, `unsupportedURL`…).
    package var fetchOutcome: String {
        if code == .fetchHTTPStatus, let status = evidence.httpStatus { return "fetchHTTPStatus(\(status))" }
        return code.description
    }

    /// The unknown revocation status a fetch failure amounts to.
    var unknownReason: RevocationStatus.UnknownReason {
        switch code {
        case .fetchTimedOut: .timeout
        case .fetchTooLarge: .responseTooLarge
        default: .fetchFailed(fetchOutcome)
        }
    }
}
