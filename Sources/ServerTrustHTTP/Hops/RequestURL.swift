import Foundation
internal import ServerTrust

// Fast path: docs/PERFORMANCE.md#fast-paths, "URL read from its bytes".
/// The scheme and host of a request URL read from its bytes when the URL is a plain
/// `https://host[:port]/…`, and Foundation's parse otherwise: `URL.scheme` and `URL.host` parse
/// the string again on every call. `RequestValueTests` checks that both ways agree.
enum RequestURL {
    /// `url`'s scheme, lower-cased. RFC 3986's scheme is everything before the first colon, so a
    /// serialised URL that starts `https:` (either case) has the scheme `https`, read from its
    /// first six bytes; any other is asked of Foundation (`URL.scheme` re-reads the string).
    /// `startsWithHTTPS` is ``startsWithHTTPS(_:)`` of `url`'s absolute
    /// string, which the caller tests once for both the scheme and the host.
    static func lowercasedScheme(of url: URL, startsWithHTTPS: Bool) -> String {
        startsWithHTTPS ? "https" : url.scheme?.lowercased() ?? ""
    }

    /// Whether `text` starts `https:`, in any case.
    static func startsWithHTTPS(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable(startsWithHTTPS) == true
    }

    private static func startsWithHTTPS(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // `byte | 0x20` lower-cases a letter and maps no other byte onto one.
        bytes.count >= 6 && bytes[0] | 0x20 == 0x68 && bytes[1] | 0x20 == 0x74 && bytes[2] | 0x20 == 0x74 && bytes[3] | 0x20 == 0x70
            && bytes[4] | 0x20 == 0x73 && bytes[5] == 0x3A
    }

    /// The host of an `https://` URL whose authority is only a host name of letters, digits,
    /// dots and hyphens, with or without a port of digits; nil for any other URL, whose host is
    /// asked of Foundation (`URL.host` parses the string again and percent-decodes the host).
    ///
    /// For such an authority, the bytes between `//` and the port or path are the host as
    /// Foundation reads it: nothing in it can be percent-decoded, bracketed, preceded by user
    /// information or mapped by IDNA, and `URL` keeps a host's case. Anything else — `%`, `@`,
    /// `[`, `_`, a non-ASCII byte, an empty or non-numeric port — takes Foundation's parse
    /// (`RequestValueTests` checks the two agree).
    static func plainHTTPSHost(of absoluteString: String) -> String? {
        startsWithHTTPS(absoluteString) ? plainHTTPSHost(afterPrefixOf: absoluteString) : nil
    }

    /// ``plainHTTPSHost(of:)`` for a string known to start `https:` (``startsWithHTTPS(_:)``),
    /// which `Session.makeTransfer` has already tested for the scheme. Its first six
    /// bytes are not looked at again.
    static func plainHTTPSHost(afterPrefixOf absoluteString: String) -> String? {
        absoluteString.utf8.withContiguousStorageIfAvailable { bytes -> String? in
            let count = bytes.count
            guard count > 8, bytes[6] == 0x2F, bytes[7] == 0x2F else { return nil }
            // The host: letters, digits, dots and hyphens (`&-` range tests: one compare each).
            var index = 8
            while index < count {
                let byte = bytes[index]
                guard (byte | 0x20) &- 0x61 < 26 || byte &- 0x30 < 10 || byte == 0x2E || byte == 0x2D else { break }
                index += 1
            }
            let end = index
            guard end > 8 else { return nil }
            // A port: `:` and one or more digits.
            if index < count, bytes[index] == 0x3A {
                index += 1
                let digits = index
                while index < count, bytes[index] &- 0x30 < 10 { index += 1 }
                guard index > digits else { return nil }
            }
            // Then the end of the authority: the string's, or `/`, `?`, `#`. Anything else —
            // `@`, `%`, `[`, `_`, a second `:`, a non-ASCII byte — is left to Foundation.
            if index < count {
                let byte = bytes[index]
                guard byte == 0x2F || byte == 0x3F || byte == 0x23 else { return nil }
            }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[8..<end]), as: UTF8.self)
        } ?? nil
    }

    /// The host of `url` (whose absolute string is `absolute`), read from its bytes for a plain
    /// `https://` URL (``plainHTTPSHost(afterPrefixOf:)``), else asked of Foundation; nil when
    /// it has none or an empty one.
    @inline(__always) static func rawHost(of url: URL, _ absolute: String, startsWithHTTPS: Bool) -> String? {
        guard let host = (startsWithHTTPS ? plainHTTPSHost(afterPrefixOf: absolute) : nil) ?? url.host, !host.isEmpty else { return nil }
        return host
    }

    /// `text` as an absolute URL. A string Foundation parsed that starts `https:` has that
    /// scheme (RFC 3986: everything before the first colon), so only other strings ask
    /// `URL.scheme`, which parses the string again.
    static func parse(_ text: String) throws(SessionError) -> URL {
        guard let url = URL(string: text), Self.startsWithHTTPS(text) || url.scheme != nil else {
            throw SessionError(.invalidRequest, "\"\(URLRedaction.redacted(text))\" is not an absolute URL.")
        }
        return url
    }
}
