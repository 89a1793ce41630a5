#if URLSessionAdapter
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import ServerTrustHTTP

/// A `URLRequest` as a `Request`.
enum RequestMapping {
    /// The header fields, the configuration's with them, are admitted by ServerTrustHTTP's one
    /// rule for every adapter (`RequestAdmission`); a refusal is `SessionError` `invalidRequest`.
    ///
    /// - Parameter additionalHeaders: the configuration's `httpAdditionalHeaders`, sent unless
    ///   the request has a field of the same name (compared case-insensitively).
    static func request(for urlRequest: URLRequest, additionalHeaders: [String: String]) throws(SessionError) -> Request {
        guard let url = urlRequest.url else {
            throw SessionError(.invalidRequest, "The request has no URL.")
        }
        let methodName = urlRequest.httpMethod ?? "GET"
        guard let method = HTTPRequest.Method(methodName) else {
            throw SessionError(.invalidRequest, "\"\(methodName)\" is not a valid HTTP method.", url: url.absoluteString)
        }
        // Sorted: URLRequest keeps header fields in a dictionary, and a stable order keeps
        // requests reproducible.
        let own = urlRequest.allHTTPHeaderFields ?? [:]
        let ownNames = Set(own.keys.map { $0.lowercased() })
        let added = additionalHeaders.filter { !ownNames.contains($0.key.lowercased()) }
        let fields = own.merging(added, uniquingKeysWith: { first, _ in first }).sorted(by: { $0.key < $1.key })
        // A stream's length is unknown until it ends: a Content-Length declares it.
        let bodyLength = urlRequest.httpBody.map(\.count) ?? (urlRequest.httpBodyStream == nil ? 0 : nil)
        let admitted: RequestAdmission.Admitted
        do throws(RequestAdmission.Refusal) {
            admitted = try RequestAdmission.admit(
                target: url.absoluteString, url: url, fields: fields.lazy.map { (name: $0.key, value: $0.value) }, bodyLength: bodyLength)
        } catch {
            throw error.sessionError(url: url.absoluteString)
        }
        let headers = admitted.headers
        let declaredLength = admitted.contentLength
        let timeout = urlRequest.timeoutInterval.isFinite && urlRequest.timeoutInterval > 0
            ? Duration.milliseconds(max(1, Int64(min(urlRequest.timeoutInterval, 86_400 * 365) * 1000))) : nil
        if let body = urlRequest.httpBody {
            return Request(method: method, url: url, headers: headers, body: [UInt8](body), timeout: timeout)
        }
        if let stream = urlRequest.httpBodyStream {
            let chunks = InputStreamChunks(stream: stream)
            return Request(method: method, url: url, headers: headers, uploadBody: .stream(chunks, length: declaredLength), timeout: timeout)
        }
        return Request(method: method, url: url, headers: headers, timeout: timeout)
    }
}

/// An `InputStream` (`URLRequest.httpBodyStream`) as chunks, read as the session asks for them.
///
/// `@unchecked Sendable`: `InputStream` is not `Sendable`; the stream is opened and read by
/// one iteration only (a streamed body is sent once: `Request.Body.stream`), never concurrently.
struct InputStreamChunks: AsyncSequence, @unchecked Sendable {
    typealias Element = [UInt8]
    let stream: InputStream

    struct AsyncIterator: AsyncIteratorProtocol {
        let stream: InputStream
        var opened = false

        mutating func next() async throws -> [UInt8]? {
            if !opened {
                stream.open()
                opened = true
            }
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            let count = buffer.withUnsafeMutableBufferPointer { stream.read($0.baseAddress!, maxLength: $0.count) }
            if count < 0 {
                stream.close()
                throw SessionError(.uploadFailed, "The request's body stream failed: \(stream.streamError.map { "\($0)" } ?? "read error").")
            }
            if count == 0 {
                stream.close()
                return nil
            }
            return Array(buffer[..<count])
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(stream: stream) }
}
#endif
