package import Foundation
package import HTTPTypes
internal import ServerTrust

/// The one rule by which the adapters (ServerTrustURLSession, ServerTrustOpenAPI,
/// ServerTrustVapor) admit a request written in their own types: each hands its URL and header
/// fields to ``admit(target:url:fields:bodyLength:)`` and maps a ``Refusal`` to its own error, so
/// the same request gets the same verdict whichever adapter sends it. Nothing is sent before it.
///
/// - **CR, LF, NUL** in the request target (the URL as the caller wrote it), a header name or a
///   header value: refused. `HTTPField` would turn them into spaces, changing the value.
/// - **`Host`**: the URL decides which server is reached and which policy evaluates it. A `Host`
///   naming the URL's host, ASCII case ignored, with the URL's port — or with none when that
///   port is the scheme's default (443 for https, 80 for http) — is the same server, and is left
///   out: the session sends the URL's authority, on every hop. Anything else (another host,
///   another port, an empty or malformed value) is refused as another server.
/// - **`Content-Length`**: a byte count (digits only), every such field the same, and equal to
///   the body's length when that is known; it is then left out, as the session frames the body
///   itself. For a body of unknown length (a stream) it is the length the stream must have
///   (``Admitted/contentLength``): one that ends short or runs past fails the upload.
/// - **`Transfer-Encoding`**: refused; the body's framing is the session's.
package enum RequestAdmission {
    /// Why a request was refused, by kind, with a reason that names the field.
    package struct Refusal: Error, Hashable, Sendable, CustomStringConvertible {
        package enum Kind: String, Hashable, Sendable, CaseIterable {
            /// CR, LF or NUL in the request target.
            case invalidTarget
            /// A header name that is not an RFC 9110 token (CR, LF and NUL included).
            case invalidHeaderName
            /// CR, LF or NUL in a header value.
            case invalidHeaderValue
            /// A `Host` naming another server than the URL.
            case conflictingHost
            /// A `Content-Length` that is no byte count, or disagrees with another or the body.
            case conflictingContentLength
            /// A `Transfer-Encoding` field.
            case transferEncoding
        }

        package let kind: Kind
        package let reason: String

        init(_ kind: Kind, _ reason: String) {
            self.kind = kind
            self.reason = reason
        }

        /// The refusal as the session's own error, `invalidRequest`: what every adapter throws.
        package func sessionError(url: String) -> SessionError { SessionError(.invalidRequest, reason, url: url) }

        package var description: String { "\(kind): \(reason)" }
    }

    /// What an admitted request sends: its fields without `Host` and `Content-Length`, and the
    /// length a `Content-Length` declared (nil without one).
    package struct Admitted: Sendable {
        package var headers: HTTPFields
        package var contentLength: Int?
    }

    /// Admits a request, or refuses it by the rule above.
    ///
    /// - Parameters:
    ///   - target: the URL as the caller wrote it, before any parsing (which may percent-encode).
    ///   - url: the URL the request is sent to.
    ///   - fields: the header fields in order, names and values as written.
    ///   - bodyLength: the body's byte count, 0 for none; nil for a stream of unknown length.
    package static func admit(
        target: String, url: URL, fields: some Sequence<(name: String, value: String)>, bodyLength: Int?
    ) throws(Refusal) -> Admitted {
        guard !containsLineBreak(target) else {
            throw Refusal(.invalidTarget, "The URL contains CR, LF or NUL, which a request line cannot carry.")
        }
        var headers = HTTPFields()
        var declared: Int?
        for (name, value) in fields {
            guard let fieldName = HTTPField.Name(name) else {
                throw Refusal(.invalidHeaderName, "The header name \(name.debugDescription) is not an RFC 9110 token.")
            }
            guard !containsLineBreak(value) else {
                throw Refusal(.invalidHeaderValue, "The value of header \"\(fieldName.rawName)\" contains CR, LF or NUL.")
            }
            switch fieldName {
            case .transferEncoding:
                throw Refusal(
                    .transferEncoding,
                    "The header \"Transfer-Encoding: \(value)\" cannot be honoured: the session frames the body (Content-Length, chunked or HTTP/2 DATA frames).")
            case .contentLength:
                guard let count = byteCount(value) else {
                    throw Refusal(.conflictingContentLength, "The header \"Content-Length: \(value)\" is not a byte count.")
                }
                if let declared, declared != count {
                    throw Refusal(.conflictingContentLength, "Two Content-Length fields disagree (\(declared) and \(count) bytes).")
                }
                if let bodyLength, count != bodyLength {
                    throw Refusal(
                        .conflictingContentLength, "The header \"Content-Length: \(value)\" disagrees with the body's \(bodyLength) bytes.")
                }
                declared = count
            case _ where fieldName.canonicalName == "host":
                guard namesServer(of: url, value) else {
                    throw Refusal(
                        .conflictingHost,
                        "The header \"Host: \(value)\" names another server than the URL's \(url.host ?? "(none)"); the URL decides which server is reached and which policy evaluates it.")
                }
            default:
                headers.append(HTTPField(name: fieldName, value: value))
            }
        }
        return Admitted(headers: headers, contentLength: declared)
    }

    /// Whether a `Host` value names the server `url` reaches: its host, ASCII case ignored (an
    /// IPv6 address in brackets), and its port, which may be left out when it is the scheme's
    /// default (443 for https, 80 for http). Read on bytes, as the field goes out.
    static func namesServer(of url: URL, _ value: String) -> Bool {
        guard var urlHost = url.host.map({ Array($0.utf8) }), !urlHost.isEmpty else { return false }
        if urlHost.first == UInt8(ascii: "["), urlHost.last == UInt8(ascii: "]") { urlHost = Array(urlHost.dropFirst().dropLast()) }
        let scheme = url.scheme?.lowercased()
        let defaultPort: Int? = scheme == "https" ? 443 : scheme == "http" ? 80 : nil
        let urlPort = url.port ?? defaultPort
        let text = trimmed(value)
        let host: ArraySlice<UInt8>
        let port: ArraySlice<UInt8>?
        if text.first == UInt8(ascii: "[") {
            guard let close = text.firstIndex(of: UInt8(ascii: "]")) else { return false }
            host = text[(text.startIndex + 1)..<close]
            let rest = text[(close + 1)...]
            guard rest.isEmpty || rest.first == UInt8(ascii: ":") else { return false }
            port = rest.isEmpty ? nil : rest.dropFirst()
        } else if let colon = text.firstIndex(of: UInt8(ascii: ":")) {
            host = text[..<colon]
            port = text[(colon + 1)...]
        } else {
            host = text
            port = nil
        }
        guard host.count == urlHost.count, zip(host, urlHost).allSatisfy({ folded($0) == folded($1) }) else { return false }
        guard let port else { return urlPort == defaultPort }
        guard (1...5).contains(port.count), port.allSatisfy(isDigit) else { return false }
        return Int(String(decoding: port, as: UTF8.self)) == urlPort
    }

    /// A `Content-Length` value as a byte count: digits only (RFC 9110 §8.6), around optional
    /// SP and HTAB; nil for anything else, a sign or a list included, or a count past `Int`.
    static func byteCount(_ value: String) -> Int? {
        let text = trimmed(value)
        guard !text.isEmpty, text.allSatisfy(isDigit) else { return nil }
        return Int(String(decoding: text, as: UTF8.self))
    }

    private static func containsLineBreak(_ text: String) -> Bool {
        text.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

    private static func folded(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }

    /// The bytes of `value` without SP and HTAB at either end (RFC 9110's OWS around a value).
    private static func trimmed(_ value: String) -> ArraySlice<UInt8> {
        var bytes = Array(value.utf8)[...]
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes = bytes.dropLast() }
        return bytes
    }
}
