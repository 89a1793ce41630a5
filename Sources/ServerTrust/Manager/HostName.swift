#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Host-name normalisation shared by ``HostPattern`` and ``ServerTrustManager``, so a pattern
/// and the host it is matched against are always spelled the same way.
public enum HostName {
    /// The form in which host names are compared.
    ///
    /// ASCII letters are lowercased (DNS is case-insensitive; non-ASCII is left alone and later
    /// refused), one trailing dot is removed (`example.com.` is the same fully-qualified name),
    /// brackets are removed from an IPv6 literal, and IPv6 is rewritten in its canonical
    /// RFC 5952 form (`2001:DB8:0::1` → `2001:db8::1`) so every spelling of an address is equal.
    /// An IPv4-mapped IPv6 address (`[::ffff:192.0.2.1]`) becomes the IPv4 address it maps
    /// (`192.0.2.1`): that is where the connection goes, so it must find that address's policy.
    /// Nothing else is changed: whitespace is kept so that it can be refused, not silently fixed.
    ///
    /// Normalising is idempotent: `normalize(normalize(h)) == normalize(h)` for every `h`, so a
    /// normalised name and a spelling of it can key one table (``NormalizedHost``). Two or more
    /// trailing dots are an empty label and are kept whole — the name is refused as malformed —
    /// rather than shortened one dot per pass (`a.test..` → `a.test.` → `a.test`); the trailing
    /// dot goes before brackets are looked at, so `[::1].` and `[::1]` are both `::1`.
    public static func normalize(_ host: String) -> String {
        var name = String(decoding: host.utf8.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
        if name.hasSuffix("."), !name.hasSuffix("..") { name.removeLast() }
        if name.hasPrefix("["), name.hasSuffix("]"), name.utf8.count > 2 {
            let inner = String(name.dropFirst().dropLast())
            if inner.contains(":"), let address = canonicalIPAddress(inner) { return address }
        }
        return canonicalIPAddress(name) ?? name
    }

    /// Whether `host` is an IPv4 address in dotted-quad form or an IPv6 address, with or
    /// without brackets. Other IPv4 spellings (`127.1`, `0x7f.0.0.1`) are not addresses here:
    /// they are refused as malformed names, never matched.
    public static func isIPAddress(_ host: String) -> Bool {
        canonicalIPAddress(normalize(host)) != nil
    }

    /// The canonical text of an IPv4 or IPv6 address (no brackets), or nil if `text` is not one.
    /// IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2) are given in IPv4 form.
    static func canonicalIPAddress(_ text: String) -> String? {
        // Checking the characters first also keeps an embedded NUL away from C, which would
        // stop reading there and accept "::1\0anything" as "::1".
        let isAddressCharacter: (UInt8) -> Bool = { isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }
        guard !text.isEmpty, text.utf8.count < Int(INET6_ADDRSTRLEN), text.utf8.allSatisfy(isAddressCharacter) else {
            return nil
        }
        var family = text.contains(":") ? AF_INET6 : AF_INET
        var address = in6_addr()  // large enough for either family
        guard inet_pton(family, text, &address) == 1 else { return nil }
        var bytes = withUnsafeBytes(of: &address) { Array($0) }
        if family == AF_INET6, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            family = AF_INET
            bytes = Array(bytes[12..<16]) + [UInt8](repeating: 0, count: 12)
        }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let written = bytes.withUnsafeBytes { raw in
            inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count))
        }
        guard written != nil else { return nil }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// What makes a normalised DNS name unusable, phrased to follow "Host name … ", or nil.
    ///
    /// Names are LDH (letters, digits, hyphen) plus `_`, which appears in real internal host
    /// names and cannot widen a match. A last label that is a number is refused because URL
    /// parsers and resolvers read such a name as an IPv4 address (`127.1`, `0x7f.1`).
    static func dnsNameProblem(_ name: String) -> String? {
        if let problem = encodingProblem(name) { return problem }
        if let invalid = name.first(where: { !isNameCharacter($0) }) {
            return "contains \"\(invalid)\"; host names use letters, digits, \"-\", \"_\" and \".\" only"
        }
        if name.utf8.count > 253 { return "is \(name.utf8.count) characters long; a DNS name has at most 253" }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        if labels.contains(where: \.isEmpty) { return "has an empty label" }
        if let long = labels.first(where: { $0.utf8.count > 63 }) {
            return "has a label of \(long.utf8.count) characters; a DNS label has at most 63"
        }
        if let label = labels.first(where: { $0.hasPrefix("-") || $0.hasSuffix("-") }) {
            return "has a label that starts or ends with \"-\" (\"\(label)\")"
        }
        if let last = labels.last, isNumber(last) {
            return "ends in a numeric label, which is read as an IPv4 address; "
                + "write an address as a dotted quad (192.0.2.1) or in IPv6 form"
        }
        return nil
    }

    /// The part of ``dnsNameProblem(_:)`` that applies to any text: emptiness, non-ASCII,
    /// whitespace and control characters. Checked first so a pattern such as `" *.example.com"`
    /// is reported for its space, not for where its `*` ended up.
    static func encodingProblem(_ name: String) -> String? {
        if name.isEmpty { return "is empty" }
        if name.utf8.contains(where: { $0 >= 0x80 }) {
            return "is not ASCII; write internationalised names in their punycode (A-label) form, "
                + "e.g. \"xn--bcher-kva.example\" for \"bücher.example\""
        }
        if name.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            return "contains whitespace or a control character"
        }
        return nil
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    private static func isNameCharacter(_ character: Character) -> Bool {
        guard let ascii = character.asciiValue else { return false }
        return (0x61...0x7A).contains(ascii) || (0x30...0x39).contains(ascii) || "-_.".utf8.contains(ascii)
    }

    /// A decimal or `0x` hexadecimal number, as the WHATWG URL parser's "ends in a number" test.
    private static func isNumber(_ label: Substring) -> Bool {
        if label.hasPrefix("0x") { return label.utf8.dropFirst(2).allSatisfy(isHexDigit) }
        return label.utf8.allSatisfy { (0x30...0x39).contains($0) }
    }
}

/// A host name or IP address in ``HostName/normalize(_:)`` form: the one key hosts are
/// compared, matched and cached by.
///
/// Made only by normalising, and normalising is idempotent, so a value made from any spelling
/// of a host equals the value made from its `name`: a table may be keyed by normalised names
/// and by the spellings that reach them at once without ever confusing two hosts.
public struct NormalizedHost: Hashable, Sendable, CustomStringConvertible {
    /// The normalised text: lowercase, without a trailing dot or brackets, IP addresses canonical.
    public let name: String

    /// Normalises `host` as spelled in a URL (`API.Example.com.`, `[2001:DB8::1]`).
    public init(_ host: String) { name = HostName.normalize(host) }

    /// Whether this is an IPv4 or IPv6 address rather than a DNS name.
    public var isIPAddress: Bool { HostName.canonicalIPAddress(name) != nil }

    public var description: String { name }
}
