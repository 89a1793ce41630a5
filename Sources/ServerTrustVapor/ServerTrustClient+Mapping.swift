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
    /// `SessionError` `invalidRequest` naming the part that cannot be sent as written. The header
    /// fields are admitted by ServerTrustHTTP's one rule for every adapter (`RequestAdmission`):
    /// a `Host` naming the URL's server and a `Content-Length` that agrees with the body are
    /// left out, as the session sends the same from the URL and the body; any other difference
    /// is refused.
    static func sessionRequest(_ request: ClientRequest) throws(SessionError) -> ServerTrustHTTP.Request {
        let text = request.url.string
        guard let url = URL(string: text), let scheme = url.scheme, !scheme.isEmpty, let host = url.host, !host.isEmpty else {
            throw SessionError(
                .invalidRequest, "\"\(URLRedaction.redacted(text))\" is not an absolute URL with a scheme and a host.", url: text)
        }
        guard let method = HTTPRequest.Method(request.method.rawValue) else {
            throw SessionError(.invalidRequest, "The method \"\(request.method.rawValue)\" is not an RFC 9110 token.", url: text)
        }
        let admitted: RequestAdmission.Admitted
        do throws(RequestAdmission.Refusal) {
            admitted = try RequestAdmission.admit(target: text, url: url, fields: request.headers, bodyLength: request.body?.readableBytes ?? 0)
        } catch {
            throw error.sessionError(url: text)
        }
        var outgoing = ServerTrustHTTP.Request(
            method: method, url: url, headers: admitted.headers, body: request.body.map { Array($0.readableBytesView) })
        // Non-positive values reach the session, which refuses them (invalidRequest) by name.
        if let timeout = request.timeout { outgoing.timeout = .nanoseconds(timeout.nanoseconds) }
        return outgoing
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
