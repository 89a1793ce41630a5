internal import Foundation

/// Resolves the components an RFC 9421 signature covers to their values (section 2): derived
/// components from the request (and `@status` from the response), fields from the message or,
/// with `;req`, from the request it answers. Kept apart from the signature base, which only
/// serializes what this returns, and from the keys, as pyauth's `http-message-signatures` keeps
/// its `HTTPSignatureComponentResolver`.
struct MessageComponentResolver {
    let request: MessageSignatureRequest
    /// The response side; nil when a request itself is signed.
    let response: SignatureBase.Response?

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
