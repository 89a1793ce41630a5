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
    package static func decodeUnpadded<S: Collection>(_ text: S) -> [UInt8]? where S.Element == UInt8 {
        guard !text.isEmpty else { return [] }
        guard text.count % 4 != 1 else { return nil }
        var standard: [UInt8] = []
        standard.reserveCapacity(text.count + 3)
        for character in text {
            switch character {
            case UInt8(ascii: "-"): standard.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): standard.append(UInt8(ascii: "/"))
            case UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="): return nil
            default: standard.append(character)
            }
        }
        standard += Array(repeating: UInt8(ascii: "="), count: (4 - standard.count % 4) % 4)
        return StrictBase64.decode(standard)
    }
}
