#if URLSessionAdapter
/// Why ``ServerTrustURLProtocol`` refused a request before the `Session` saw it: the
/// underlying error of the `URLError` the task fails with.
///
/// Equality compares ``code`` only, as with `SessionError`.
public struct URLSessionAdapterError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of refusal; compare with the static members.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case sessionNotFound, unsupportedTask, invalidRequest
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The protocol has no `Session`: it was registered by hand rather than installed with
        /// ``ServerTrustURLProtocol/install(in:session:)``, or the installed `Session` was
        /// released. URLError code `.unsupportedURL`.
        public static let sessionNotFound = Code(.sessionNotFound)
        /// A download, WebSocket, or upload task (whose separate body a protocol cannot see).
        /// URLError code `.unsupportedURL`.
        public static let unsupportedTask = Code(.unsupportedTask)
        /// The `URLRequest` cannot be sent: no URL, an invalid method, or header fields that
        /// ServerTrustHTTP's request admission (the rule every adapter applies) refuses — a name
        /// that is no token, CR, LF or NUL in a value, a `Host` naming another server than the
        /// URL, a `Content-Length` that is no byte count or not the body's, `Transfer-Encoding`.
        /// URLError code `.badURL`. (A failing `httpBodyStream` fails the request in the
        /// `Session`: `SessionError` `uploadFailed`.)
        public static let invalidRequest = Code(.invalidRequest)

        /// The code's name, e.g. `sessionNotFound`.
        public var description: String { base.rawValue }
    }

    /// What kind of refusal this is.
    public let code: Code
    /// What happened and what to do about it.
    public let reason: String

    init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// Compares ``code`` only, so tests can assert the kind of failure without matching prose.
    public static func == (lhs: URLSessionAdapterError, rhs: URLSessionAdapterError) -> Bool { lhs.code == rhs.code }
    /// Hashes ``code`` only, as equality compares it.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// The code and the reason.
    public var description: String { "\(code): \(reason)" }
}
#endif
