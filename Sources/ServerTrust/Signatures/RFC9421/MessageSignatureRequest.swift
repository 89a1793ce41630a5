public import Foundation

/// The request a signed response answers, as the client sent it (or as the server received
/// it): what `;req` components and the derived components resolve to.
public struct MessageSignatureRequest: Sendable {
    /// The method, as sent (`GET`).
    public var method: String
    /// The scheme, lowercase (`https`).
    public var scheme: String
    /// The host, lowercase, and `:port` when the port is not the scheme's default.
    public var authority: String
    /// The path as sent, percent-encoded, never empty (`/` at least).
    public var path: String
    /// The query as sent, without `?`; nil when the target has none.
    public var query: String?
    /// The request's header fields, in order.
    public var headers: [(name: String, value: String)]

    /// - Parameters:
    ///   - method: the method.
    ///   - scheme: the scheme; lowercased.
    ///   - host: the host; lowercased (an IPv6 literal keeps its brackets).
    ///   - port: the port; nil, or the scheme's default (443 for https, 80 for http), is left out
    ///     of the authority.
    ///   - path: the path as sent; empty means `/`.
    ///   - query: the query without `?`, or nil.
    ///   - headers: the request's fields. Default none.
    public init(
        method: String, scheme: String, host: String, port: Int? = nil, path: String, query: String?,
        headers: [(name: String, value: String)] = []
    ) {
        self.method = method
        self.scheme = scheme.lowercased()
        let defaultPort = self.scheme == "https" ? 443 : self.scheme == "http" ? 80 : nil
        let lowerHost = host.lowercased()
        authority = port.map { $0 == defaultPort ? lowerHost : lowerHost + ":\($0)" } ?? lowerHost
        self.path = path.isEmpty ? "/" : path
        self.query = query
        self.headers = headers
    }

    /// The request as a server received it, with its authority as one string (`Host` or
    /// `:authority`, or the public authority when a proxy in front rewrites it): `name` or
    /// `name:port`, an IPv6 literal in brackets.
    /// - Parameters:
    ///   - method: the method.
    ///   - scheme: the scheme clients use; default `https`.
    ///   - authority: the authority; lowercased, a default port dropped.
    ///   - path: the path as received.
    ///   - query: the query as received, without `?`, or nil.
    ///   - headers: the request's fields.
    public init(
        method: String, scheme: String = "https", authority: String, path: String, query: String?, headers: [(name: String, value: String)]
    ) {
        let split = SignatureChallenge.hostAndPort(authority)
        self.init(
            method: method, scheme: scheme, host: split?.host ?? authority, port: split?.port, path: path, query: query, headers: headers)
    }

    /// The request a client sends to `url`: its scheme, host, port, and the percent-encoded path
    /// and query libcurl puts on the request line (`/` for an empty path, literal `.` and `..`
    /// segments removed).
    /// - Returns: nil for a URL without a scheme or host.
    public init?(method: String, url: URL, headers: [(name: String, value: String)] = []) {
        guard let host = url.host, !host.isEmpty, let components = URLComponents(url: url.absoluteURL, resolvingAgainstBaseURL: true),
            let scheme = components.scheme
        else { return nil }
        self.init(
            method: method, scheme: scheme, host: host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host, port: url.port,
            path: SignatureChallenge.pathAsLibcurlSends(components.percentEncodedPath), query: components.percentEncodedQuery, headers: headers)
    }

    /// `@target-uri`.
    var targetURI: String { scheme + "://" + authority + path + (query.map { "?" + $0 } ?? "") }
}
