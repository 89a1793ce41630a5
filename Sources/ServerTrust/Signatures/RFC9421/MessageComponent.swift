public import Foundation

/// A component an RFC 9421 signature covers: a derived component (`@status`, `@method`…) or a
/// header field (lowercase name), with `;req` when it is taken from the request a response
/// answers (RFC 9421 section 2.4).
///
/// Its ``description`` is its serialized identifier as it appears in `Signature-Input` and in
/// the signature base: `"@status"`, `"@path";req`, `"content-digest"`.
public struct MessageComponent: Hashable, Sendable, CustomStringConvertible {
    /// The component name: `@`-prefixed for derived components, else a lowercase field name.
    public let name: String
    /// Whether the value comes from the request the response answers (`;req`).
    public let isRequestBound: Bool

    /// - Parameters:
    ///   - name: a derived component (`@status`, `@method`, `@authority`, `@path`, `@query`,
    ///     `@target-uri`, `@scheme`, `@request-target`) or a field name; field names are
    ///     lowercased.
    ///   - requestBound: whether it is `;req`.
    public init(_ name: String, requestBound: Bool = false) {
        self.name = name.hasPrefix("@") ? name : name.lowercased()
        isRequestBound = requestBound
    }

    public var description: String { StructuredField.serialize(item) }

    var item: StructuredField.Item {
        StructuredField.Item(value: .string(name), parameters: isRequestBound ? [("req", .boolean(true))] : [])
    }

    /// `@status`: the response's status code.
    public static let status = MessageComponent("@status")
    /// `@method;req`: the request's method.
    public static let requestMethod = MessageComponent("@method", requestBound: true)
    /// `@authority;req`: the request's host, and its port when not the scheme's default.
    public static let requestAuthority = MessageComponent("@authority", requestBound: true)
    /// `@path;req`: the request's path as sent.
    public static let requestPath = MessageComponent("@path", requestBound: true)
    /// `@query;req`: the request's query with its `?` (`?` alone when there is none).
    public static let requestQuery = MessageComponent("@query", requestBound: true)
    /// `@target-uri;req`: the request's whole URI; covers scheme, authority, path and query.
    public static let requestTargetURI = MessageComponent("@target-uri", requestBound: true)
    /// `content-digest` (RFC 9530): ties the body to the signature.
    public static let contentDigest = MessageComponent("content-digest")
    /// `content-type`.
    public static let contentType = MessageComponent("content-type")
    /// `content-encoding`: without it an intermediary could relabel the signed bytes.
    public static let contentEncoding = MessageComponent("content-encoding")
    /// `location`: where a signed redirect sends the client.
    public static let location = MessageComponent("location")
}

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

/// The signature base of RFC 9421 section 2.5 for a response (with its request), or a
/// request.
struct SignatureBase {
    /// The response side; nil when a request itself is signed.
    struct Response {
        let status: Int
        let headers: [(name: String, value: String)]
    }

    let request: MessageSignatureRequest
    let response: Response?

    /// The value of one component, or the error that names why it cannot be resolved.
    func value(of component: StructuredField.Item) throws(ResponseSignatureError) -> String {
        guard case .string(let name) = component.value else {
            throw ResponseSignatureError(.malformedSignature, "A covered component is not a string: \(StructuredField.serialize(component)).")
        }
        var requestBound = false
        var parameterName: String?
        for (key, value) in component.parameters {
            switch (key, value) {
            case ("req", .boolean(true)): requestBound = true
            case ("name", .string(let text)) where name == "@query-param": parameterName = text
            default:
                throw ResponseSignatureError(
                    .absentComponent, "The covered component \(StructuredField.serialize(component)) has parameter \"\(key)\", which this verifier does not resolve.")
            }
        }
        guard name == name.lowercased(), !name.isEmpty else {
            throw ResponseSignatureError(.malformedSignature, "The component name \"\(name)\" is not lowercase.")
        }
        let onRequest = requestBound || response == nil
        if requestBound && response == nil {
            throw ResponseSignatureError(.malformedSignature, "A request's signature cannot cover \";req\" components.")
        }
        if name.hasPrefix("@") {
            if name == "@status" {
                guard let response, !requestBound else {
                    throw ResponseSignatureError(.absentComponent, "\"@status\" is a response component; it cannot be \";req\" or on a request.")
                }
                return String(response.status)
            }
            guard onRequest else {
                throw ResponseSignatureError(
                    .absentComponent, "The derived component \"\(name)\" of a response must be \";req\" (it describes the request).")
            }
            switch name {
            case "@method": return request.method
            case "@authority": return request.authority
            case "@scheme": return request.scheme
            case "@target-uri": return request.targetURI
            case "@path": return request.path
            case "@query": return "?" + (request.query ?? "")
            case "@request-target": return request.path + (request.query.map { "?" + $0 } ?? "")
            case "@query-param":
                guard let parameterName else {
                    throw ResponseSignatureError(.malformedSignature, "\"@query-param\" needs a name parameter.")
                }
                let matches = Self.queryParameters(request.query ?? "").filter { $0.name == parameterName }
                guard matches.count == 1 else {
                    throw ResponseSignatureError(
                        .absentComponent,
                        "The query has \(matches.count) parameters named \"\(parameterName)\"; \"@query-param\" needs exactly one (RFC 9421 section 2.2.8).")
                }
                return Self.percentEncoded(matches[0].value)
            default:
                throw ResponseSignatureError(.absentComponent, "The derived component \"\(name)\" is not one this verifier resolves.")
            }
        }
        guard let value = Self.fieldValue(name, in: onRequest ? request.headers : response!.headers) else {
            throw ResponseSignatureError(
                .absentComponent, "The signature covers the \(onRequest && response != nil ? "request " : "")field \"\(name)\", which the message does not have.")
        }
        guard !value.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D }) else {
            throw ResponseSignatureError(.malformedSignature, "The field \"\(name)\" holds a line break.")
        }
        return value
    }

    /// The base over `covered` with `parameters`, and the serialized `@signature-params`.
    func base(covered: [StructuredField.Item], parameters: StructuredField.Parameters) throws(ResponseSignatureError) -> [UInt8] {
        var text = ""
        var seen = Set<String>()
        for component in covered {
            let identifier = StructuredField.serialize(component)
            guard seen.insert(identifier).inserted else {
                throw ResponseSignatureError(.malformedSignature, "The signature covers \(identifier) twice.")
            }
            text += identifier + ": " + (try value(of: component)) + "\n"
        }
        text += "\"@signature-params\": " + StructuredField.serialize(innerList: covered, parameters: parameters)
        return Array(text.utf8)
    }

    /// All lines of field `name` (case-insensitive), each trimmed of spaces and tabs, joined
    /// with ", " (RFC 9421 section 2.1); nil when the message has none.
    static func fieldValue(_ name: String, in fields: [(name: String, value: String)]) -> String? {
        let lower = name.lowercased()
        // RFC 9110 allows only spaces and tabs around a field value: an ASCII trim, not
        // Foundation's Unicode one (a tenth of a small response's verification on Linux).
        let values = fields.filter { $0.name.lowercased() == lower }.map { trimmed($0.value) }
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// `application/x-www-form-urlencoded` pairs, decoded (RFC 9421 section 2.2.8).
    static func queryParameters(_ query: String) -> [(name: String, value: String)] {
        func decode(_ text: Substring) -> String {
            let plus = text.replacingOccurrences(of: "+", with: " ")
            return plus.removingPercentEncoding ?? plus
        }
        return query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            guard let equals = pair.firstIndex(of: "=") else { return (decode(pair), "") }
            return (decode(pair[..<equals]), decode(pair[pair.index(after: equals)...]))
        }
    }

    /// Percent-encodes all but RFC 3986's unreserved characters.
    static func percentEncoded(_ text: String) -> String {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    static func trimmed(_ value: String) -> String {
        let bytes = Array(value.utf8)
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }
}
