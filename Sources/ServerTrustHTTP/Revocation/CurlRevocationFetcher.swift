import Foundation
internal import CCurl
internal import CServerTrustCurlShims
public import ServerTrust

/// Fetches OCSP responses and CRLs with libcurl, for `RevocationTrustEvaluator`.
///
/// Each fetch is one blocking `curl_easy_perform` on the calling thread — the TLS handshake
/// waiting for it — bounded by the deadline (connect and transfer) and the size limit. It never
/// recurses into a trust policy: `http://` URLs carry no TLS, and `https://` URLs are verified
/// by libcurl's own default validation against the system bundle, with no revocation check.
///
/// - Note: while a fetch runs, the transfers on the same loop wait (libcurl 7.88 has no
///   asynchronous certificate verification). A `Session` runs every policy whose evaluator
///   `ServerTrustEvaluating.mayFetchRevocationData` on a loop of its own, so
///   that is the requests to that host only; other hosts go on. Keep the revocation time budget
///   short all the same; the shared cache and single-flight fetching make a fetch rare.
public struct CurlRevocationFetcher: RevocationFetcher {
    /// The User-Agent sent with revocation requests.
    public let userAgent: String
    /// curl `HOST:PORT:ADDRESS` entries, as ``Session/Configuration/resolve``.
    public let resolve: [String]

    public init(userAgent: String = "ServerTrust/1 libcurl/\(CurlRuntime.libcurlVersion)", resolve: [String] = []) {
        self.userAgent = userAgent
        self.resolve = resolve
    }

    public func fetch(_ request: RevocationFetchRequest, deadline: ContinuousClock.Instant) -> Result<[UInt8], TrustError> {
        let lower = request.url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
            return .failure(.unsupportedURL(request.url))
        }
        let remaining = ContinuousClock.now.duration(to: deadline)
        let milliseconds = Int(remaining.components.seconds) * 1000 + Int(remaining.components.attoseconds / 1_000_000_000_000_000)
        guard milliseconds > 0 else { return .failure(.fetchTimedOut("no time left for \(request.url)")) }

        let sink = FetchSink(limit: request.maximumSize)
        do {
            let easy = try EasyHandle()
            try easy.set(CURLOPT_URL, request.url)
            try easy.set(CURLOPT_NOSIGNAL, 1)
            try easy.set(CURLOPT_PROTOCOLS_STR, "http,https")
            try easy.set(CURLOPT_FOLLOWLOCATION, 0)
            try easy.set(CURLOPT_PROXY, "")
            try easy.set(CURLOPT_USERAGENT, userAgent)
            try easy.set(CURLOPT_TIMEOUT_MS, milliseconds)
            try easy.set(CURLOPT_CONNECTTIMEOUT_MS, milliseconds)
            try easy.set(CURLOPT_RESOLVE, list: resolve)
            try easy.set(CURLOPT_HTTPHEADER, list: ["Accept: \(request.acceptedContentType)"] + (request.contentType.map { ["Content-Type: \($0)"] } ?? []))
            if let body = request.body { try easy.setBody(body) } else { try easy.set(CURLOPT_HTTPGET, 1) }
            let unretained = Unmanaged.passUnretained(sink).toOpaque()
            try easy.set(CURLOPT_WRITEDATA, pointer: unretained)
            try easy.set(CURLOPT_HEADERDATA, pointer: unretained)
            guard CServerTrustCurlShims_easy_setopt_write_callback(easy.pointer, CURLOPT_WRITEFUNCTION, fetchWriteCallback) == CURLE_OK,
                CServerTrustCurlShims_easy_setopt_write_callback(easy.pointer, CURLOPT_HEADERFUNCTION, fetchHeaderCallback) == CURLE_OK,
                CServerTrustCurlShims_easy_setopt_ssl_ctx_callback(easy.pointer, fetchSSLContextCallback) == CURLE_OK
            else {
                return .failure(.fetchFailed("curl refused the write, header or SSL context callback"))
            }
            let code = curl_easy_perform(easy.pointer)
            if sink.headersOverflowed {
                return .failure(.fetchTooLarge("\(request.url): response headers over \(FetchSink.headerLimit) bytes"))
            }
            if sink.overflowed { return .failure(.fetchTooLarge("\(request.url): body over \(request.maximumSize) bytes")) }
            switch code {
            case CURLE_OK:
                let status = easy.info(CURLINFO_RESPONSE_CODE)
                guard status == 200 else { return .failure(.fetchHTTPStatus(status, request.url)) }
                return .success(sink.bytes)
            case CURLE_OPERATION_TIMEDOUT:
                return .failure(.fetchTimedOut("\(request.url): \(easy.errorMessage)"))
            default:
                var text = easy.errorMessage.isEmpty ? String(cString: curl_easy_strerror(code)) : easy.errorMessage
                if code == CURLE_SSL_CONNECT_ERROR, TLSFloor.isProtocolVersionRefusal(text) {
                    text = "the responder offers no protocol version at or above \(TLSFloor.minimumProtocolName), the lowest ServerTrust accepts (\(text))"
                }
                return .failure(.fetchFailed("\(request.url): \(text)"))
            }
        } catch {
            return .failure(.fetchFailed("\(request.url): \(error)"))
        }
    }
}

/// The body of one fetch; used by one `curl_easy_perform` on one thread.
private final class FetchSink {
    /// The most header bytes a revocation response may carry (every response of the transfer,
    /// 1xx included). libcurl 7.88 limits one header line, not their sum, so without this a
    /// responder sending headers without end would hold the handshake until the time budget.
    static let headerLimit = 32 << 10
    let limit: Int
    var bytes: [UInt8] = []
    var overflowed = false
    var headerBytes = 0
    var headersOverflowed = false
    init(limit: Int) { self.limit = limit }
}

private let fetchWriteCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data, size, count, user in
    guard let data, let user else { return 0 }
    let sink = Unmanaged<FetchSink>.fromOpaque(user).takeUnretainedValue()
    let length = size * count
    guard sink.bytes.count + length <= sink.limit else {
        sink.overflowed = true
        return 0
    }
    sink.bytes.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
    return length
}

/// An `https://` fetch writes no TLS secrets to `SSLKEYLOGFILE` either (``TLSBridge/disableKeyLog(_:)``),
/// and speaks nothing below ``TLSFloor``.
private let fetchSSLContextCallback: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> CURLcode = {
    _, sslContext, _ in
    guard let sslContext, TLSFloor.apply(to: OpaquePointer(sslContext)) else { return CURLE_ABORTED_BY_CALLBACK }
    TLSBridge.disableKeyLog(OpaquePointer(sslContext))
    return CURLE_OK
}

private let fetchHeaderCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    _, size, count, user in
    guard let user else { return 0 }
    let sink = Unmanaged<FetchSink>.fromOpaque(user).takeUnretainedValue()
    let length = size * count
    sink.headerBytes += length
    guard sink.headerBytes <= FetchSink.headerLimit else {
        sink.headersOverflowed = true
        return 0
    }
    return length
}
