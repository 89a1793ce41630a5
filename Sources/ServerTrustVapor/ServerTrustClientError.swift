#if VaporClient
import ServerTrustHTTP

/// A Vapor `ClientRequest` that ``ServerTrustClient`` refused to send because it cannot be
/// turned into a ServerTrustHTTP `Request` without changing what it says.
///
/// Thrown before anything is sent: no connection is opened. Everything that fails *after* the
/// request was handed to the session — a trust failure, a signature, a timeout — is the
/// session's `SessionError`, unchanged. Equality compares ``code`` only, so a test asserts the
/// kind of refusal without matching prose.
public struct ServerTrustClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What could not be mapped.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Base: String, Hashable, Sendable {
            case invalidURL, invalidMethod, invalidHeaderName, invalidHeaderValue, conflictingHost, conflictingContentLength
            case transferEncoding
        }

        let base: Base
        init(_ base: Base) { self.base = base }

        /// The URL is not an absolute URL with a scheme and a host (`ClientRequest.url`), or it
        /// holds CR, LF or NUL.
        public static let invalidURL = Code(.invalidURL)
        /// The method is not an RFC 9110 token (`HTTPMethod.RAW` with a space, say).
        public static let invalidMethod = Code(.invalidMethod)
        /// A header name is not an RFC 9110 token.
        public static let invalidHeaderName = Code(.invalidHeaderName)
        /// A header value holds CR, LF or NUL, which would end the field (swift-http-types would
        /// turn them into spaces, changing the value; the client refuses instead).
        public static let invalidHeaderValue = Code(.invalidHeaderValue)
        /// A `Host` field names another server than the URL: the URL decides which server is
        /// reached and which policy evaluates it, so a request that would tell the server it is
        /// for another host is refused. The same server is the URL's host, ASCII case ignored,
        /// with the URL's port, or with none when that is the scheme's default (443 for https);
        /// such a field is left out, the session sending the URL's authority. (A `Host` field
        /// copied from an inbound request is the usual cause of a refusal: do not forward it.)
        public static let conflictingHost = Code(.conflictingHost)
        /// A `Content-Length` field is not a byte count, or disagrees with another or with the
        /// body's size. (One that agrees is left to the session, which sends the body with its own.)
        public static let conflictingContentLength = Code(.conflictingContentLength)
        /// A `Transfer-Encoding` field: the body is sent whole from memory and its framing is the
        /// session's (`Content-Length` on HTTP/1.1, DATA frames on HTTP/2).
        public static let transferEncoding = Code(.transferEncoding)

        public var description: String { base.rawValue }
    }

    /// What could not be mapped.
    public let code: Code
    /// Why, naming the part of the request (the header, the URL without its query, the method).
    public let reason: String

    init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// A refusal of ServerTrustHTTP's request admission, the rule every adapter applies, under
    /// this client's code for its kind.
    init(_ refusal: RequestAdmission.Refusal) {
        switch refusal.kind {
        case .invalidTarget: self.init(.invalidURL, refusal.reason)
        case .invalidHeaderName: self.init(.invalidHeaderName, refusal.reason)
        case .invalidHeaderValue: self.init(.invalidHeaderValue, refusal.reason)
        case .conflictingHost: self.init(.conflictingHost, refusal.reason)
        case .conflictingContentLength: self.init(.conflictingContentLength, refusal.reason)
        case .transferEncoding: self.init(.transferEncoding, refusal.reason)
        }
    }

    public static func == (lhs: ServerTrustClientError, rhs: ServerTrustClientError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String { "ServerTrustClient refused the request (\(code)): \(reason)" }
}
#endif
