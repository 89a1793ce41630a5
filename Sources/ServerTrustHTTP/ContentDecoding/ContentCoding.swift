import Foundation
import HTTPTypes

/// A content coding a ``Session`` can ask for and decode (`Accept-Encoding`, `Content-Encoding`).
///
/// Configured in ``Session/Configuration/contentDecoding`` (or per request,
/// ``Request/contentDecoding``). `gzip` and `deflate` are always available; `br` and `zstd` only
/// when the runtime libcurl was built with them (``isSupportedByLibcurl``), and never for a host
/// under a signed-response policy, whose bodies the session decodes itself after verifying them
/// (zlib: gzip and deflate only).
public struct ContentCoding: Hashable, Sendable, CustomStringConvertible {
    private enum Base: String, Hashable, Sendable, CaseIterable {
        case gzip, deflate, br, zstd
    }

    private let base: Base
    private init(_ base: Base) { self.base = base }

    /// `gzip` (RFC 1952). A `Content-Encoding: x-gzip` is decoded as gzip.
    public static let gzip = ContentCoding(.gzip)
    /// `deflate`: zlib-wrapped (RFC 1950), or a raw deflate stream (RFC 1951), as libcurl accepts.
    public static let deflate = ContentCoding(.deflate)
    /// `br` (Brotli, RFC 7932); only when libcurl has it (`curl -V` lists `brotli`).
    public static let brotli = ContentCoding(.br)
    /// `zstd` (RFC 8878); only when libcurl has it (`curl -V` lists `zstd`).
    public static let zstd = ContentCoding(.zstd)

    /// Every coding the runtime libcurl decodes, in the order `curl --compressed` asks for
    /// them: `deflate`, `gzip`, then `br` and `zstd` when built in.
    public static var supportedByLibcurl: [ContentCoding] { [.deflate, .gzip, .brotli, .zstd].filter(\.isSupportedByLibcurl) }

    /// The token, as in `Accept-Encoding` and `Content-Encoding`: `gzip`, `deflate`, `br`, `zstd`.
    public var name: String { base.rawValue }

    public var description: String { name }

    /// Whether the runtime libcurl decodes this coding (`curl_version_info` features).
    public var isSupportedByLibcurl: Bool {
        switch base {
        case .gzip, .deflate: CurlRuntime.hasZlib
        case .br: CurlRuntime.hasBrotli
        case .zstd: CurlRuntime.hasZstd
        }
    }

    /// Whether the session decodes this coding itself (zlib), as it does for the bodies of
    /// signed-response hosts after verifying their signature.
    var isDecodedBySession: Bool { base == .gzip || base == .deflate }

    /// The coding a `Content-Encoding` token names (case-insensitive; `x-gzip` is gzip), or nil.
    init?(token: String) {
        let lowered = token.lowercased()
        guard let base = lowered == "x-gzip" ? .gzip : Base(rawValue: lowered) else { return nil }
        self.base = base
    }

    /// The codings of a response, in the order the server applied them: every `Content-Encoding`
    /// field's comma-separated tokens, trimmed, `identity` and empty ones left out.
    static func tokens(of headers: HTTPFields) -> [String] {
        headers[fields: .contentEncoding]
            .flatMap { $0.value.split(separator: ",") }
            .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " \t")) }
            .filter { !$0.isEmpty && $0.caseInsensitiveCompare("identity") != .orderedSame }
    }
}
