public import Foundation

/// What a signed response must prove it answers: the client's nonce and request time, and the
/// request as the client sent it (method, host, port, path, query and body).
///
/// Both sides build one. The client makes a fresh one per request with
/// ``init(method:url:requestBody:now:)`` and sends ``requestHeaders``; the server rebuilds it
/// from what it received with ``init(receivedMethod:target:headers:body:host:)`` and signs it.
/// The server's signature then covers the request *it* saw, so a request altered on the way
/// fails verification with `ResponseSignatureError.Code.requestMismatch`.
///
/// Canonical forms, identical on both sides (docs/SIGNED_RESPONSES_V1.md, section 6):
/// - method: as sent (the session sends it uppercased);
/// - host: lowercased, without port, brackets or trailing dot (``HostName/normalize(_:)``);
///   on the server, from the `Host` header unless given explicitly;
/// - port: the effective port — explicit, or the scheme's default (443 for `https`, 80 for
///   `http`), so `https://h/` and `https://h:443/` agree; a different port is a different
///   origin, and a response signed by one service must not verify for another on the same host.
///   On the server, the `Host` header's port, 443 when it has none;
/// - path: percent-encoded exactly as on the request line, `/` when empty. The server signs the
///   bytes it received, never a normalised form: a `/a/../admin` inserted on the way must not
///   sign as `/admin`. The client signs what libcurl puts on the wire: libcurl 7.88 removes
///   `.` and `..` segments (RFC 3986 section 5.2.4; the session never sets
///   `CURLOPT_PATH_AS_IS`) and sends percent-encoded dots (`%2e`) as written, and so does
///   ``init(method:url:requestBody:now:)``;
/// - query: the raw text after `?`, empty when there is none;
/// - body: SHA-256 of the request body bytes (of the empty string when there is none).
public struct SignatureChallenge: Hashable, Sendable {
    /// The random nonce (16 to 64 bytes).
    public let nonce: [UInt8]
    /// The client's request time, seconds since 1970.
    public let requestTime: Int64
    public let method: String
    public let host: String
    /// The effective port: explicit in the URL or `Host`, or the scheme's default.
    public let port: Int
    public let path: String
    public let query: String
    /// SHA-256 of the request body.
    package let requestBodyDigest: [UInt8]

    static let nonceLengths = 16...64
    static let clientNonceLength = 32
    static let requestDigestDomain = Array("ServerTrust-Request-v1".utf8) + [0]

    /// A challenge from explicit parts, taken as they are on the wire: `path` is signed exactly
    /// as given (`/` when empty), `port` is the effective port.
    ///
    /// - Parameters:
    ///   - method: the request method, as sent.
    ///   - host: the host the request was sent to; normalised (lowercased, no port, brackets or
    ///     trailing dot) before it is signed.
    ///   - port: the port the request was sent to. Default 443, the `https` port.
    ///   - path: the percent-encoded path as on the request line.
    ///   - query: the raw text after `?`, empty when there is none.
    ///   - requestBody: the request body; only its SHA-256 is kept.
    ///   - nonce: the client's random nonce, 16 to 64 bytes.
    ///   - requestTime: the client's request time, seconds since 1970.
    /// - Throws: `ResponseSignatureError.Code.malformedChallenge` for a nonce outside 16–64
    ///   bytes, a request time before 1970 or after 9999, an empty or over-long method, an
    ///   over-long host, a port outside 1–65535, or a path and query over 1 MiB.
    public init(
        method: String, host: String, port: Int = 443, path: String, query: String, requestBody: [UInt8],
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
        guard Self.ports.contains(port) else {
            throw ResponseSignatureError(.malformedChallenge, "A port is 1 to 65535; got \(port).")
        }
        self.method = method
        self.host = HostName.normalize(host)
        self.port = port
        self.path = path.isEmpty ? "/" : path
        self.query = query
        self.requestBodyDigest = sha256(requestBody)
        self.nonce = nonce
        self.requestTime = requestTime
    }

    /// A fresh challenge for a request the client is about to send: 32 random bytes of nonce
    /// and `now`, rounded down to the second; the port is the URL's, or its scheme's default.
    ///
    /// The path is the one libcurl sends: `/` when empty, `.` and `..` segments removed.
    ///
    /// - Throws: `ResponseSignatureError.Code.malformedChallenge` for a URL without a host or
    ///   with a scheme other than `https` or `http`;
    ///   `ResponseSignatureError.Code.openSSLFailure` if no random bytes could be drawn.
    public init(method: String, url: URL, requestBody: [UInt8] = [], now: Date = Date()) throws(ResponseSignatureError) {
        guard let host = url.host, !host.isEmpty,
            let components = URLComponents(url: url.absoluteURL, resolvingAgainstBaseURL: true)
        else {
            throw ResponseSignatureError(.malformedChallenge, "The URL \(URLRedaction.redacted(url)) has no host.")
        }
        guard let defaultPort = Self.defaultPorts[components.scheme?.lowercased() ?? ""] else {
            throw ResponseSignatureError(.malformedChallenge, "The URL \(URLRedaction.redacted(url)) is neither https: nor http:, so its port is unknown.")
        }
        try self.init(
            method: method, host: host, port: url.port ?? defaultPort, path: Self.pathAsLibcurlSends(components.percentEncodedPath),
            query: components.percentEncodedQuery ?? "", requestBody: requestBody, nonce: try SecureRandom.bytes(Self.clientNonceLength),
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
    ///   - host: the authority clients use — `api.example.com`, or `api.example.com:8443` for a
    ///     port other than 443 — when a proxy in front of the server rewrites `Host`. Default
    ///     nil: the `Host` header.
    ///
    /// The port signed is the authority's, or 443 when it names none: clients reach signed
    /// services over `https`. A plain-`http` service on port 80 passes `host: "name:80"`.
    /// - Throws: `ResponseSignatureError.Code.missingChallenge` when the request did not ask
    ///   for a signature (no nonce or request time header), so the response goes out unsigned;
    ///   `ResponseSignatureError.Code.malformedChallenge` for a repeated, malformed or
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
        guard let authority, let (name, port) = Self.hostAndPort(authority) else {
            throw ResponseSignatureError(.malformedChallenge, "The request has no Host to sign, or its port is not a number from 1 to 65535.")
        }
        let mark = target.firstIndex(of: "?")
        try self.init(
            method: method, host: name, port: port ?? Self.defaultPorts["https"]!, path: String(target[..<(mark ?? target.endIndex)]),
            query: mark.map { String(target[target.index(after: $0)...]) } ?? "", requestBody: body, nonce: nonce, requestTime: time)
    }

    /// The header fields the client adds to its request.
    public var requestHeaders: [(name: String, value: String)] {
        [(SignedResponseHeader.nonce, StrictBase64.encode(nonce)), (SignedResponseHeader.requestTime, String(requestTime))]
    }

    /// SHA-256 over `"ServerTrust-Request-v1" 0x00` and the length-prefixed method, host, port
    /// (2 bytes, big-endian), path, query and request-body digest.
    package var requestDigest: [UInt8] {
        sha256(SignedFields.message(
            domain: Self.requestDigestDomain,
            [Array(method.utf8), Array(host.utf8), SignedFields.uint16(UInt16(port)), Array(path.utf8), Array(query.utf8), requestBodyDigest]))
    }

    static let ports = 1...65535
    static let defaultPorts = ["https": 443, "http": 80]

    /// `("api.example.com", 8443)` from `api.example.com:8443`, `("::1", nil)` from `[::1]`;
    /// nil for an empty host or a port that is not 1–65535. An empty port (`host:`) is none.
    static func hostAndPort(_ authority: String) -> (host: String, port: Int?)? {
        var name = Substring(authority)
        var portText: Substring = ""
        if name.hasPrefix("["), let close = name.firstIndex(of: "]") {
            let rest = name[name.index(after: close)...]
            guard rest.isEmpty || rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
            name = name[...close]
        } else if let colon = name.lastIndex(of: ":"), name.firstIndex(of: ":") == colon {
            portText = name[name.index(after: colon)...]
            name = name[..<colon]
        }
        guard !name.isEmpty else { return nil }
        guard !portText.isEmpty else { return (String(name), nil) }
        guard let port = SignatureHeader.decimal(portText.utf8, maximumDigits: 5), ports.contains(Int(port)) else { return nil }
        return (String(name), Int(port))
    }

    /// The path libcurl puts on the request line: `/` for an empty path, and `.` and `..`
    /// segments removed (RFC 3986 section 5.2.4) — only literal ones: libcurl 7.88 sends
    /// `%2e` as written. Client side only; a server signs the path it received.
    static func pathAsLibcurlSends(_ path: String) -> String {
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
