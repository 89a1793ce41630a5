/// Standard base64 (RFC 4648 section 4, `+` `/` and `=` padding), decoded strictly.
///
/// Foundation's decoder is lenient in ways that differ between platforms; a signature header
/// has exactly one valid spelling, so this one refuses whitespace, missing or extra padding,
/// the URL-safe alphabet, and non-zero bits after the last byte (which would give one value two
/// encodings).
package enum StrictBase64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    package static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            index += 3
        }
        switch bytes.count - index {
        case 1:
            let n = UInt32(bytes[index]) << 16
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], UInt8(ascii: "="), UInt8(ascii: "=")]
        case 2:
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], UInt8(ascii: "=")]
        default:
            break
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The decoded bytes, or nil unless `text` is the one canonical encoding of them.
    package static func decode<S: Collection>(_ text: S) -> [UInt8]? where S.Element == UInt8 {
        let input = Array(text)
        guard !input.isEmpty, input.count % 4 == 0 else { return nil }
        var padding = 0
        if input[input.count - 1] == UInt8(ascii: "=") {
            padding = input[input.count - 2] == UInt8(ascii: "=") ? 2 : 1
        }
        var out: [UInt8] = []
        out.reserveCapacity(input.count / 4 * 3)
        var index = 0
        while index < input.count {
            let isLast = index + 4 == input.count
            var n: UInt32 = 0
            for offset in 0..<4 {
                let character = input[index + offset]
                if isLast && offset >= 4 - padding {
                    guard character == UInt8(ascii: "=") else { return nil }
                    n <<= 6
                    continue
                }
                let value = values[Int(character)]
                guard value != 0xFF else { return nil }
                n = n << 6 | UInt32(value)
            }
            out.append(UInt8(n >> 16 & 0xFF))
            if !(isLast && padding == 2) { out.append(UInt8(n >> 8 & 0xFF)) }
            if !(isLast && padding >= 1) { out.append(UInt8(n & 0xFF)) }
            if isLast {
                // The bits below the last byte must be zero, or two strings would decode alike.
                if padding == 1 && n & 0xFF != 0 { return nil }
                if padding == 2 && n & 0xFFFF != 0 { return nil }
            }
            index += 4
        }
        return out
    }
}
