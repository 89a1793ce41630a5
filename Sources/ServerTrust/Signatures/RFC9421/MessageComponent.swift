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
