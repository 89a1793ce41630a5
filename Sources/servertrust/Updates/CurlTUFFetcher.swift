import ServerTrustHTTP
import ServerTrustTUF

/// The CLI's fetcher: ServerTrustHTTP's bounded libcurl fetch (size limit, deadline, no
/// redirects, no proxy), with plain `http:` allowed only to a loopback host.
///
/// `https:` is verified against the system's CA bundle here; fetching over a pinned `Session`
/// is the glue of the next issue (#35).
struct CurlTUFFetcher: TUFFetching {
    private let curl = CurlRevocationFetcher(userAgent: "servertrust-updates/1")

    func fetch(_ url: String, maximumLength: Int, deadline: ContinuousClock.Instant) async throws(TUFError) -> [UInt8] {
        let lower = url.lowercased()
        if lower.hasPrefix("http://") {
            guard Self.isLoopback(url) else { throw TUFError(.invalidURL, "\(url): plain http is accepted only for loopback hosts") }
        } else if !lower.hasPrefix("https://") {
            throw TUFError(.invalidURL, "\(url): not an http or https URL")
        }
        // The request kind only sets the Accept header; the transfer is a plain bounded GET.
        switch curl.fetch(.crl(url: url, maximumSize: maximumLength), deadline: deadline) {
        case .success(let bytes): return bytes
        case .failure(let error):
            if let status = error.httpStatus {
                throw TUFError(status == 403 || status == 404 ? .notFound : .downloadFailed, "\(url): HTTP \(status)")
            }
            if error.isTooLarge { throw TUFError(.downloadTooLarge, "\(url): over \(maximumLength) bytes") }
            if error.isTimeout { throw TUFError(.slowRetrieval, "\(url): \(error.detail)") }
            throw TUFError(.downloadFailed, error.detail)
        }
    }

    /// Whether the URL's host is `localhost`, an address in 127.0.0.0/8, or `[::1]`.
    static func isLoopback(_ url: String) -> Bool {
        guard let schemeEnd = url.range(of: "://") else { return false }
        var authority = url[schemeEnd.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if authority.contains("@") { return false }
        if authority.hasPrefix("[") {
            return authority.lowercased().hasPrefix("[::1]")
        }
        if let colon = authority.firstIndex(of: ":") { authority = authority[..<colon] }
        let host = authority.lowercased()
        if host == "localhost" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}
