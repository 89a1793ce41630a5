#if OpenAPIAdapter
import Foundation
import HTTPTypes
import OpenAPIRuntime
import ServerTrustHTTP

extension SessionTransport {
    /// The session request for a generated client's request: `request` with `baseURL`'s
    /// scheme and authority and its path in front of `request.path` (path and query), the
    /// method and header fields as they are, and `body` as a stream of known or unknown length.
    ///
    /// Made by ServerTrustHTTP's `Request(_:uploadBody:…)` bridge, which refuses a request
    /// that makes no URL with a host (`SessionError.Code.invalidRequest`: a server URL without
    /// a scheme or host, an operation path that is missing or does not start with `/`). The
    /// header fields are then admitted by ServerTrustHTTP's one rule for every adapter
    /// (`RequestAdmission`), a refusal being `invalidRequest` too: a `Host` naming another
    /// server, a `Content-Length` that is no byte count or disagrees with the body's known
    /// length, or `Transfer-Encoding`. A `Host` naming the URL's server and an agreeing
    /// `Content-Length` are left out, the session framing the body itself; with a body of
    /// unknown length a `Content-Length` declares it.
    static func sessionRequest(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL) throws(SessionError) -> Request {
        var target = request
        let base = URLComponents(url: baseURL, resolvingAgainstBaseURL: true)
        target.scheme = base?.scheme
        target.authority = base.flatMap(authority)
        // A path that does not start with "/" is refused (no :path, so the bridge throws):
        // appended to an empty base path it would run on into the authority and name another
        // host (`https://api.example.com` + `evil.example` is a request to
        // `api.example.comevil.example`).
        if let path = request.path, path.hasPrefix("/") {
            var basePath = base?.percentEncodedPath ?? ""
            if basePath.hasSuffix("/") { basePath.removeLast() }
            target.path = basePath + path
        } else {
            target.path = nil
        }
        var outgoing = try Request(target)
        let length: Int?
        switch body?.length {
        case nil: length = 0
        case .unknown?: length = nil
        // A negative length is refused by the session (invalidRequest); one beyond Int is
        // clamped, and the stream, ending short of it, fails the upload.
        case .known(let count)?: length = Int(clamping: count)
        }
        let url = outgoing.url.absoluteString
        let admitted: RequestAdmission.Admitted
        do throws(RequestAdmission.Refusal) {
            admitted = try RequestAdmission.admit(
                target: url, url: outgoing.url, fields: request.headerFields.lazy.map { (name: $0.name.rawName, value: $0.value) },
                bodyLength: length)
        } catch {
            throw error.sessionError(url: url)
        }
        outgoing.headers = admitted.headers
        if let body { outgoing.uploadBody = .stream(body, length: length ?? admitted.contentLength) }
        return outgoing
    }

    /// `host[:port]` of a server URL, an IPv6 address in brackets; nil without a host. User
    /// information (`user:password@`) is left out: credentials go in header fields, where a
    /// middleware puts them, never in a URL the transport would forward.
    private static func authority(_ components: URLComponents) -> String? {
        guard let host = components.percentEncodedHost, !host.isEmpty else { return nil }
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return components.port.map { "\(bracketed):\($0)" } ?? bracketed
    }

    /// The length of a streamed response body: its `Content-Length` when the body arrives as
    /// sent. With a `Content-Encoding` the session may decode it as it arrives (its
    /// `contentDecoding`), so the field describes other bytes than the client reads: unknown.
    static func streamedLength(_ headers: HTTPFields) -> HTTPBody.Length {
        let encodings = headers[values: .contentEncoding].filter { $0.lowercased() != "identity" }
        guard encodings.isEmpty, let field = headers[.contentLength], let count = Int64(field), count >= 0 else { return .unknown }
        return .known(count)
    }
}
#endif
