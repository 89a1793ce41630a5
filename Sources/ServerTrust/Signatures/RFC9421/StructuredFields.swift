/// RFC 8941 Structured Field Values: Dictionaries, Lists and Items with Parameters and Inner
/// Lists, and the canonical serialization of Items and Inner Lists. RFC 9421 reads Dictionaries;
/// the List and Item entry points complete RFC 8941's three field types, so that the httpwg
/// `structured-field-tests` vectors run against the parser as a whole (StructuredFieldVectorTests).
///
/// Our own parser rather than swift-http-structured-headers because the verifier needs three
/// things that package does not give: a Dictionary that *refuses* a repeated key (RFC 8941 keeps
/// the last one, which would let an attacker's second `Signature-Input` line replace the
/// server's), errors that say where the input broke, and no new dependency in the core module.
/// It is a strict recursive-descent transcription of RFC 8941 section 4.2 over bytes, bounded by
/// its input (no recursion deeper than Inner List → Item), and fuzzed (`message-signature`
/// target). Decimals are parsed and kept as text (RFC 9421 uses none) and serialized in RFC 8941's
/// canonical form.
struct StructuredField {
    enum BareItem: Hashable, Sendable {
        case integer(Int64)
        case decimal(String)
        case string(String)
        case token(String)
        case bytes([UInt8])
        case boolean(Bool)
    }

    typealias Parameters = [(key: String, value: BareItem)]

    struct Item: Sendable {
        var value: BareItem
        var parameters: Parameters = []

        func parameter(_ key: String) -> BareItem? { parameters.first { $0.key == key }?.value }
    }

    enum Member: Sendable {
        case item(Item)
        case innerList([Item], Parameters)
    }

    struct ParseError: Error {
        let message: String
        let offset: Int
    }

    private let bytes: [UInt8]
    private var index = 0

    private init(_ text: String) { bytes = Array(text.utf8) }

    /// Parses a Dictionary; a key that appears twice is an error (see the type's discussion).
    static func dictionary(_ text: String) throws(ParseError) -> [(key: String, member: Member)] {
        var parser = StructuredField(text)
        parser.skipSpaces()
        var members: [(key: String, member: Member)] = []
        var seen = Set<String>()
        while !parser.atEnd {
            let key = try parser.key()
            guard seen.insert(key).inserted else { throw parser.error("the key \"\(key)\" appears twice") }
            let member: Member
            if parser.peek == UInt8(ascii: "=") {
                parser.index += 1
                member = try parser.itemOrInnerList()
            } else {
                member = .item(Item(value: .boolean(true), parameters: try parser.parameters()))
            }
            members.append((key, member))
            parser.skipOWS()
            if parser.atEnd { return members }
            guard parser.peek == UInt8(ascii: ",") else { throw parser.error("expected \",\" between dictionary members") }
            parser.index += 1
            parser.skipOWS()
            if parser.atEnd { throw parser.error("a trailing \",\"") }
        }
        return members
    }

    /// Parses a List (RFC 8941 section 4.2.1): Items and Inner Lists, separated by commas.
    static func list(_ text: String) throws(ParseError) -> [Member] {
        var parser = StructuredField(text)
        parser.skipSpaces()
        var members: [Member] = []
        while !parser.atEnd {
            members.append(try parser.itemOrInnerList())
            parser.skipOWS()
            if parser.atEnd { return members }
            guard parser.peek == UInt8(ascii: ",") else { throw parser.error("expected \",\" between list members") }
            parser.index += 1
            parser.skipOWS()
            if parser.atEnd { throw parser.error("a trailing \",\"") }
        }
        return members
    }

    /// Parses an Item (RFC 8941 section 4.2.3) that is the whole field.
    static func item(_ text: String) throws(ParseError) -> Item {
        var parser = StructuredField(text)
        parser.skipSpaces()
        let item = try parser.item()
        parser.skipSpaces()
        guard parser.atEnd else { throw parser.error("text after the item") }
        return item
    }

    /// Parses one Inner List (with its parameters) that is the whole field, as an
    /// `Accept-Signature` member's value is read in tests.
    static func innerList(_ text: String) throws(ParseError) -> ([Item], Parameters) {
        var parser = StructuredField(text)
        parser.skipSpaces()
        guard case .innerList(let items, let parameters) = try parser.itemOrInnerList() else {
            throw parser.error("expected an inner list")
        }
        parser.skipSpaces()
        guard parser.atEnd else { throw parser.error("text after the inner list") }
        return (items, parameters)
    }

    // MARK: Parsing (RFC 8941 section 4.2)

    private var atEnd: Bool { index >= bytes.count }
    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private func error(_ message: String) -> ParseError { ParseError(message: message, offset: index) }

    private mutating func skipSpaces() { while peek == 0x20 { index += 1 } }
    private mutating func skipOWS() { while peek == 0x20 || peek == 0x09 { index += 1 } }

    private mutating func itemOrInnerList() throws(ParseError) -> Member {
        guard peek == UInt8(ascii: "(") else { return .item(try item()) }
        index += 1
        var items: [Item] = []
        while true {
            skipSpaces()
            guard let byte = peek else { throw error("an inner list without \")\"") }
            if byte == UInt8(ascii: ")") {
                index += 1
                return .innerList(items, try parameters())
            }
            items.append(try item())
            guard let next = peek, next == 0x20 || next == UInt8(ascii: ")") else {
                throw error("expected a space or \")\" in an inner list")
            }
        }
    }

    private mutating func item() throws(ParseError) -> Item {
        Item(value: try bareItem(), parameters: try parameters())
    }

    private mutating func parameters() throws(ParseError) -> Parameters {
        var parameters: Parameters = []
        while peek == UInt8(ascii: ";") {
            index += 1
            skipSpaces()
            let key = try key()
            var value = BareItem.boolean(true)
            if peek == UInt8(ascii: "=") {
                index += 1
                value = try bareItem()
            }
            // RFC 8941: a repeated parameter key overwrites; the order stays that of the first.
            if let existing = parameters.firstIndex(where: { $0.key == key }) {
                parameters[existing].value = value
            } else {
                parameters.append((key, value))
            }
        }
        return parameters
    }

    private mutating func key() throws(ParseError) -> String {
        guard let first = peek, first == UInt8(ascii: "*") || (0x61...0x7A).contains(first) else {
            throw error("a key starts with a lowercase letter or \"*\"")
        }
        let start = index
        while let byte = peek, (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || "_-.*".utf8.contains(byte) {
            index += 1
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func bareItem() throws(ParseError) -> BareItem {
        guard let byte = peek else { throw error("an item is missing") }
        switch byte {
        case UInt8(ascii: "-"), 0x30...0x39: return try number()
        case UInt8(ascii: "\""): return try string()
        case UInt8(ascii: ":"): return try byteSequence()
        case UInt8(ascii: "?"): return try boolean()
        case UInt8(ascii: "*"), 0x41...0x5A, 0x61...0x7A: return token()
        default: throw error("an item cannot start with byte 0x\(String(byte, radix: 16))")
        }
    }

    private mutating func number() throws(ParseError) -> BareItem {
        let start = index
        var negative = false
        if peek == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        guard let first = peek, (0x30...0x39).contains(first) else { throw error("a number without digits") }
        var digits = 0
        var decimal = false
        var fraction = 0
        while let byte = peek {
            if (0x30...0x39).contains(byte) {
                if decimal { fraction += 1 } else { digits += 1 }
            } else if byte == UInt8(ascii: "."), !decimal {
                guard digits <= 12 else { throw error("a decimal with more than 12 integer digits") }
                decimal = true
            } else {
                break
            }
            index += 1
            guard digits <= 15 else { throw error("an integer with more than 15 digits") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if decimal {
            guard (1...3).contains(fraction) else { throw error("a decimal with \(fraction) fractional digits (1 to 3)") }
            return .decimal(text)
        }
        guard let value = Int64(text) else { throw error("an integer out of range") }
        _ = negative
        return .integer(value)
    }

    private mutating func string() throws(ParseError) -> BareItem {
        index += 1
        var output: [UInt8] = []
        while let byte = peek {
            index += 1
            switch byte {
            case UInt8(ascii: "\\"):
                guard let next = peek, next == UInt8(ascii: "\\") || next == UInt8(ascii: "\"") else {
                    throw error("a string escape other than \\\\ or \\\"")
                }
                output.append(next)
                index += 1
            case UInt8(ascii: "\""):
                return .string(String(decoding: output, as: UTF8.self))
            case 0x20...0x7E:
                output.append(byte)
            default:
                throw error("a string holds byte 0x\(String(byte, radix: 16)), outside printable ASCII")
            }
        }
        throw error("a string without its closing quote")
    }

    private mutating func token() -> BareItem {
        let start = index
        while let byte = peek, Self.isTokenByte(byte) { index += 1 }
        return .token(String(decoding: bytes[start..<index], as: UTF8.self))
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        // tchar (RFC 9110) plus ":" and "/".
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || "!#$%&'*+-.^_`|~:/".utf8.contains(byte)
    }

    private mutating func byteSequence() throws(ParseError) -> BareItem {
        index += 1
        let start = index
        while let byte = peek, byte != UInt8(ascii: ":") {
            guard (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || "+/=".utf8.contains(byte)
            else { throw error("a byte sequence holds a character outside base64") }
            index += 1
        }
        guard peek == UInt8(ascii: ":") else { throw error("a byte sequence without its closing \":\"") }
        let text = bytes[start..<index]
        index += 1
        // `::` is the empty byte sequence (RFC 8941 section 3.3.5); StrictBase64 refuses empty
        // text, which is never a key or a signature.
        if text.isEmpty { return .bytes([]) }
        guard let decoded = StrictBase64.decode(Array(text)) else { throw error("a byte sequence that is not base64") }
        return .bytes(decoded)
    }

    private mutating func boolean() throws(ParseError) -> BareItem {
        index += 1
        switch peek {
        case UInt8(ascii: "1"):
            index += 1
            return .boolean(true)
        case UInt8(ascii: "0"):
            index += 1
            return .boolean(false)
        default: throw error("a boolean is ?0 or ?1")
        }
    }

    // MARK: Serialization (RFC 8941 section 4.1)

    static func serialize(_ item: BareItem) -> String {
        switch item {
        case .integer(let value): String(value)
        case .decimal(let text): canonicalDecimal(text)
        case .string(let text):
            "\"" + text.replacingBackslashesAndQuotes() + "\""
        case .token(let text): text
        case .bytes(let bytes): ":" + StrictBase64.encode(bytes) + ":"
        case .boolean(let value): value ? "?1" : "?0"
        }
    }

    /// A parsed decimal's text as RFC 8941 section 4.1.5 writes it: no leading zeros, no trailing
    /// fractional zeros, at least one digit on each side of the point, no sign on zero.
    private static func canonicalDecimal(_ text: String) -> String {
        let negative = text.hasPrefix("-")
        let parts = text.drop { $0 == "-" }.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let integer = parts[0].drop { $0 == "0" }
        var fraction = parts.count > 1 ? parts[1] : ""
        while fraction.last == "0" { fraction.removeLast() }
        let isZero = integer.isEmpty && fraction.isEmpty
        return (negative && !isZero ? "-" : "") + (integer.isEmpty ? "0" : String(integer)) + "." + (fraction.isEmpty ? "0" : String(fraction))
    }

    static func serialize(_ parameters: Parameters) -> String {
        var text = ""
        for (key, value) in parameters {
            text += ";" + key
            if value != .boolean(true) { text += "=" + serialize(value) }
        }
        return text
    }

    static func serialize(_ item: Item) -> String { serialize(item.value) + serialize(item.parameters) }

    static func serialize(innerList items: [Item], parameters: Parameters) -> String {
        "(" + items.map(serialize).joined(separator: " ") + ")" + serialize(parameters)
    }
}

extension String {
    fileprivate func replacingBackslashesAndQuotes() -> String {
        var output = ""
        output.reserveCapacity(utf8.count)
        for character in self {
            if character == "\\" || character == "\"" { output.append("\\") }
            output.append(character)
        }
        return output
    }
}
