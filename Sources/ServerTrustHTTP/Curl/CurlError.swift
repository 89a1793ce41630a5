internal import CCurl
internal import CServerTrustCurlShims

/// A libcurl call of the handle wrappers in `Curl/` that failed.
///
/// The wrappers know nothing of sessions or requests: the engine turns this into the
/// ``SessionError`` a caller sees (`SessionError.init(_:url:)`), and the revocation fetcher
/// into a transport failure.
struct CurlError: Error, CustomStringConvertible {
    enum Operation {
        /// `curl_easy_init` returned NULL (out of memory).
        case createHandle
        /// `curl_slist_append` returned NULL (out of memory).
        case appendToList
        /// `curl_easy_setopt` refused an option.
        case setOption(CURLoption)
    }

    let operation: Operation
    /// curl's code for a refused option; nil when curl returned NULL instead of a code.
    let code: CURLcode?

    init(_ operation: Operation, code: CURLcode? = nil) {
        self.operation = operation
        self.code = code
    }

    var description: String {
        switch operation {
        case .createHandle: "curl_easy_init failed"
        case .appendToList: "curl_slist_append failed"
        case .setOption(let option):
            "curl refused option \(option.rawValue): \(code.map { String(cString: curl_easy_strerror($0)) } ?? "unknown error")"
        }
    }
}
