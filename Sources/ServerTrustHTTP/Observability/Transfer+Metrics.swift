internal import CCurl
internal import CServerTrustCurlShims

extension Transfer {
    /// Records the TLS handshake of the connection this transfer opened, if it opened one
    /// (loop thread, when the transfer ends, before its handle is reused).
    ///
    /// `CURLINFO_NUM_CONNECTS` is 0 for a request on a kept-alive or multiplexed connection,
    /// which makes no handshake: that is curl's documented signal (7.88 also leaves
    /// `CURLINFO_APPCONNECT_TIME_T` at 0 then, HTTP/1.1 and HTTP/2 alike, but does not promise
    /// it). `APPCONNECT_TIME_T` stays 0 when the handshake did not complete (a rejected server). The duration is the TLS handshake alone: from TCP (or the
    /// proxy tunnel) connected to TLS done, `APPCONNECT_TIME_T − CONNECT_TIME_T`.
    func recordHandshakeDuration() {
        guard isTLS, let metrics = policy.metrics, let easy, easy.info(CURLINFO_NUM_CONNECTS) > 0 else { return }
        var connected: curl_off_t = 0
        var established: curl_off_t = 0
        guard CServerTrustCurlShims_easy_getinfo_off_t(easy.pointer, CURLINFO_CONNECT_TIME_T, &connected) == CURLE_OK,
            CServerTrustCurlShims_easy_getinfo_off_t(easy.pointer, CURLINFO_APPCONNECT_TIME_T, &established) == CURLE_OK,
            established > 0, established >= connected
        else { return }
        metrics.handshakeCompleted(nanoseconds: Int64(established - connected) * 1000)
    }
}
