import HTTPTypes

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One line of a response head as curl's header callback hands it over, parsed on its bytes.
///
/// Foundation's `trimmingCharacters(in:)` goes through `NSString` and UTF-16 on Linux; every
/// decision here is made on bytes and a `String` is made only for what is kept
/// (docs/PERFORMANCE.md#fast-paths, "Header lines parsed on bytes").
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
///
/// The transfer reads a line as ``Parts`` (the bytes, no `String`) and makes an `HTTPField`
/// straight from them (``field(name:value:)``).
enum HeaderLine {
    /// A parsed line as slices of curl's buffer: valid only while the callback runs.
    enum Parts {
        case status(code: Int, httpVersion: UnsafeRawBufferPointer)
        case end
        case field(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)
        case ignored
    }

    /// The parts of `line`. Plain index loops over the buffer and `memchr` for the colon: the
    /// collection algorithms on slices with a predicate argument (`firstIndex(where:)`,
    /// `starts(with:)`) cost twice as much on the nine or so lines of a typical head.
    static func parts(of line: UnsafeRawBufferPointer) -> Parts {
        var start = 0
        var end = line.count
        while start < end, isLineSpace(line[start]) { start += 1 }
        while end > start, isLineSpace(line[end - 1]) { end -= 1 }
        if start == end { return .end }
        if isStatusLine(line, from: start, to: end) {
            // `version SP+ code [SP …]`: the first piece, then the next non-empty one.
            let trimmed = line[start..<end]
            let space = UInt8(ascii: " ")
            let versionEnd = trimmed.firstIndex(of: space) ?? trimmed.endIndex
            let codeStart = trimmed[versionEnd...].firstIndex { $0 != space } ?? trimmed.endIndex
            let codeEnd = trimmed[codeStart...].firstIndex(of: space) ?? trimmed.endIndex
            let code = statusCode(UnsafeRawBufferPointer(rebasing: trimmed[codeStart..<codeEnd]))
            return .status(code: code, httpVersion: UnsafeRawBufferPointer(rebasing: trimmed[..<versionEnd]))
        }
        // `start < end`, so the buffer has a base address.
        guard let found = memchr(line.baseAddress! + start, Int32(UInt8(ascii: ":")), end - start) else { return .ignored }
        let colon = line.baseAddress!.distance(to: UnsafeRawPointer(found))
        var valueStart = colon + 1
        var valueEnd = end
        while valueStart < valueEnd, isFieldSpace(line[valueStart]) { valueStart += 1 }
        while valueEnd > valueStart, isFieldSpace(line[valueEnd - 1]) { valueEnd -= 1 }
        return .field(
            name: UnsafeRawBufferPointer(rebasing: line[start..<colon]), value: UnsafeRawBufferPointer(rebasing: line[valueStart..<valueEnd]))
    }

    /// The status code's bytes read as `Int(String)` reads them, without making the `String`:
    /// an optional sign, then one or more ASCII digits; anything else, or a number that does
    /// not fit an `Int`, is 0 (never a success).
    static func statusCode(_ bytes: UnsafeRawBufferPointer) -> Int {
        var index = 0
        var negative = false
        if let first = bytes.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-") {
            negative = first == UInt8(ascii: "-")
            index = 1
        }
        guard index < bytes.count else { return 0 }
        var value = 0
        while index < bytes.count {
            let digit = Int(bytes[index]) &- 0x30
            guard digit >= 0, digit <= 9 else { return 0 }
            let (times10, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowB) = negative ? times10.subtractingReportingOverflow(digit) : times10.addingReportingOverflow(digit)
            if overflowA || overflowB { return 0 }
            value = next
            index += 1
        }
        return value
    }

    /// The `String` of a status line's version: the usual ones without decoding the bytes.
    static func version(_ bytes: UnsafeRawBufferPointer) -> String {
        if let base = bytes.baseAddress {
            for known in knownVersions where known.bytes.count == bytes.count && memcmp(known.bytes, base, bytes.count) == 0 {
                return known.string
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static let knownVersions: [(bytes: [UInt8], string: String)] = ["HTTP/1.1", "HTTP/2", "HTTP/1.0", "HTTP/3"].map {
        (Array($0.utf8), $0)
    }

    /// What a header line is to the transfer, without splitting a field line (that is done
    /// when the fields are read, by ``parts(of:)``): a status line, the blank line ending a
    /// head, or any other line, kept as it is.
    enum Kind {
        case status(code: Int, httpVersion: UnsafeRawBufferPointer)
        case end
        case other
    }

    /// The kind of `line`, decided exactly as ``parts(of:)`` decides it.
    static func kind(of line: UnsafeRawBufferPointer) -> Kind {
        // Nearly every line is a field, which starts with its name: a first byte that is neither
        // line space nor the `H` of `HTTP/` decides it without a scan, as the trimmed line then
        // starts at that byte (not blank, not `HTTP/`).
        if let first = line.first, !isLineSpace(first), first != 0x48 { return .other }
        var start = 0
        var end = line.count
        while start < end, isLineSpace(line[start]) { start += 1 }
        if start == end { return .end }
        while end > start, isLineSpace(line[end - 1]) { end -= 1 }
        guard isStatusLine(line, from: start, to: end) else { return .other }
        guard case .status(let code, let version) = parts(of: line) else { return .other }  // always a status here
        return .status(code: code, httpVersion: version)
    }

    /// Whether `line[start..<end]` starts with `HTTP/`.
    private static func isStatusLine(_ line: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Bool {
        end - start >= 5 && line[start] == 0x48 && line[start + 1] == 0x54 && line[start + 2] == 0x54 && line[start + 3] == 0x50
            && line[start + 4] == 0x2F
    }

    /// The field a `name: value` line makes, or nil when the name is not an RFC 9110 token
    /// (`Bad Name`, `ETag ` with the space before the colon, an empty name): such a line cannot
    /// be an `HTTPField` and is dropped. The value is kept as received but for CR, LF and NUL
    /// (`HTTPField(name:lenientValue:)`), which a header line cannot carry anyway; bytes that
    /// are not UTF-8 stay as they came and read as U+FFFD through `HTTPField.value`.
    ///
    /// One `String` is made per field (the value's), and none for a name servers send on most
    /// responses in either of its usual spellings (``CommonFieldNames``).
    static func field(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> HTTPField? {
        guard let name = CommonFieldNames.name(spelled: name) ?? HTTPField.Name(String(decoding: name, as: UTF8.self)) else { return nil }
        let bytes = value.assumingMemoryBound(to: UInt8.self)
        if bytes.allSatisfy({ $0 == 0x09 || (0x20...0x7E).contains($0) }) {
            // Printable ASCII and HTAB, nearly every value: legal as it is under either rule,
            // and made into a String without the generic UTF-8 validation the lenient path runs.
            return HTTPField(name: name, value: String(decoding: bytes, as: UTF8.self))
        }
        return HTTPField(name: name, lenientValue: bytes)
    }

    private static func isLineSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A
    }

    private static func isFieldSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
}

/// `HTTPField.Name`s made once for the field names most responses carry, in the spelling
/// HTTP/1.1 servers use (`Content-Type`) and the lower case HTTP/2 requires (`content-type`).
///
/// A received name matches only byte for byte, so the name a caller reads (`rawName`) is the
/// one the server sent, exactly as if it had been made from the line; any other spelling is
/// made from its bytes (and validated) as before. Making a name costs a `String`, a token check
/// and a lower-cased copy; most kept-alive responses carry six or seven of them.
enum CommonFieldNames {
    private struct Entry: Sendable {
        let bytes: [UInt8]
        let name: HTTPField.Name
    }

    static let spellings = [
        "Accept-Ranges", "Access-Control-Allow-Origin", "Age", "Alt-Svc", "Cache-Control", "Connection", "Content-Disposition",
        "Content-Encoding", "Content-Language", "Content-Length", "Content-Range", "Content-Security-Policy", "Content-Type", "Date",
        "ETag", "Expires", "Keep-Alive", "Last-Modified", "Link", "Location", "Pragma", "Referrer-Policy", "Retry-After", "Server",
        "Set-Cookie", "Strict-Transport-Security", "Transfer-Encoding", "Vary", "Via", "WWW-Authenticate", "X-Content-Type-Options",
        "X-Frame-Options",
    ]

    /// Entries by the length of their name: a lookup compares only names of the received length.
    private static let byLength: [[Entry]] = {
        let all = spellings.flatMap { [$0, $0.lowercased()] }
        var table = [[Entry]](repeating: [], count: (all.map(\.utf8.count).max() ?? 0) + 1)
        for spelling in all {
            // Every spelling above is a token; a name that were not would simply never match.
            guard let name = HTTPField.Name(spelling) else { continue }
            table[spelling.utf8.count].append(Entry(bytes: Array(spelling.utf8), name: name))
        }
        return table
    }()

    /// The name made once for exactly these bytes, or nil.
    static func name(spelled bytes: UnsafeRawBufferPointer) -> HTTPField.Name? {
        guard bytes.count > 0, bytes.count < byLength.count, let base = bytes.baseAddress else { return nil }
        for entry in byLength[bytes.count] where entry.bytes.withUnsafeBytes({ memcmp($0.baseAddress!, base, bytes.count) == 0 }) {
            return entry.name
        }
        return nil
    }
}
