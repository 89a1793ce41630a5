internal import CCurl
public import ServerTrust

/// The error a ``Session`` throws: what went wrong, with the curl code and message read as a
/// ``TransportFailure``, and the `TrustError` when trust evaluation rejected the server, or the
/// `ResponseSignatureError` when an enforced signed-response policy rejected the response.
///
/// Equality compares ``code`` only, as with `TrustError`.
public struct SessionError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case trustEvaluationFailed, invalidRequest, transferFailed, timedOut, cancelled
            case tooManyRedirects, insecureRedirect, responseTooLarge, sessionShutDown, unsupportedBackend
            case responseSignatureInvalid, contentDecodingFailed
            case uploadFailed, bodyNotReplayable, requestBodyTooLarge
            case sessionNotFound, unsupportedTask
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The server was rejected by its trust policy; ``SessionError/trustError`` says why.
        public static let trustEvaluationFailed = Code(.trustEvaluationFailed)
        /// The request cannot be sent as built (bad URL, plain HTTP not allowed, bad header), or
        /// an adapter's request (URLSession, OpenAPI, Vapor) is refused by the request-admission
        /// rule every adapter applies: the reason names the field or the URL.
        public static let invalidRequest = Code(.invalidRequest)
        /// libcurl failed the transfer (connection refused, TLS error, protocol error…).
        public static let transferFailed = Code(.transferFailed)
        /// A connect or total timeout expired.
        public static let timedOut = Code(.timedOut)
        /// The task was cancelled.
        public static let cancelled = Code(.cancelled)
        /// The redirect hop limit was reached.
        public static let tooManyRedirects = Code(.tooManyRedirects)
        /// A redirect pointed at a plain `http:` URL (or another scheme) from `https:`.
        public static let insecureRedirect = Code(.insecureRedirect)
        /// The response body exceeded the configured maximum.
        public static let responseTooLarge = Code(.responseTooLarge)
        /// The session was shut down.
        public static let sessionShutDown = Code(.sessionShutDown)
        /// libcurl's TLS backend is not OpenSSL.
        public static let unsupportedBackend = Code(.unsupportedBackend)
        /// An enforced signed-response policy rejected the response (of the final hop or a
        /// redirect); ``SessionError/signatureError`` says why.
        public static let responseSignatureInvalid = Code(.responseSignatureInvalid)
        /// The response body could not be decoded (``Session/Configuration/contentDecoding``):
        /// its compressed data is garbled or truncated, or its `Content-Encoding` names a coding
        /// the session cannot decode. The body is withheld, never handed out still encoded.
        public static let contentDecodingFailed = Code(.contentDecodingFailed)
        /// The request body could not be produced: its stream threw, produced more or fewer
        /// bytes than its declared length, or its file could not be opened or read.
        public static let uploadFailed = Code(.uploadFailed)
        /// The request body was needed a second time (a redirect that resends it — 307, 308,
        /// or 301/302 for a method other than `POST` — or libcurl rewinding to resend it) and
        /// it is a stream, which can be read once
        /// (``Request/Body/isReplayable``).
        public static let bodyNotReplayable = Code(.bodyNotReplayable)
        /// A streamed or file body for a signed-response host is larger than
        /// ``Session/Configuration/maximumSignedRequestBodySize``: its digest must be computed
        /// before sending, so it is read into memory, up to that limit.
        public static let requestBodyTooLarge = Code(.requestBodyTooLarge)
        /// An adapter has no session to send the request with: ServerTrustURLSession's
        /// `ServerTrustURLProtocol` registered by hand rather than installed, or the `Session`
        /// it was installed with released. Nothing is sent, over no other stack.
        public static let sessionNotFound = Code(.sessionNotFound)
        /// A task an adapter cannot carry: a URLSession download, WebSocket, or upload task
        /// (whose separate body a `URLProtocol` cannot see).
        public static let unsupportedTask = Code(.unsupportedTask)

        public var description: String { base.rawValue }
    }

    public let code: Code
    /// What went wrong, in words.
    public var reason: String { details.reason }
    /// Set for ``Code/trustEvaluationFailed``.
    public var trustError: TrustError? { details.trustError }
    /// libcurl's result code (`CURLcode`), 0 when curl was not involved.
    public var curlCode: Int { details.curlCode }
    /// libcurl's error buffer text, if any.
    public var curlMessage: String { details.curlMessage }
    /// How the transfer failed on its way to or from the server, read from ``curlCode`` and
    /// ``curlMessage``: set whenever `curlCode` is not 0, and
    /// ``TransportFailure/trustRejected`` for every trust rejection that ended a transfer,
    /// whichever code curl ended it with. Nil when libcurl was not involved: a request refused
    /// before it was sent, a cancelled task, a failure found after the transfer succeeded (a
    /// redirect, a signature).
    public var transportFailure: TransportFailure? { details.transportFailure }
    /// The URL of the hop that failed, as it was requested: user-info and query included.
    ///
    /// - Warning: This is for the program, not for display: it may carry credentials or a
    ///   token. ``description`` shows it without user-info, query or fragment.
    public var url: String? { details.url }
    /// Set for ``Code/responseSignatureInvalid``: why the signature check failed, with the
    /// response's status.
    public var signatureError: ResponseSignatureError? { details.signatureError }
    /// Set for ``Code/trustEvaluationFailed`` when a chain was evaluated: the rejected
    /// evaluation, with the policy, the presented and validated chains and any findings.
    public var rejectedTrust: TrustReport? { details.rejectedTrust }
    /// How many times the failing hop's transfer was attempted: 1, or more when
    /// ``Session/Configuration/retryPolicy`` retried it (``Session/RetryPolicy``). A failure
    /// found after a transfer succeeded (a signature, a redirect, decoding) reports 1.
    public internal(set) var attempts = 1
    /// Set by a transfer that failed at the connection level before any response byte: the
    /// kind of failure a ``Session/RetryPolicy`` may retry. Nil for every other failure.
    var retryableFailure: Session.RetryPolicy.Failures?
    /// Everything set once, in one immutable object shared by every copy.
    private let details: Details

    // Fast path: docs/PERFORMANCE.md#fast-paths, "Fewer frames and copies per request".
    /// Why the error keeps its details out of line: inline, a `SessionError` was 305 bytes (a
    /// `TrustError`, a `ResponseSignatureError`, three strings), and so was every
    /// `Result<Transfer.Outcome, SessionError>` a *successful* request's outcome travels in —
    /// from the transfer to the awaiting task, copied at that size at each step. Boxed, both
    /// are a few dozen bytes; the box is allocated only when an error is made.
    private final class Details: Sendable {
        let reason: String
        let trustError: TrustError?
        let curlCode: Int
        let curlMessage: String
        let transportFailure: TransportFailure?
        let url: String?
        let signatureError: ResponseSignatureError?
        let rejectedTrust: TrustReport?

        init(
            reason: String, trustError: TrustError?, curlCode: Int, curlMessage: String, transportFailure: TransportFailure?,
            url: String?, signatureError: ResponseSignatureError?, rejectedTrust: TrustReport?
        ) {
            self.reason = reason
            self.trustError = trustError
            self.curlCode = curlCode
            self.curlMessage = curlMessage
            self.transportFailure = transportFailure
            self.url = url
            self.signatureError = signatureError
            self.rejectedTrust = rejectedTrust
        }
    }

    /// An error with libcurl's `curlCode` gets its ``transportFailure`` here, read from the code
    /// and message, unless `transportFailure` says what the code cannot (a trust rejection).
    package init(
        _ code: Code, _ reason: String, trustError: TrustError? = nil, curlCode: Int = 0, curlMessage: String = "",
        transportFailure: TransportFailure? = nil, url: String? = nil, signatureError: ResponseSignatureError? = nil,
        rejectedTrust: TrustReport? = nil
    ) {
        self.code = code
        let classified = transportFailure
            ?? (curlCode == 0 ? nil : TransportFailure(curlCode: CURLcode(rawValue: UInt32(truncatingIfNeeded: curlCode)), curlMessage: curlMessage))
        details = Details(
            reason: reason, trustError: trustError, curlCode: curlCode, curlMessage: curlMessage, transportFailure: classified,
            url: url, signatureError: signatureError, rejectedTrust: rejectedTrust)
    }

    /// This error with `url` as the URL of the hop that failed: for an error made where only the
    /// host was known (the host's policy).
    func at(url: String) -> SessionError {
        var error = SessionError(
            code, reason, trustError: trustError, curlCode: curlCode, curlMessage: curlMessage, transportFailure: transportFailure,
            url: url, signatureError: signatureError, rejectedTrust: rejectedTrust)
        error.attempts = attempts
        error.retryableFailure = retryableFailure
        return error
    }

    public static func == (lhs: SessionError, rhs: SessionError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public static let trustEvaluationFailed = SessionError(.trustEvaluationFailed, "")
    public static let invalidRequest = SessionError(.invalidRequest, "")
    public static let transferFailed = SessionError(.transferFailed, "")
    public static let timedOut = SessionError(.timedOut, "")
    public static let cancelled = SessionError(.cancelled, "")
    public static let tooManyRedirects = SessionError(.tooManyRedirects, "")
    public static let insecureRedirect = SessionError(.insecureRedirect, "")
    public static let responseTooLarge = SessionError(.responseTooLarge, "")
    public static let sessionShutDown = SessionError(.sessionShutDown, "")
    public static let responseSignatureInvalid = SessionError(.responseSignatureInvalid, "")
    public static let contentDecodingFailed = SessionError(.contentDecodingFailed, "")
    public static let uploadFailed = SessionError(.uploadFailed, "")
    public static let bodyNotReplayable = SessionError(.bodyNotReplayable, "")
    public static let requestBodyTooLarge = SessionError(.requestBodyTooLarge, "")
    public static let sessionNotFound = SessionError(.sessionNotFound, "")
    public static let unsupportedTask = SessionError(.unsupportedTask, "")

    /// The reason first; for a trust failure, the first line names the check that failed (a
    /// revoked certificate and the CRL that says so, a pin mismatch), then the evidence, then
    /// the URL and libcurl's code. libcurl's text is the consequence of the rejection, not its
    /// cause — a rejection in the OCSP status callback reads "invalid status response" — so it
    /// never leads the message. The URL is shown without user-info, query or fragment, which
    /// may carry credentials or tokens (``url`` has it whole).
    public var description: String {
        var curl: String? { curlCode == 0 ? nil : "curl \(curlCode)" + (curlMessage.isEmpty ? "" : ": \(curlMessage)") }
        let shownURL = url.map { URLRedaction.redacted($0) }
        guard let trustError else {
            var text = reason
            if let shownURL { text += " [\(shownURL)]" }
            if let curl { text += " (\(curl))" }
            return text
        }
        var text = reason + " " + trustError.description
        if let shownURL { text += "\n  URL: \(shownURL)" + (curl.map { " (\($0))" } ?? "") } else if let curl { text += "\n  (\(curl))" }
        return text
    }
}
