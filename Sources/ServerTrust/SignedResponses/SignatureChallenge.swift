public import Foundation

/// What a signed response must prove it answers: the client's nonce and request time, and the
/// request as the client sent it (method, host, path, query and body).
///
/// Both sides build one. The client makes a fresh one per request with
/// ``init(method:url:requestBody:now:)`` and sends ``requestHeaders``; the server rebuilds it
/// from what it received with ``init(receivedMethod:target:headers:body:host:)`` and signs it.
/// The server's signature then covers the request *it* saw, so a request altered on the way
/// fails verification with ``ResponseSignatureError/Code/requestMismatch``.
///
/// Canonical forms, identical on both sides:
/// - method: as sent (the session sends it uppercased);
/// - host: lowercased, without port, brackets or trailing dot (``HostName/normalize(_:)``);
///   on the server, from the `Host` header unless given explicitly;
/// - path: percent-encoded as on the request line, `/` when empty, dot segments removed
///   (RFC 3986 section 5.2.4, as libcurl does before sending);
/// - query: the raw text after `?`, empty when there is none;
/// - body: SHA-256 of the request body bytes (of the empty string when there is none).
public struct SignatureChallenge: Hashable, Sendable {
    /// The random nonce (16 to 64 bytes).
    public let nonce: [UInt8]
    /// The client's request time, seconds since 1970.
    public let requestTime: Int64
    public let method: String
    public let host: String
    public let path: String
    public let query: String
    /// SHA-256 of the request body.
    public let requestBodyDigest: [UInt8]

    static let nonceLengths = 16...64
    static let clientNonceLength = 32
    static let requestDigestDomain = Array("ServerTrust-Request-v1".utf8) + [0]

    /// A challenge from explicit parts; `path` is canonicalised.
    ///
    /// - Throws: ``ResponseSignatureError/Code/malformedChallenge`` for a nonce outside 16–64
    ///   bytes, a request time before 1970 or after 9999, an empty or over-long method, an
    ///   over-long host, or a path and query over 1 MiB.
    public init(
        method: String, host: String, path: String, query: String, requestBody: [UInt8],
        nonce: [UInt8], requestTime: Int64
    ) throws(ResponseSignatureError) {
        guard Self.nonceLengths.contains(nonce.count) else {
            throw ResponseSignatureError(.malformedChallenge, "A nonce is 16 to 64 bytes; got \(nonce.count).")
        }
        guard (0...IntermediateKeyCertificate.latestTime).contains(requestTime) else {
            throw ResponseSignatureError(.malformedChallenge, "The request time \(requestTime) is not between 1970 and 9999.")
        }
        guard (1...64).contains(method.utf8.count), host.utf8.count <= 255, path.utf8.count + query.utf8.count <= 1 << 20 else {
            throw ResponseSignatureError(.malformedChallenge, "The method, host, path or query is empty or too long to sign.")
        }
        self.method = method
        self.host = HostName.normalize(host)
        self.path = Self.canonicalPath(path)
        self.query = query
        self.requestBodyDigest = sha256(requestBody)
        self.nonce = nonce
        self.requestTime = requestTime
    }

    /// A fresh challenge for a request the client is about to send: 32 random bytes of nonce
    /// and `now`, rounded down to the second.
    ///
    /// - Throws: ``ResponseSignatureError/Code/malformedChallenge`` for a URL without a host;
    ///   ``ResponseSignatureError/Code/openSSLFailure`` if no random bytes could be drawn.
    public init(method: String, url: URL, requestBody: [UInt8] = [], now: Date = Date()) throws(ResponseSignatureError) {
        guard let host = url.host, !host.isEmpty,
            let components = URLComponents(url: url.absoluteURL, resolvingAgainstBaseURL: true)
        else {
            throw ResponseSignatureError(.malformedChallenge, "The URL \(url.absoluteString) has no host.")
        }
        try self.init(
            method: method, host: host, path: components.percentEncodedPath, query: components.percentEncodedQuery ?? "",
            requestBody: requestBody, nonce: try Ed25519.randomBytes(Self.clientNonceLength),
            requestTime: Int64(now.timeIntervalSince1970.rounded(.down)))
    }

    /// The challenge of a request as a server received it.
    ///
    /// - Parameters:
    ///   - method: the request method.
    ///   - target: the request target exactly as on the request line: `/path?query`.
    ///   - headers: the request's header fields; `X-ServerTrust-Nonce`,
    ///     `X-ServerTrust-Request-Time` and (unless `host` is given) `Host` are read.
    ///   - body: the request body as received.
    ///   - host: the host name clients use, when a proxy in front of the server rewrites `Host`.
    ///     Default nil: the `Host` header, port removed.
    /// - Throws: ``ResponseSignatureError/Code/missingChallenge`` when the request did not ask
    ///   for a signature (no nonce or request time header), so the response goes out unsigned;
    ///   ``ResponseSignatureError/Code/malformedChallenge`` for a repeated, malformed or
    ///   out-of-range header, or no host.
    public init(
        receivedMethod method: String, target: String, headers: [(name: String, value: String)], body: [UInt8],
        host: String? = nil
    ) throws(ResponseSignatureError) {
        func single(_ name: String) throws(ResponseSignatureError) -> String? {
            let values = headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
            guard values.count <= 1 else { throw ResponseSignatureError(.malformedChallenge, "The request has \(values.count) \(name) fields.") }
            return values.first.map { String($0.trimmingASCIIWhitespace()) }
        }
        guard let nonceText = try single(SignedResponseHeader.nonce), let timeText = try single(SignedResponseHeader.requestTime) else {
            throw ResponseSignatureError(
                .missingChallenge, "The request has no \(SignedResponseHeader.nonce) and \(SignedResponseHeader.requestTime): it did not ask for a signature.")
        }
        guard nonceText.utf8.count <= 128, let nonce = StrictBase64.decode(nonceText.utf8) else {
            throw ResponseSignatureError(.malformedChallenge, "\(SignedResponseHeader.nonce) is not valid base64.")
        }
        guard let time = SignatureHeader.decimal(timeText.utf8) else {
            throw ResponseSignatureError(.malformedChallenge, "\(SignedResponseHeader.requestTime) is not a decimal number of seconds.")
        }
        var authority = host
        if authority == nil { authority = try single("Host") }
        guard let authority, let name = Self.hostWithoutPort(authority) else {
            throw ResponseSignatureError(.malformedChallenge, "The request has no Host to sign.")
        }
        let mark = target.firstIndex(of: "?")
        try self.init(
            method: method, host: name, path: String(target[..<(mark ?? target.endIndex)]),
            query: mark.map { String(target[target.index(after: $0)...]) } ?? "", requestBody: body, nonce: nonce, requestTime: time)
    }

    /// The header fields the client adds to its request.
    public var requestHeaders: [(name: String, value: String)] {
        [(SignedResponseHeader.nonce, StrictBase64.encode(nonce)), (SignedResponseHeader.requestTime, String(requestTime))]
    }

    /// SHA-256 over `"ServerTrust-Request-v1" 0x00` and the length-prefixed method, host, path,
    /// query and request-body digest.
    public var requestDigest: [UInt8] {
        sha256(SignedFields.message(
            domain: Self.requestDigestDomain,
            [Array(method.utf8), Array(host.utf8), Array(path.utf8), Array(query.utf8), requestBodyDigest]))
    }

    /// `api.example.com` from `api.example.com:8443`, `::1` from `[::1]:8443`; nil if empty.
    static func hostWithoutPort(_ authority: String) -> String? {
        var name = Substring(authority)
        if name.hasPrefix("["), let close = name.firstIndex(of: "]") {
            name = name[...close]
        } else if let colon = name.lastIndex(of: ":"), name.firstIndex(of: ":") == colon {
            name = name[..<colon]
        }
        return name.isEmpty ? nil : String(name)
    }

    /// The path libcurl puts on the request line: `/` for an empty path, and `.` and `..`
    /// segments removed (RFC 3986 section 5.2.4).
    static func canonicalPath(_ path: String) -> String {
        guard !path.isEmpty else { return "/" }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.contains(where: { $0 == "." || $0 == ".." }) else { return path }
        // Segment-wise form of remove_dot_segments: the first element is what precedes the
        // first "/" (empty for an absolute path); a trailing "." or ".." leaves a trailing "/".
        var output: [Substring] = []
        for (index, segment) in segments.enumerated() {
            let isLast = index == segments.count - 1
            switch segment {
            case ".":
                if isLast { output.append("") }
            case "..":
                if output.count > 1 { output.removeLast() }
                if isLast { output.append("") }
            default:
                output.append(segment)
            }
        }
        let result = output.joined(separator: "/")
        return result.isEmpty ? "/" : result
    }
}
