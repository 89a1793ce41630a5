/// A strict JSON parser (RFC 8259) for untrusted metadata.
///
/// Stricter than Python's `json.loads`, which python-tuf uses, where strictness is safe: it
/// refuses duplicate object keys (Python keeps the last, so two parsers could read different
/// documents from the same signed bytes), floating-point numbers and exponents (canonical JSON
/// cannot encode them, so such metadata could never verify), `NaN`/`Infinity`, lone UTF-16
/// surrogates, invalid UTF-8, a byte-order mark, nesting deeper than ``maximumDepth`` and
/// integers outside 64 bits. Keys are compared as Swift strings (canonical equivalence), so two
/// keys that differ only in Unicode normalization are refused as duplicates too.
package struct JSONParser: Sendable {
    /// The deepest nesting of arrays and objects accepted; TUF metadata needs 6.
    package var maximumDepth: Int
    /// The most bytes accepted.
    package var maximumLength: Int

    /// - Parameters:
    ///   - maximumDepth: default 64.
    ///   - maximumLength: default 16 MiB (python-tuf's largest default download limit is 5 MB).
    package init(maximumDepth: Int = 64, maximumLength: Int = 16 << 20) {
        self.maximumDepth = maximumDepth
        self.maximumLength = maximumLength
    }

    /// Parses one JSON document; whitespace may surround it, nothing else may follow it.
    package func parse(_ bytes: [UInt8]) throws(TUFError) -> JSONValue {
        guard bytes.count <= maximumLength else {
            throw TUFError(.malformedJSON, "\(bytes.count) bytes, over the \(maximumLength)-byte limit")
        }
        return try bytes.withUnsafeBufferPointer { (buffer) throws(TUFError) -> JSONValue in
            var reader = Reader(bytes: buffer, maximumDepth: maximumDepth)
            reader.skipWhitespace()
            let value = try reader.value(depth: 0)
            reader.skipWhitespace()
            guard reader.index == buffer.count else { throw reader.failure("data after the document") }
            return value
        }
    }
}

private struct Reader {
    let bytes: UnsafeBufferPointer<UInt8>
    let maximumDepth: Int
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    func failure(_ what: String) -> TUFError { TUFError(.malformedJSON, "\(what) at byte \(index)") }

    var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    mutating func expect(_ literal: StaticString) throws(TUFError) {
        let text = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        guard index + text.count <= bytes.count, text.indices.allSatisfy({ bytes[index + $0] == text[$0] }) else {
            throw failure("unexpected token")
        }
        index += text.count
    }

    mutating func value(depth: Int) throws(TUFError) -> JSONValue {
        guard let byte = current else { throw failure("unexpected end") }
        switch byte {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "n"): try expect("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .integer(try integer())
        default: throw failure("unexpected byte \(byte)")
        }
    }

    mutating func object(depth: Int) throws(TUFError) -> JSONValue {
        guard depth <= maximumDepth else { throw failure("nesting deeper than \(maximumDepth)") }
        index += 1
        var members: [(key: String, value: JSONValue)] = []
        var seen = Set<String>()
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw failure("expected a member name") }
            let key = try string()
            guard seen.insert(key).inserted else { throw failure("duplicate key \"\(key)\"") }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw failure("expected ':'") }
            index += 1
            skipWhitespace()
            members.append((key, try value(depth: depth)))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return .object(members)
            default: throw failure("expected ',' or '}'")
            }
        }
    }

    mutating func array(depth: Int) throws(TUFError) -> JSONValue {
        guard depth <= maximumDepth else { throw failure("nesting deeper than \(maximumDepth)") }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try value(depth: depth))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .array(elements)
            default: throw failure("expected ',' or ']'")
            }
        }
    }

    mutating func integer() throws(TUFError) -> Int64 {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else { throw failure("expected a digit") }
        if first == UInt8(ascii: "0") {
            index += 1
        } else {
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
        }
        if let byte = current, byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            throw failure("a non-integer number (canonical JSON has none)")
        }
        if let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { throw failure("a leading zero") }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Int64(text) else { throw failure("an integer outside 64 bits") }
        return value
    }

    mutating func hex4() throws(TUFError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("a short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("a bad \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    mutating func string() throws(TUFError) -> String {
        index += 1
        var scalars = String.UnicodeScalarView()
        var runStart = index
        func flush(_ reader: Reader, upTo end: Int) throws(TUFError) {
            guard runStart < end else { return }
            guard let run = String(validating: UnsafeBufferPointer(rebasing: reader.bytes[runStart..<end]), as: UTF8.self) else {
                throw reader.failure("invalid UTF-8")
            }
            scalars.append(contentsOf: run.unicodeScalars)
        }
        while true {
            guard let byte = current else { throw failure("an unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                try flush(self, upTo: index)
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                try flush(self, upTo: index)
                index += 1
                guard let escape = current else { throw failure("an unterminated escape") }
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800...0xDBFF).contains(code) {
                        guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                            throw failure("a lone surrogate")
                        }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw failure("a lone surrogate") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(code) {
                        throw failure("a lone surrogate")
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw failure("a bad \\u escape") }
                    scalars.append(scalar)
                default: throw failure("an unknown escape")
                }
                runStart = index
            case 0x00..<0x20:
                throw failure("a control character in a string")
            default:
                index += 1
            }
        }
    }
}
