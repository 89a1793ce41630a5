import Foundation

/// A JSON value with the line it starts on, so a policy-file error can name its line; also the
/// strict reader of ServerTrustPurchases' signed payloads.
///
/// Foundation's `JSONSerialization` parses the string tokens (escapes and all); the scanner
/// around it records where every value and key begins, refuses duplicate keys (which
/// `JSONSerialization` would silently resolve to the last one, letting a second `"pins"` hide
/// the first), and bounds the input: at most ``maximumSize`` bytes and ``maximumDepth`` levels.
package struct LocatedJSON {
    package enum Value {
        /// Members in file order, each with the line of its key.
        case object([(key: String, line: Int, value: LocatedJSON)])
        case array([LocatedJSON])
        case string(String)
        /// The number as written, checked against JSON's number grammar.
        case number(String)
        case bool(Bool)
        case null
    }

    package let value: Value
    package let line: Int

    package static let maximumSize = 1 << 20
    package static let maximumDepth = 32

    package struct SyntaxError: Error {
        package let line: Int
        package let message: String
    }

    /// Parses a whole document.
    package static func parse(_ bytes: [UInt8]) throws(SyntaxError) -> LocatedJSON {
        guard bytes.count <= maximumSize else {
            throw SyntaxError(line: 1, message: "the file is larger than \(maximumSize) bytes")
        }
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw SyntaxError(line: 1, message: "the file is not UTF-8 text")
        }
        var scanner = Scanner(bytes: bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { scanner.index = 3 }
        scanner.skipWhitespace()
        let document = try scanner.value(depth: 0)
        scanner.skipWhitespace()
        guard scanner.index == bytes.count else { throw scanner.error("unexpected text after the top-level value") }
        return document
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        var line = 1

        init(bytes: [UInt8]) { self.bytes = bytes }

        func error(_ message: String) -> SyntaxError { SyntaxError(line: line, message: "invalid JSON: \(message)") }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let byte = current {
                switch byte {
                case 0x20, 0x09, 0x0D: index += 1
                case 0x0A: index += 1; line += 1
                default: return
                }
            }
        }

        mutating func expect(_ byte: UInt8, _ what: String) throws(SyntaxError) {
            guard current == byte else { throw error("expected \(what)") }
            index += 1
        }

        mutating func value(depth: Int) throws(SyntaxError) -> LocatedJSON {
            guard depth < LocatedJSON.maximumDepth else { throw error("nested deeper than \(LocatedJSON.maximumDepth) levels") }
            let startLine = line
            guard let current else { throw error("the text ends where a value was expected") }
            switch current {
            case UInt8(ascii: "{"): return LocatedJSON(value: try object(depth: depth), line: startLine)
            case UInt8(ascii: "["): return LocatedJSON(value: try array(depth: depth), line: startLine)
            case UInt8(ascii: "\""): return LocatedJSON(value: .string(try string()), line: startLine)
            case UInt8(ascii: "t"): try literal("true"); return LocatedJSON(value: .bool(true), line: startLine)
            case UInt8(ascii: "f"): try literal("false"); return LocatedJSON(value: .bool(false), line: startLine)
            case UInt8(ascii: "n"): try literal("null"); return LocatedJSON(value: .null, line: startLine)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return LocatedJSON(value: .number(try number()), line: startLine)
            default: throw error("unexpected character \(String(decoding: [current], as: UTF8.self).debugDescription)")
            }
        }

        mutating func object(depth: Int) throws(SyntaxError) -> Value {
            index += 1
            var members: [(key: String, line: Int, value: LocatedJSON)] = []
            var keys: Set<String> = []
            skipWhitespace()
            if current == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard current == UInt8(ascii: "\"") else { throw error("expected a quoted key") }
                let keyLine = line
                let key = try string()
                guard keys.insert(key).inserted else {
                    throw SyntaxError(line: keyLine, message: "duplicate key \(key.debugDescription)")
                }
                skipWhitespace()
                try expect(UInt8(ascii: ":"), "\":\" after a key")
                skipWhitespace()
                members.append((key, keyLine, try value(depth: depth + 1)))
                skipWhitespace()
                if current == UInt8(ascii: ",") { index += 1; continue }
                try expect(UInt8(ascii: "}"), "\",\" or \"}\"")
                return .object(members)
            }
        }

        mutating func array(depth: Int) throws(SyntaxError) -> Value {
            index += 1
            var elements: [LocatedJSON] = []
            skipWhitespace()
            if current == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                skipWhitespace()
                elements.append(try value(depth: depth + 1))
                skipWhitespace()
                if current == UInt8(ascii: ",") { index += 1; continue }
                try expect(UInt8(ascii: "]"), "\",\" or \"]\"")
                return .array(elements)
            }
        }

        /// A string token, decoded by `JSONSerialization` (escapes, surrogate pairs).
        mutating func string() throws(SyntaxError) -> String {
            let start = index
            index += 1
            while let byte = current {
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    let token = Data(bytes[start..<index])
                    guard let text = (try? JSONSerialization.jsonObject(with: token, options: .fragmentsAllowed)) as? String else {
                        throw error("malformed string escape")
                    }
                    return text
                case UInt8(ascii: "\\"):
                    index += 2
                case ..<0x20:
                    throw error("control character inside a string")
                default:
                    index += 1
                }
            }
            throw error("unterminated string")
        }

        mutating func number() throws(SyntaxError) -> String {
            let start = index
            if current == UInt8(ascii: "-") { index += 1 }
            func digits(_ scanner: inout Scanner) -> Int {
                var count = 0
                while let byte = scanner.current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                    scanner.index += 1
                    count += 1
                }
                return count
            }
            if current == UInt8(ascii: "0") {
                index += 1
            } else if digits(&self) == 0 {
                throw error("malformed number")
            }
            if current == UInt8(ascii: ".") {
                index += 1
                guard digits(&self) > 0 else { throw error("malformed number") }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard digits(&self) > 0 else { throw error("malformed number") }
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        mutating func literal(_ word: String) throws(SyntaxError) {
            let expected = Array(word.utf8)
            guard bytes.count - index >= expected.count, Array(bytes[index..<index + expected.count]) == expected else {
                throw error("unexpected characters (expected \(word))")
            }
            index += expected.count
        }
    }
}
