/// base64url (RFC 4648 section 5): JWK members, RFC 9421 nonces. One place for the alphabet
/// swap over ``StrictBase64``.
package enum Base64URL {
    /// Without padding, as JOSE and RFC 9421 write it.
    package static func encode(_ bytes: some Collection<UInt8>) -> String {
        var text = String(StrictBase64.encode(Array(bytes)).map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// Padding tolerated (only at the end); nil for anything else that is not base64url.
    package static func decode(_ text: String) -> [UInt8]? {
        var standard = Array(text.utf8).map { $0 == UInt8(ascii: "-") ? UInt8(ascii: "+") : $0 == UInt8(ascii: "_") ? UInt8(ascii: "/") : $0 }
        while standard.last == UInt8(ascii: "=") { standard.removeLast() }
        guard !standard.contains(UInt8(ascii: "=")) else { return nil }
        standard += Array(repeating: UInt8(ascii: "="), count: (4 - standard.count % 4) % 4)
        return StrictBase64.decode(standard)
    }

    /// JOSE's form exactly (RFC 7515 section 2): the URL-safe alphabet, no padding, canonical
    /// (zero bits after the last byte); nil for anything else, `+`, `/`, `=` and whitespace
    /// included. An empty text is the empty byte string.
    ///
    /// The slice overload is what a compact JWS's segments take: concrete, so a caller in
    /// another module calls it directly rather than through an unspecialised generic (measured:
    /// the generic path was 60 % of a steady App Store verification's instructions).
    package static func decodeUnpadded(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        text.withUnsafeBufferPointer { decodeUnpadded(buffer: $0) }
    }

    package static func decodeUnpadded<S: Collection>(_ text: S) -> [UInt8]? where S.Element == UInt8 {
        if let decoded = text.withContiguousStorageIfAvailable({ decodeUnpadded(buffer: $0) }) { return decoded }
        return Array(text).withUnsafeBufferPointer { decodeUnpadded(buffer: $0) }
    }

    /// One pass: each character looked up once, four characters to three bytes, the last group
    /// of two or three characters checked for zero trailing bits.
    private static func decodeUnpadded(buffer text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let count = text.count
        guard count > 0 else { return [] }
        let tail = count % 4
        guard tail != 1 else { return nil }
        let full = count - tail
        var out = [UInt8](repeating: 0, count: full / 4 * 3 + (tail == 0 ? 0 : tail - 1))
        let decoded: Bool = values.withUnsafeBufferPointer { values in
            out.withUnsafeMutableBufferPointer { out in
                var index = 0, written = 0
                while index < full {
                    let a = values[Int(text[index])], b = values[Int(text[index + 1])]
                    let c = values[Int(text[index + 2])], d = values[Int(text[index + 3])]
                    guard (a | b | c | d) & 0xC0 == 0 else { return false }
                    let n = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    out[written] = UInt8(truncatingIfNeeded: n >> 16)
                    out[written + 1] = UInt8(truncatingIfNeeded: n >> 8)
                    out[written + 2] = UInt8(truncatingIfNeeded: n)
                    index += 4
                    written += 3
                }
                guard tail > 0 else { return true }
                let a = values[Int(text[index])], b = values[Int(text[index + 1])]
                let c = tail == 3 ? values[Int(text[index + 2])] : 0
                guard (a | b | c) & 0xC0 == 0 else { return false }
                out[written] = a << 2 | b >> 4
                if tail == 2 { return b & 0x0F == 0 }
                out[written + 1] = b << 4 | c >> 2
                return c & 0x03 == 0
            }
        }
        return decoded ? out : nil
    }

    /// The URL-safe alphabet's values; 0xFF for every other byte, `+`, `/` and `=` included.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8.enumerated() {
            table[Int(character)] = UInt8(index)
        }
        return table
    }()
}
