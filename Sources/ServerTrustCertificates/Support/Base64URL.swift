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
}
