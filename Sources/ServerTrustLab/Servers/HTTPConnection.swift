import Foundation

/// The HTTP/1.1 engine shared by the local servers: reads requests from a ``ByteStream``, asks
/// a responder, writes responses, and keeps the connection alive until either side closes.
///
/// Requests: `Content-Length` and chunked bodies, `Expect: 100-continue`; HTTP/1.0 closes
/// after one response unless it asked for keep-alive. A malformed request gets a 400 and the
/// connection closes. Used by one thread at a time.
package final class HTTPConnection {
    /// The largest request head accepted.
    static let maximumHeadSize = 64 * 1024
    /// The largest request body accepted.
    static let maximumBodySize = 256 * 1024 * 1024

    private let stream: any ByteStream
    private let stopSignal: StopSignal
    private let number: Int
    /// Received bytes not yet consumed.
    private var buffer: [UInt8] = []
    /// Where each read lands before it is appended to `buffer`.
    private var scratch = [UInt8](repeating: 0, count: 64 * 1024)

    package init(stream: any ByteStream, stopSignal: StopSignal, number: Int) {
        self.stream = stream
        self.stopSignal = stopSignal
        self.number = number
    }

    /// Serves requests until the connection closes.
    ///
    /// - Parameter respond: called once per request, before anything of the response is sent.
    func serve(_ respond: (LocalHTTPRequest) -> LocalHTTPResponse) {
        while !stopSignal.isFired {
            let request: LocalHTTPRequest
            do {
                guard let received = try readRequest(acknowledgingExpectContinue: true) else { return }
                request = received
            } catch {
                _ = send(.text("\(error.reason)\n", status: error.status), for: nil, closing: true)
                return
            }
            let response = respond(request)
            let closing = response.closesConnection || response.header("Connection")?.lowercased() == "close"
                || !wantsKeepAlive(request)
            guard send(response, for: request, closing: closing), !closing else { return }
        }
    }

    /// Reads the next request; nil when the peer closed cleanly between requests.
    ///
    /// - Parameter acknowledgingExpectContinue: send `100 Continue` before reading a body the
    ///   client holds back for it (curl does so for large uploads).
    package func readRequest(acknowledgingExpectContinue: Bool) throws(RequestError) -> LocalHTTPRequest? {
        guard let headEnd = try readHead() else { return nil }
        let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard requestLine.count == 3, !requestLine[0].isEmpty, !requestLine[1].isEmpty,
              requestLine[2].hasPrefix("HTTP/1.") else {
            throw RequestError(status: 400, reason: "Malformed request line.")
        }
        var request = LocalHTTPRequest(
            method: String(requestLine[0]), target: String(requestLine[1]), version: String(requestLine[2]),
            connectionNumber: number)
        for line in lines {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                  !line[..<colon].contains(where: \.isWhitespace) else {
                throw RequestError(status: 400, reason: "Malformed header line.")
            }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            request.headers.append((String(line[..<colon]), value))
        }
        if request.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
            try acknowledgeExpectContinue(request, if: acknowledgingExpectContinue)
            request.body = try readChunkedBody()
        } else if let lengthText = request.header("Content-Length") {
            guard let length = Int(lengthText), length >= 0 else {
                throw RequestError(status: 400, reason: "Malformed Content-Length.")
            }
            guard length <= Self.maximumBodySize else {
                throw RequestError(status: 413, reason: "The body is over \(Self.maximumBodySize) bytes.")
            }
            if length > 0 { try acknowledgeExpectContinue(request, if: acknowledgingExpectContinue) }
            request.body = try readExactly(length)
        }
        return request
    }

    /// Sends `request` to an origin, as a proxy forwarding it: the request line and header
    /// fields as received, minus framing (`Content-Length`, `Transfer-Encoding`) and `Expect`,
    /// then the de-chunked body with its own `Content-Length`. False if the connection broke.
    package func forward(_ request: LocalHTTPRequest) -> Bool {
        let dropped = ["Content-Length", "Transfer-Encoding", "Expect"]
        var head = "\(request.method) \(request.target) \(request.version)\r\n"
        for (name, value) in request.headers where !dropped.contains(where: { $0.caseInsensitiveCompare(name) == .orderedSame }) {
            head += "\(name): \(value)\r\n"
        }
        if !request.body.isEmpty || ["POST", "PUT", "PATCH"].contains(request.method) {
            head += "Content-Length: \(request.body.count)\r\n"
        }
        head += "\r\n"
        return stream.write(Array(head.utf8) + request.body)
    }

    /// Reads an origin's response to a request made with `method`, as a proxy relaying it:
    /// interim `1xx` responses are skipped; the body is framed by `Transfer-Encoding: chunked`
    /// (returned de-chunked), `Content-Length`, or the connection closing; `HEAD`, `204` and
    /// `304` have none. Header fields are returned as received, framing fields included.
    package func readResponse(answering method: String) throws(RequestError) -> LocalHTTPResponse {
        while true {
            guard let headEnd = try readHead() else { throw RequestError.closed }
            let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
            buffer.removeFirst(headEnd + 4)
            var lines = head.components(separatedBy: "\r\n")
            let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), statusLine[1].count == 3,
                  let status = Int(statusLine[1]), (100...999).contains(status) else {
                throw RequestError(status: 502, reason: "Malformed status line from the origin.")
            }
            var response = LocalHTTPResponse(status: status)
            for line in lines {
                guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                    throw RequestError(status: 502, reason: "Malformed header line from the origin.")
                }
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                response.headers.append((String(line[..<colon]), value))
            }
            if (100..<200).contains(status) { continue }
            if method == "HEAD" || status == 204 || status == 304 { return response }
            if response.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
                response.body = .bytes(try readChunkedBody())
            } else if let lengthText = response.header("Content-Length") {
                guard let length = Int(lengthText), (0...Self.maximumBodySize).contains(length) else {
                    throw RequestError(status: 502, reason: "Malformed or oversized Content-Length from the origin.")
                }
                response.body = .bytes(try readExactly(length))
            } else {
                while buffer.count <= Self.maximumBodySize, fill() {}
                guard buffer.count <= Self.maximumBodySize else {
                    throw RequestError(status: 502, reason: "The origin's body is over \(Self.maximumBodySize) bytes.")
                }
                response.body = .bytes(takeBufferedBytes())
            }
            return response
        }
    }

    /// Bytes read past the last request (a tunnel's first bytes), removed from the buffer.
    package func takeBufferedBytes() -> [UInt8] {
        defer { buffer = [] }
        return buffer
    }

    /// Writes raw bytes.
    package func write(_ bytes: [UInt8]) -> Bool { stream.write(bytes) }

    /// Writes `response`; false if the connection broke or the server is stopping.
    package func send(_ response: LocalHTTPResponse, for request: LocalHTTPRequest?, closing: Bool) -> Bool {
        if response.delay > .zero, !stopSignal.sleep(for: response.delay) { return false }
        let hasBody = !(100..<200).contains(response.status) && response.status != 204 && response.status != 304
        var head = "HTTP/1.1 \(response.status) \(Self.reasonPhrase(response.status))\r\n"
        for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
        if hasBody, response.header("Content-Length") == nil { head += "Content-Length: \(response.body.count)\r\n" }
        if closing, response.header("Connection") == nil { head += "Connection: close\r\n" }
        head += "\r\n"
        let sendsBody = hasBody && request?.method != "HEAD"
        let total = sendsBody ? response.body.count : 0
        if let cut = response.truncatedAfter {
            let bytes = Array((Array(head.utf8) + response.body.slice(0..<min(total, cut))).prefix(cut))
            if !bytes.isEmpty { _ = stream.write(bytes) }
            return false  // the connection closes here
        }
        let chunkSize = max(response.pacing?.chunkSize ?? 64 * 1024, 1)
        // Small responses go out in one write: a separate header segment would meet Nagle and
        // delayed ACK on the client's side of loopback.
        var pending = Array(head.utf8) + response.body.slice(0..<min(total, response.pacing == nil ? chunkSize : 0))
        var offset = pending.count - head.utf8.count
        while true {
            guard stream.write(pending) else { return false }
            guard offset < total else { return true }
            if let pacing = response.pacing, !stopSignal.sleep(for: pacing.interval) { return false }
            let end = min(offset + chunkSize, total)
            pending = response.body.slice(offset..<end)
            offset = end
        }
    }

    private func wantsKeepAlive(_ request: LocalHTTPRequest) -> Bool {
        let connection = request.headers(named: "Connection").joined(separator: ",").lowercased()
        if connection.contains("close") { return false }
        return request.version == "HTTP/1.1" || connection.contains("keep-alive")
    }

    private func acknowledgeExpectContinue(_ request: LocalHTTPRequest, if enabled: Bool) throws(RequestError) {
        guard enabled, request.header("Expect")?.lowercased() == "100-continue" else { return }
        guard stream.write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) else { throw RequestError.closed }
    }

    /// The offset of the `\r\n\r\n` ending the head; nil on a clean close before any byte.
    private func readHead() throws(RequestError) -> Int? {
        var searchFrom = 0
        while true {
            if buffer.count >= 4 {
                var index = searchFrom
                while index + 4 <= buffer.count {
                    if buffer[index] == 13, buffer[index + 1] == 10, buffer[index + 2] == 13, buffer[index + 3] == 10 {
                        return index
                    }
                    index += 1
                }
                searchFrom = buffer.count - 3
            }
            guard buffer.count <= Self.maximumHeadSize else {
                throw RequestError(status: 431, reason: "The request head is over \(Self.maximumHeadSize) bytes.")
            }
            let wasEmpty = buffer.isEmpty
            guard fill() else {
                if wasEmpty { return nil }
                throw RequestError.closed
            }
        }
    }

    private func readExactly(_ count: Int) throws(RequestError) -> [UInt8] {
        while buffer.count < count {
            guard fill(upTo: count - buffer.count) else { throw RequestError.closed }
        }
        defer { buffer.removeFirst(count) }
        return Array(buffer[..<count])
    }

    private func readLine() throws(RequestError) -> String {
        var searchFrom = 0
        while true {
            if let end = buffer[searchFrom...].firstIndex(of: 10), end > 0, buffer[end - 1] == 13 {
                defer { buffer.removeFirst(end + 1) }
                return String(decoding: buffer[..<(end - 1)], as: UTF8.self)
            }
            searchFrom = max(buffer.count - 1, 0)
            guard buffer.count <= Self.maximumHeadSize else { throw RequestError(status: 400, reason: "Line too long.") }
            guard fill() else { throw RequestError.closed }
        }
    }

    private func readChunkedBody() throws(RequestError) -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let sizeText = try readLine().prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces)
            guard let size = Int(sizeText, radix: 16), size >= 0 else {
                throw RequestError(status: 400, reason: "Malformed chunk size.")
            }
            guard body.count + size <= Self.maximumBodySize else {
                throw RequestError(status: 413, reason: "The body is over \(Self.maximumBodySize) bytes.")
            }
            if size == 0 {
                while try !readLine().isEmpty {}  // trailer fields
                return body
            }
            body += try readExactly(size)
            guard try readLine().isEmpty else { throw RequestError(status: 400, reason: "Malformed chunk.") }
        }
    }

    /// Appends what the stream has (up to 64 KiB, or `limit`); false when it closed.
    private func fill(upTo limit: Int = .max) -> Bool {
        let capacity = min(scratch.count, max(limit, 1))
        let count = scratch.withUnsafeMutableBytes { stream.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<capacity])) }
        buffer.append(contentsOf: scratch[..<count])
        return count > 0
    }

    package struct RequestError: Error {
        let status: Int
        let reason: String

        static let closed = RequestError(status: 400, reason: "The connection closed mid-request.")
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 413: "Content Too Large"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Status \(status)"
        }
    }
}
