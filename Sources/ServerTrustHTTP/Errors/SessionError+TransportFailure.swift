extension SessionError {
    /// How a transfer failed on its way to or from the server: the one reading of libcurl's
    /// result code, so that a caller can tell a name that does not resolve from a refused
    /// connection, a failed handshake or a dropped connection without knowing curl's numbers.
    ///
    /// ``SessionError/transportFailure`` carries it beside ``SessionError/curlCode``, which stays
    /// for diagnostics: ``other`` is every code not named here, and `curlCode` says which. The
    /// session's retries (``Session/RetryPolicy/Failures``), the URLSession adapter's `URLError`
    /// codes and the `servertrust` command's hints are all decided from this value.
    ///
    /// A closed set that may grow: a later version may name a kind that is ``other`` today, so
    /// a `switch` over it needs a `default`.
    public struct TransportFailure: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case nameResolutionFailed, connectionFailed, timedOut
            case tlsHandshakeFailed, tlsAlertReceived, tlsFailed, trustRejected
            case connectionReset, emptyReply, responseTruncated, http2ConnectionFailed, http2StreamFailed
            case proxyFailed, tooManyRedirects, abortedByCallback, other
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A host name did not resolve: the server's or the proxy's
        /// (`CURLE_COULDNT_RESOLVE_HOST`, `CURLE_COULDNT_RESOLVE_PROXY`).
        public static let nameResolutionFailed = TransportFailure(.nameResolutionFailed)
        /// No connection could be made: refused, unreachable, or no address answered
        /// (`CURLE_COULDNT_CONNECT`).
        public static let connectionFailed = TransportFailure(.connectionFailed)
        /// The connect timeout or the request's time limit expired (`CURLE_OPERATION_TIMEDOUT`).
        public static let timedOut = TransportFailure(.timedOut)
        /// The TLS handshake failed for a reason other than the server's certificate: no
        /// protocol version or cipher in common, an alert from the server, a peer that does not
        /// speak TLS (`CURLE_SSL_CONNECT_ERROR`). A rejection by the trust policy during the
        /// handshake is ``trustRejected``, not this.
        public static let tlsHandshakeFailed = TransportFailure(.tlsHandshakeFailed)
        /// The server ended the connection with a TLS alert on a send or receive after the
        /// handshake: under TLS 1.3, how a server refuses the client certificate, reported on the
        /// first read (`CURLE_RECV_ERROR` or `CURLE_SEND_ERROR` whose message names an alert).
        public static let tlsAlertReceived = TransportFailure(.tlsAlertReceived)
        /// Another TLS failure of libcurl's: a local certificate, cipher or engine problem, a
        /// failed TLS shutdown, or one of libcurl's own checks of the peer (issuer, pinned public
        /// key, certificate status), which ServerTrust does not configure
        /// (`CURLE_SSL_CERTPROBLEM`, `CURLE_SSL_CIPHER`, `CURLE_SSL_ENGINE_INITFAILED`,
        /// `CURLE_SSL_SHUTDOWN_FAILED`, `CURLE_SSL_ISSUER_ERROR`,
        /// `CURLE_SSL_PINNEDPUBKEYNOTMATCH`, `CURLE_SSL_INVALIDCERTSTATUS`).
        public static let tlsFailed = TransportFailure(.tlsFailed)
        /// The server's certificate was refused: by the trust policy (every
        /// ``SessionError/Code/trustEvaluationFailed``, whatever curl code the rejection ended
        /// the handshake with; ``SessionError/trustError`` says why), or by libcurl's own peer
        /// verification (`CURLE_PEER_FAILED_VERIFICATION`).
        public static let trustRejected = TransportFailure(.trustRejected)
        /// A send or receive failed: the peer reset or closed the connection
        /// (`CURLE_SEND_ERROR`, `CURLE_RECV_ERROR` without a TLS alert).
        public static let connectionReset = TransportFailure(.connectionReset)
        /// The server closed the connection without a byte of response (`CURLE_GOT_NOTHING`):
        /// what a server closing an idle keep-alive connection, or nginx's `return 444`, looks
        /// like.
        public static let emptyReply = TransportFailure(.emptyReply)
        /// The connection closed before the whole response body arrived (`CURLE_PARTIAL_FILE`).
        public static let responseTruncated = TransportFailure(.responseTruncated)
        /// The HTTP/2 connection failed, a `GOAWAY` among other causes (`CURLE_HTTP2`).
        public static let http2ConnectionFailed = TransportFailure(.http2ConnectionFailed)
        /// The HTTP/2 stream was refused or reset (`REFUSED_STREAM`, `RST_STREAM`:
        /// `CURLE_HTTP2_STREAM`).
        public static let http2StreamFailed = TransportFailure(.http2StreamFailed)
        /// The proxy's handshake failed (`CURLE_PROXY`). A proxy whose name does not resolve is
        /// ``nameResolutionFailed``.
        public static let proxyFailed = TransportFailure(.proxyFailed)
        /// libcurl's redirect limit was reached (`CURLE_TOO_MANY_REDIRECTS`). A ``Session``
        /// follows redirects itself and reports its own limit as
        /// ``SessionError/Code/tooManyRedirects`` with no curl code.
        public static let tooManyRedirects = TransportFailure(.tooManyRedirects)
        /// One of the session's own callbacks stopped the transfer: a response over its size
        /// limit, a request body that could not be produced, a reused connection the connection
        /// guard refused (`CURLE_WRITE_ERROR`, `CURLE_ABORTED_BY_CALLBACK`).
        /// ``SessionError/code`` says which.
        public static let abortedByCallback = TransportFailure(.abortedByCallback)
        /// Any other libcurl failure; ``SessionError/curlCode`` and ``SessionError/curlMessage``
        /// say which.
        public static let other = TransportFailure(.other)

        public var description: String { base.rawValue }
    }
}
