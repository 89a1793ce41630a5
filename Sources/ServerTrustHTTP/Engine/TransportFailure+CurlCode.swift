internal import CCurl

extension SessionError.TransportFailure {
    /// The kind of a transfer that libcurl ended with `curlCode`: the one place a curl number is
    /// read for its meaning. `curlMessage`, libcurl's error text, tells a TLS alert on a send or
    /// receive from a dropped connection; curl gives both the same code.
    init(curlCode: CURLcode, curlMessage: String) {
        switch curlCode {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: self = .nameResolutionFailed
        case CURLE_COULDNT_CONNECT: self = .connectionFailed
        case CURLE_OPERATION_TIMEDOUT: self = .timedOut
        case CURLE_SSL_CONNECT_ERROR: self = .tlsHandshakeFailed
        case CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_SHUTDOWN_FAILED,
            CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS:
            self = .tlsFailed
        // 51 is what libcurl before 7.62 returned for a peer certificate it refused.
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_OBSOLETE51: self = .trustRejected
        case CURLE_SEND_ERROR, CURLE_RECV_ERROR: self = curlMessage.lowercased().contains("alert") ? .tlsAlertReceived : .connectionReset
        case CURLE_GOT_NOTHING: self = .emptyReply
        case CURLE_PARTIAL_FILE: self = .responseTruncated
        case CURLE_HTTP2: self = .http2ConnectionFailed
        case CURLE_HTTP2_STREAM: self = .http2StreamFailed
        case CURLE_PROXY: self = .proxyFailed
        case CURLE_TOO_MANY_REDIRECTS: self = .tooManyRedirects
        case CURLE_WRITE_ERROR, CURLE_ABORTED_BY_CALLBACK: self = .abortedByCallback
        default: self = .other
        }
    }
}
