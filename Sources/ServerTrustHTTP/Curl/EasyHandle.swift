import Foundation
internal import CCurl
internal import CServerTrustCurlShims

/// Owns one `CURL*` easy handle and every C object curl points at through it.
///
/// Not `Sendable`: a handle lives on the session's loop thread from creation to cleanup.
final class EasyHandle {
    let pointer: UnsafeMutableRawPointer
    /// The policy whose constant options the handle carries (``EasyHandleConfigurator``); 0
    /// for a handle outside a session.
    let policyID: UInt64
    private var lists: [UnsafeMutablePointer<curl_slist>] = []
    /// The current request's `CURLOPT_HTTPHEADER` list, replaced by each request whose lines
    /// differ (``requestHeaderLines``).
    private var requestHeaders: UnsafeMutablePointer<curl_slist>?
    /// The lines `requestHeaders` was made of.
    private var requestHeaderLines: [String] = []
    /// The session's `User-Agent: …` line, sent with every request that names no user agent of
    /// its own (``EasyHandleConfigurator``); nil when the session sends none.
    var userAgentLine: String? {
        didSet { defaultHeaderLines = userAgentLine.map { [$0] } ?? [] }
    }
    /// The header lines of a request with no fields and no body: ``userAgentLine`` alone, or
    /// none. One array per handle, so such a request allocates none and compares its lines
    /// with the cached ones by identity.
    private(set) var defaultHeaderLines: [String] = []
    /// The session transfer the handle runs now, which its callbacks reach through the handle:
    /// their data pointers name the handle, set once when it is made (`EasyHandleConfigurator`),
    /// so pointing a reused handle at its next request is a store here, not five
    /// `curl_easy_setopt` calls. Nil while the handle waits for a request, and then every
    /// callback aborts. Loop thread only.
    var transfer: Transfer? {
        didSet { unretainedTransfer = transfer.map { Unmanaged.passUnretained($0) } }
    }
    /// ``transfer``, as the callbacks read it: without a retain and a release on each of the
    /// dozen or so calls of a request. Valid exactly while ``transfer`` holds the same object
    /// (set and cleared with it), and the loop's table of active transfers keeps the transfer
    /// alive while curl may call back.
    private(set) var unretainedTransfer: Unmanaged<Transfer>?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// The share set with ``setShare(_:)``, kept alive by the handle: `curl_share_cleanup`
    /// refuses a share an easy handle still uses, and `deinit` cleans the handle up before
    /// releasing this, so a share always outlives its handles whichever owner lets go first.
    private(set) var share: ShareHandle?

    init(policyID: UInt64 = 0) throws(CurlError) {
        guard let handle = curl_easy_init() else {
            throw CurlError(.createHandle)
        }
        pointer = handle
        self.policyID = policyID
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        _ = CServerTrustCurlShims_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer)
    }

    deinit {
        curl_easy_cleanup(pointer)
        for list in lists { curl_slist_free_all(list) }
        if let requestHeaders { curl_slist_free_all(requestHeaders) }
        errorBuffer.deallocate()
    }

    /// The text curl left in `CURLOPT_ERRORBUFFER`.
    var errorMessage: String {
        String(decoding: UnsafeRawBufferPointer(start: errorBuffer, count: strnlen(errorBuffer, Int(CURL_ERROR_SIZE))), as: UTF8.self)
    }

    func set(_ option: CURLoption, _ value: Int) throws(CurlError) {
        try check(CServerTrustCurlShims_easy_setopt_long(pointer, option, value), option)
    }

    func set(_ option: CURLoption, _ value: String?) throws(CurlError) {
        // curl copies string options (since 7.17), so the C string need not outlive the call.
        let code = if let value { value.withCString { CServerTrustCurlShims_easy_setopt_string(pointer, option, $0) } }
            else { CServerTrustCurlShims_easy_setopt_string(pointer, option, nil) }
        try check(code, option)
    }

    func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) throws(CurlError) {
        try check(CServerTrustCurlShims_easy_setopt_pointer(pointer, option, value), option)
    }

    /// Sets `CURLOPT_SHARE`, keeping `share` alive as long as the handle.
    func setShare(_ share: ShareHandle?) throws(CurlError) {
        try check(CServerTrustCurlShims_easy_setopt_pointer(pointer, CURLOPT_SHARE, share?.pointer), CURLOPT_SHARE)
        self.share = share
    }

    /// Sets a string-list option; the list lives as long as the handle.
    func set(_ option: CURLoption, list values: [String]) throws(CurlError) {
        guard let list = try Self.makeList(values) else { return }
        lists.append(list)
        try check(CServerTrustCurlShims_easy_setopt_slist(pointer, option, list), option)
    }

    /// Sets `CURLOPT_HTTPHEADER` for the next request, or clears it when `values` is empty, and
    /// frees the previous request's list (curl keeps only the pointer).
    ///
    /// The same lines as the previous request's (a request without fields of its own, or with
    /// the same ones) keep the list curl already has: no list is made and freed per request.
    func setRequestHeaders(_ values: [String]) throws(CurlError) {
        if values == requestHeaderLines, (requestHeaders == nil) == values.isEmpty { return }
        let list = try Self.makeList(values)
        let code = CServerTrustCurlShims_easy_setopt_slist(pointer, CURLOPT_HTTPHEADER, list)
        guard code == CURLE_OK else {
            if let list { curl_slist_free_all(list) }
            try check(code, CURLOPT_HTTPHEADER)
            return
        }
        if let requestHeaders { curl_slist_free_all(requestHeaders) }
        requestHeaders = list
        requestHeaderLines = values
    }

    private static func makeList(_ values: [String]) throws(CurlError) -> UnsafeMutablePointer<curl_slist>? {
        var list: UnsafeMutablePointer<curl_slist>?
        for value in values {
            guard let appended = curl_slist_append(list, value) else {
                if let list { curl_slist_free_all(list) }
                throw CurlError(.appendToList)
            }
            list = appended
        }
        return list
    }

    /// Empties `CURLOPT_ERRORBUFFER`, so a reused handle never shows an earlier transfer's text.
    func clearErrorMessage() { errorBuffer[0] = 0 }

    /// Copies `body` into curl (`CURLOPT_COPYPOSTFIELDS`), so it need not outlive the call.
    func setBody(_ body: [UInt8]) throws(CurlError) {
        try check(CServerTrustCurlShims_easy_setopt_off_t(pointer, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)), CURLOPT_POSTFIELDSIZE_LARGE)
        let code = body.withUnsafeBytes { bytes in
            CServerTrustCurlShims_easy_setopt_pointer(pointer, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafeRawPointer(errorBuffer)))
        }
        try check(code, CURLOPT_COPYPOSTFIELDS)
    }

    /// Sets `CURLOPT_POSTFIELDSIZE_LARGE`: the body length, or -1 for unknown.
    func setPostFieldSize(_ size: Int) throws(CurlError) {
        try check(CServerTrustCurlShims_easy_setopt_off_t(pointer, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(size)), CURLOPT_POSTFIELDSIZE_LARGE)
    }

    func info(_ info: CURLINFO) -> Int {
        var value = 0
        _ = CServerTrustCurlShims_easy_getinfo_long(pointer, info, &value)
        return value
    }

    /// The handle whose `CURL*` is `pointer`, read from its `CURLINFO_PRIVATE`, unretained:
    /// set once when a session makes the handle (`EasyHandleConfigurator`); nil for a `CURL*`
    /// without one. The caller must know the handle is alive — the session's loop asks only
    /// for a `CURL*` in its multi handle, whose transfer its table of active transfers holds,
    /// and the transfer holds the handle.
    static func owner(of pointer: UnsafeMutableRawPointer) -> Unmanaged<EasyHandle>? {
        var value: UnsafeMutableRawPointer?
        guard CServerTrustCurlShims_easy_getinfo_private(pointer, &value) == CURLE_OK, let value else { return nil }
        return Unmanaged.fromOpaque(value)
    }

    /// The OpenSSL `SSL*` of the transfer's connection, or nil.
    var ssl: OpaquePointer? {
        var ssl: UnsafeMutableRawPointer?
        guard CServerTrustCurlShims_easy_getinfo_tls_ssl_ptr(pointer, &ssl) == CURLE_OK, let ssl else { return nil }
        return OpaquePointer(ssl)
    }

    private func check(_ code: CURLcode, _ option: CURLoption) throws(CurlError) {
        guard code == CURLE_OK else {
            throw CurlError(.setOption(option), code: code)
        }
    }
}
