/// One line of a response head as curl's header callback hands it over, parsed on its bytes.
///
/// Foundation's `trimmingCharacters(in:)` goes through `NSString` and UTF-16 on Linux and cost
/// 60 % of a kept-alive request (docs/PERFORMANCE.md); every decision here is made on bytes and
/// a `String` is made only for what is kept.
///
/// - The line is trimmed of SP, HTAB, CR and LF at both ends (RFC 9110 OWS plus the line
///   ending, bare LF included). Other bytes are never trimmed: not VT or FF, and not Unicode
///   spaces such as U+00A0, which Foundation's whitespace set also removed.
/// - A line starting `HTTP/` is a status line: `version SP status [SP reason]`, split on SP with
///   empty pieces skipped. A status that is not a number is 0 (never a success).
/// - A blank line (after trimming) ends a head.
/// - Otherwise the first colon splits name from value; the name is kept as is, the value is
///   trimmed of SP and HTAB. A line without a colon is ignored — including a folded (obs-fold)
///   continuation line, which is trimmed and parsed like any other line, as before.
/// - Bytes that are not UTF-8 never fail the parse: names and values are decoded with U+FFFD
///   in their place.
enum HeaderLine: Equatable {
    case status(code: Int, httpVersion: String)
    case end
    case field(name: String, value: String)
    case ignored

    init(_ line: UnsafeRawBufferPointer) {
        let trimmed = Self.trim(line[...], isSpace: Self.isLineSpace)
        if trimmed.isEmpty {
            self = .end
        } else if trimmed.starts(with: Self.statusPrefix) {
            let parts = trimmed.split(separator: UInt8(ascii: " "), maxSplits: 2)
            let code = parts.count > 1 ? Int(String(decoding: parts[1], as: UTF8.self)) ?? 0 : 0
            self = .status(code: code, httpVersion: String(decoding: parts[0], as: UTF8.self))
        } else if let colon = trimmed.firstIndex(of: UInt8(ascii: ":")) {
            let value = Self.trim(trimmed[(colon + 1)...], isSpace: Self.isFieldSpace)
            self = .field(name: String(decoding: trimmed[..<colon], as: UTF8.self), value: String(decoding: value, as: UTF8.self))
        } else {
            self = .ignored
        }
    }

    private static let statusPrefix = Array("HTTP/".utf8)

    private static func isLineSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A
    }

    private static func isFieldSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    private static func trim(_ bytes: Slice<UnsafeRawBufferPointer>, isSpace: (UInt8) -> Bool) -> Slice<UnsafeRawBufferPointer> {
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else {
            return bytes[bytes.startIndex..<bytes.startIndex]
        }
        return bytes[first...last]
    }
}
