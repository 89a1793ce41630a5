import Foundation
import HTTPTypes
internal import CCurl
internal import CServerTrustCurlShims

/// Builds the easy handles of a session's transfers.
///
/// A handle is made for one policy, with every option that holds for all of that policy's
/// requests in the session (callbacks, TLS settings, the policy's share, user agent, connect timeout,
/// proxy), and is then pointed at one request at a time with ``prepare(_:for:)``. The loop keeps
/// finished handles for reuse by the same policy (`MultiLoop`), as a libcurl program reuses its
/// handle (docs/PERFORMANCE.md#fast-paths, "Idle easy handles"). Nothing about trust lives in the handle: connections are evaluated in the TLS
/// callbacks and every request is admitted by the prerequisite guard, whichever handle runs it.
enum EasyHandleConfigurator {
    /// A new handle carrying `policy`'s constant options.
    static func makeHandle(for policy: TrustPolicy, share: ShareHandle?, configuration: Session.Configuration) throws(SessionError) -> EasyHandle {
        do {
            return try configuredHandle(for: policy, share: share, configuration: configuration)
        } catch {
            throw SessionError(error)
        }
    }

    private static func configuredHandle(
        for policy: TrustPolicy, share: ShareHandle?, configuration: Session.Configuration
    ) throws(CurlError) -> EasyHandle {
        let easy = try EasyHandle(policyID: policy.id)
        try easy.set(CURLOPT_NOSIGNAL, 1)
        try easy.set(CURLOPT_FOLLOWLOCATION, 0)  // the session follows redirects, hop by hop
        try easy.set(CURLOPT_PROTOCOLS_STR, configuration.allowsPlainHTTP ? "https,http" : "https")
        // The user agent goes out as a request header line (`point(_:at:)`), not through
        // CURLOPT_USERAGENT: libcurl 7.88 formats that option into a new header string with its
        // own printf before every transfer (`Curl_pretransfer`), whether or not a header line
        // replaces it. The option is set only with a proxy (`configureProxy`), for the CONNECT request, which custom header
        // lines do not reach (CURLHEADER_SEPARATE, the default).
        // Fast path: docs/PERFORMANCE.md#fast-paths, "User agent as a header line".
        easy.userAgentLine = configuration.userAgent.isEmpty ? nil : "User-Agent: \(configuration.userAgent)"
        try easy.set(CURLOPT_CONNECTTIMEOUT_MS, milliseconds(configuration.connectTimeout))
        try easy.set(CURLOPT_HTTP_VERSION, Int(configuration.httpVersion.prefersHTTP2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1))
        try easy.set(CURLOPT_PIPEWAIT, 1)
        // libcurl's own absolute limit (by the wall clock), beside the guard's stamp expiry.
        try easy.set(CURLOPT_MAXLIFETIME_CONN, max(1, Int(policy.maximumConnectionLifetime.rounded(.up))))
        try easy.set(CURLOPT_ACCEPT_ENCODING, nil)
        try easy.set(CURLOPT_RESOLVE, list: configuration.resolve)
        try configureProxy(easy, configuration: configuration)
        try check(CServerTrustCurlShims_easy_setopt_write_callback(easy.pointer, CURLOPT_HEADERFUNCTION, headerCallback), CURLOPT_HEADERFUNCTION)
        try check(CServerTrustCurlShims_easy_setopt_write_callback(easy.pointer, CURLOPT_WRITEFUNCTION, writeCallback), CURLOPT_WRITEFUNCTION)
        // Never curl's default (fread from READDATA, stdin when unset): ours aborts without a transfer.
        try check(CServerTrustCurlShims_easy_setopt_write_callback(easy.pointer, CURLOPT_READFUNCTION, readCallback), CURLOPT_READFUNCTION)

        // TLS: our callback verifies with the policy's own store, so curl loads no CA file
        // (libcurl 7.88 would re-read a CAPATH on every new connection). VERIFYPEER stays on and
        // the ctx callback forces SSL_VERIFY_PEER regardless; curl's host check runs after ours.
        try easy.set(CURLOPT_CAINFO, nil)
        try easy.set(CURLOPT_CAPATH, nil)
        try easy.set(CURLOPT_SSL_VERIFYPEER, configuration.unsafeCurlVerifyPeerOff ? 0 : 1)
        try easy.set(CURLOPT_SSL_VERIFYHOST, policy.isDisabledForDebugging ? 0 : 2)
        try check(CServerTrustCurlShims_easy_setopt_ssl_ctx_callback(easy.pointer, sslContextCallback), CURLOPT_SSL_CTX_FUNCTION)
        try check(CServerTrustCurlShims_easy_setopt_prereq_callback(
            easy.pointer, configuration.unsafeDisableConnectionGuard ? unguardedPrerequisiteCallback : prerequisiteCallback), CURLOPT_PREREQFUNCTION)
        // Every callback's data is the handle; the handle names its current transfer
        // (``EasyHandle/transfer``), nil while it waits, when every callback aborts.
        let unretained = Unmanaged.passUnretained(easy).toOpaque()
        try easy.set(CURLOPT_HEADERDATA, pointer: unretained)
        try easy.set(CURLOPT_READDATA, pointer: unretained)
        try easy.set(CURLOPT_WRITEDATA, pointer: unretained)
        try easy.set(CURLOPT_SSL_CTX_DATA, pointer: unretained)
        try easy.set(CURLOPT_PREREQDATA, pointer: unretained)
        // And so is curl's private pointer: the loop finds a finished transfer from its `CURL*`
        // (``EasyHandle/owner(of:)``), without a table keyed by the pointer.
        try easy.set(CURLOPT_PRIVATE, pointer: unretained)
        if let share { try easy.setShare(share) }
        return easy
    }

    /// Points `easy`, new or reused, at `transfer`: every option that varies per request is set
    /// here, each time, so nothing of an earlier request carries over.
    static func prepare(_ easy: EasyHandle, for transfer: Transfer) throws(SessionError) {
        guard easy.policyID == transfer.policy.id else {
            throw SessionError(.transferFailed, "An easy handle of another policy was offered for \(transfer.policy.host).", url: transfer.url)
        }
        do {
            try point(easy, at: transfer)
        } catch {
            throw SessionError(error, url: transfer.url)
        }
    }

    private static func point(_ easy: EasyHandle, at transfer: Transfer) throws(CurlError) {
        easy.transfer = transfer
        easy.clearErrorMessage()
        try easy.set(CURLOPT_URL, transfer.url)
        try easy.set(CURLOPT_TIMEOUT_MS, transfer.timeout.map(milliseconds) ?? 0)  // per request: its own or the session's
        try configureMethod(easy, transfer: transfer)
        // No `Expect: 100-continue`: curl would wait up to a second for a 100 that many servers never send.
        let hasBody = transfer.body != nil || transfer.upload != nil
        if transfer.headers.isEmpty && !hasBody {
            try easy.setRequestHeaders(easy.defaultHeaderLines)
        } else {
            // The name as the caller spelled it (`rawName`): HTTP/1.1 servers see the case given.
            var lines = transfer.headers.map { "\($0.name.rawName): \($0.value)" }
            // The session's user agent unless the request names its own, as curl would do with
            // CURLOPT_USERAGENT: one User-Agent field either way.
            if let userAgent = easy.userAgentLine, transfer.headers[.userAgent] == nil { lines.append(userAgent) }
            if hasBody { lines.append("Expect:") }
            try easy.setRequestHeaders(lines)
        }
        // Per request: a signed-response host gets the body undecoded, to verify it first.
        try easy.set(CURLOPT_ACCEPT_ENCODING, transfer.contentDecoding.acceptEncoding)
        try easy.set(CURLOPT_HTTP_CONTENT_DECODING, transfer.contentDecoding.decodesInLibcurl ? 1 : 0)
        // A retry the guard asked for (expired stamp, resumed without a staple) gets a new
        // connection and a full handshake, never a resumed session.
        let fresh = transfer.isOnFreshConnection
        try easy.set(CURLOPT_FRESH_CONNECT, fresh ? 1 : 0)
        try easy.set(CURLOPT_FORBID_REUSE, 0)
        try easy.set(CURLOPT_SSL_SESSIONID_CACHE, fresh || !transfer.policy.resumesSessions ? 0 : 1)
    }

    /// Unhooks a finished transfer from `easy` before the handle waits for its next request:
    /// with no transfer every callback fails closed (each returns an abort for nil).
    static func detach(_ easy: EasyHandle) {
        easy.transfer = nil
    }

    private static func configureMethod(_ easy: EasyHandle, transfer: Transfer) throws(CurlError) {
        // Methods are sticky in curl: HTTPGET returns a used handle to GET (and clears NOBODY
        // and UPLOAD), and a custom method is cleared, before this request's method is set.
        try easy.set(CURLOPT_HTTPGET, 1)
        try easy.set(CURLOPT_CUSTOMREQUEST, nil)
        switch transfer.method {
        case "GET" where transfer.body == nil && transfer.upload == nil:
            break
        case "HEAD":
            try easy.set(CURLOPT_NOBODY, 1)
        default:
            if let upload = transfer.upload {
                // A POST whose body curl pulls through the read callback: POSTFIELDS NULL
                // (which also drops an earlier request's copied fields), the length as
                // Content-Length, or -1 for chunked on HTTP/1.1 (DATA frames on HTTP/2).
                // Not CURLOPT_UPLOAD: it would make every method PUT; the method is set below.
                try easy.set(CURLOPT_POSTFIELDS, pointer: nil)
                try easy.setPostFieldSize(upload.length ?? -1)
            } else if let body = transfer.body {
                try easy.setBody(body)
            }
            if transfer.method != "POST" || (transfer.body == nil && transfer.upload == nil) {
                try easy.set(CURLOPT_CUSTOMREQUEST, transfer.method)
            }
        }
    }

    /// Sets the proxy, validated with the session (``Session/Configuration/Proxy/validate()``).
    private static func configureProxy(_ easy: EasyHandle, configuration: Session.Configuration) throws(CurlError) {
        guard let proxy = configuration.proxy, let url = proxy.url else {
            try easy.set(CURLOPT_PROXY, "")  // "" = no proxy, and curl ignores the environment
            // Without a no-proxy list of its own, libcurl 7.88 reads `no_proxy` and `NO_PROXY`
            // from the environment for every transfer (`create_conn_helper_init_proxy`), only to
            // bypass a proxy there is none of: two `getenv` scans of the whole environment. An
            // empty list has the same meaning and reads nothing.
            // Fast path: docs/PERFORMANCE.md#fast-paths, "Empty no-proxy list".
            try easy.set(CURLOPT_NOPROXY, "")
            return
        }
        try easy.set(CURLOPT_PROXY, url)
        try easy.set(CURLOPT_USERAGENT, configuration.userAgent)  // for CONNECT; requests carry the header line
        try easy.set(CURLOPT_NOPROXY, proxy.noProxy)
        try easy.set(CURLOPT_HTTPPROXYTUNNEL, 1)
        try easy.set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }

    private static func check(_ code: CURLcode, _ option: CURLoption) throws(CurlError) {
        guard code == CURLE_OK else { throw CurlError(.setOption(option), code: code) }
    }
}

extension SessionError {
    /// A wrapper's failure as the session reports it: a refused option is an invalid request
    /// (a value curl cannot take), running out of memory a failed transfer.
    init(_ error: CurlError, url: String? = nil) {
        switch error.operation {
        case .setOption:
            self.init(.invalidRequest, error.description, curlCode: error.code.map { Int($0.rawValue) } ?? 0, url: url)
        case .createHandle, .appendToList:
            self.init(.transferFailed, error.description, url: url)
        }
    }
}


// MARK: - C callbacks (loop thread, inside curl_multi_perform)

/// Runs `body` with the transfer a callback's data pointer (its ``EasyHandle``) runs now,
/// borrowed (``EasyHandle/unretainedTransfer``); returns `otherwise`, and the callback aborts,
/// for a handle waiting between requests.
private func withRunningTransfer<Result>(_ user: UnsafeMutableRawPointer?, otherwise: Result, _ body: (Transfer) -> Result) -> Result {
    guard let user, let transfer = Unmanaged<EasyHandle>.fromOpaque(user).takeUnretainedValue().unretainedTransfer else { return otherwise }
    return transfer._withUnsafeGuaranteedRef(body)
}

private let headerCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data, size, count, user in
    guard let data else { return 0 }
    return withRunningTransfer(user, otherwise: 0) { $0.receiveHeaderLine(UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0 }
}

private let writeCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data, size, count, user in
    guard let data else { return 0 }
    return withRunningTransfer(user, otherwise: 0) { $0.receiveBody(UnsafeRawBufferPointer(start: data, count: size * count)) }
}

private let readCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data, size, count, user in
    guard let data else { return Int(CURL_READFUNC_ABORT) }
    return withRunningTransfer(user, otherwise: Int(CURL_READFUNC_ABORT)) { $0.sendBody(into: UnsafeMutableRawBufferPointer(start: data, count: size * count)) }
}

private let sslContextCallback: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> CURLcode = {
    _, sslContext, user in
    guard let sslContext else { return CURLE_ABORTED_BY_CALLBACK }
    return withRunningTransfer(user, otherwise: CURLE_ABORTED_BY_CALLBACK) {
        $0.configureNewConnection(sslContext: OpaquePointer(sslContext)) ? CURLE_OK : CURLE_ABORTED_BY_CALLBACK
    }
}

private let prerequisiteCallback: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<CChar>?, Int32, Int32) -> Int32 = {
    user, _, _, _, _ in
    withRunningTransfer(user, otherwise: Int32(CURL_PREREQFUNC_ABORT)) {
        $0.admitConnection(disableGuard: false) ? Int32(CURL_PREREQFUNC_OK) : Int32(CURL_PREREQFUNC_ABORT)
    }
}

/// Testing only (``Session/Configuration/unsafeDisableConnectionGuard``): accepts whatever stamp
/// the connection carries, as a client without the guard would.
private let unguardedPrerequisiteCallback: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<CChar>?, Int32, Int32) -> Int32 = {
    user, _, _, _, _ in
    withRunningTransfer(user, otherwise: Int32(CURL_PREREQFUNC_ABORT)) {
        $0.admitConnection(disableGuard: true) ? Int32(CURL_PREREQFUNC_OK) : Int32(CURL_PREREQFUNC_ABORT)
    }
}
