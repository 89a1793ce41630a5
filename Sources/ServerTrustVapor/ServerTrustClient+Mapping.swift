#if VaporClient
import Foundation
import HTTPTypes
import NIOCore
import ServerTrust
import ServerTrustHTTP
import Vapor

extension ServerTrustClient {
    /// The session request for `request`: its method, URL (with its query), header fields in
    /// order (repeated names kept), body bytes and timeout, each as written — or a
    /// ``ServerTrustClientError`` naming the part that cannot be sent as written. Nothing is
    /// dropped silently: a `Content-Length` field that agrees with the body is left out because
    /// the session frames the body with the same value; any other difference is refused.
    static func sessionRequest(_ request: ClientRequest) throws(ServerTrustClientError) -> ServerTrustHTTP.Request {
        let text = request.url.string
        guard let url = URL(string: text), let scheme = url.scheme, !scheme.isEmpty, let host = url.host, !host.isEmpty else {
            throw ServerTrustClientError(
                .invalidURL, "\"\(URLRedaction.redacted(text))\" is not an absolute URL with a scheme and a host.")
        }
        guard let method = HTTPRequest.Method(request.method.rawValue) else {
            throw ServerTrustClientError(.invalidMethod, "The method \"\(request.method.rawValue)\" is not an RFC 9110 token.")
        }
        let bodyCount = request.body?.readableBytes ?? 0
        var fields = HTTPFields()
        fields.reserveCapacity(request.headers.count)
        for (name, value) in request.headers {
            guard let fieldName = HTTPField.Name(name) else {
                throw ServerTrustClientError(.invalidHeaderName, "The header name \"\(name)\" is not an RFC 9110 token.")
            }
            guard !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) else {
                throw ServerTrustClientError(.invalidHeaderValue, "The value of header \"\(name)\" contains CR, LF or NUL.")
            }
            switch fieldName {
            case .contentLength:
                guard value.trimmingCharacters(in: .whitespaces) == String(bodyCount) else {
                    throw ServerTrustClientError(
                        .conflictingContentLength, "The header \"Content-Length: \(value)\" disagrees with the body's \(bodyCount) bytes.")
                }
                continue  // the session sends the body with this same length
            case .transferEncoding:
                throw ServerTrustClientError(
                    .transferEncoding,
                    "The header \"Transfer-Encoding: \(value)\" cannot be honoured: the body is sent whole, framed by the session.")
            case _ where fieldName.canonicalName == "host":
                guard Self.authorities(of: url).contains(value.trimmingCharacters(in: .whitespaces).lowercased()) else {
                    throw ServerTrustClientError(
                        .conflictingHost,
                        "The header \"Host: \(value)\" names another authority than the URL's host \(host); the URL decides which server is reached and which policy evaluates it.")
                }
            default:
                break
            }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        var outgoing = ServerTrustHTTP.Request(method: method, url: url, headers: fields, body: request.body.map { Array($0.readableBytesView) })
        // Non-positive values reach the session, which refuses them (invalidRequest) by name.
        if let timeout = request.timeout { outgoing.timeout = .nanoseconds(timeout.nanoseconds) }
        return outgoing
    }

    /// The `Host` values that name the URL's authority: `host` and `host:port`, lower-cased, with
    /// the scheme's default port standing for an absent one, an IPv6 address in brackets.
    private static func authorities(of url: URL) -> Set<String> {
        guard let rawHost = url.host?.lowercased() else { return [] }
        let host = rawHost.contains(":") && !rawHost.hasPrefix("[") ? "[\(rawHost)]" : rawHost
        let defaultPort = url.scheme?.lowercased() == "http" ? 80 : 443
        let port = url.port ?? defaultPort
        var names: Set<String> = ["\(host):\(port)"]
        if port == defaultPort { names.insert(host) }
        return names
    }

    /// The Vapor response for the session's: the final hop's status (the code, and the reason
    /// phrase when the server sent one), header fields in order, repeated names kept, and the
    /// body in a buffer from `allocator` (nil when empty, as Vapor's client gives it).
    static func clientResponse(_ response: ServerTrustHTTP.Response, allocator: ByteBufferAllocator) -> ClientResponse {
        let status = response.status
        let httpStatus =
            status.reasonPhrase.isEmpty
            ? HTTPResponseStatus(statusCode: status.code) : HTTPResponseStatus(statusCode: status.code, reasonPhrase: status.reasonPhrase)
        var headers = HTTPHeaders()
        headers.reserveCapacity(response.headers.count)
        for field in response.headers { headers.add(name: field.name.rawName, value: field.value) }
        let body = response.body.isEmpty ? nil : allocator.buffer(bytes: response.body)
        return ClientResponse(status: httpStatus, headers: headers, body: body, byteBufferAllocator: allocator)
    }
}
#endif
