internal import COpenSSL
import Foundation

/// A distinguished name as a deny-list compares it: relative distinguished names of
/// (attribute type as a numeric OID, value) pairs, each value with its case folded and its white
/// space trimmed and collapsed — the comparison RFC 5280 section 7.1 asks for, so the spelling
/// an entry was copied in does not decide whether it matches.
///
/// Read from text (``init(parsing:)``) in the forms people copy a name from: RFC 2253
/// (`CN=Example CA,O=Example,C=US`, what `servertrust inspect`, `openssl x509 -nameopt RFC2253`
/// and Go print; spaces after the separators too, as Java prints it), OpenSSL's default one-line
/// form (`C = US, O = Example, CN = Example CA`, `openssl x509 -issuer -noout`), its
/// `-nameopt multiline` and `compat` (`/C=US/O=Example/CN=Example CA`) forms; attribute types
/// by short name, long name or dotted OID, in any case; values escaped (`\,`, `\2C`) or quoted.
///
/// RFC 2253 writes the most specific name first and OpenSSL's one-line forms the least specific
/// first, and a name written `CN=A, O=B` can be either; ``matches(_:)`` therefore accepts the
/// name in either order. That can only make an entry refuse more — a certificate whose issuer is
/// the reversed name *and* that carries the listed serial — never less, which is the safe side
/// for a list that only refuses; guessing the order could make an entry match nothing.
struct DistinguishedName: Sendable, Hashable {
    struct Attribute: Sendable, Hashable, Comparable {
        /// The attribute type, as a dotted OID (`2.5.4.3` for CN).
        let type: String
        /// The value, case-folded, trimmed, inner white space collapsed to one space.
        let value: String

        static func < (lhs: Attribute, rhs: Attribute) -> Bool { (lhs.type, lhs.value) < (rhs.type, rhs.value) }
    }

    /// The relative distinguished names in the order read; each a set of attributes, sorted.
    let rdns: [[Attribute]]

    /// Whether `other` (a certificate's name, in DER order) is this name, in either order.
    func matches(_ other: DistinguishedName) -> Bool {
        rdns == other.rdns || rdns.reversed() == other.rdns
    }

    /// The name in an `X509_NAME`, in DER order (least specific first).
    init(x509Name name: OpaquePointer) {
        var rdns: [[Attribute]] = []
        var lastSet: Int32 = -1
        for index in 0..<X509_NAME_entry_count(name) {
            guard let entry = X509_NAME_get_entry(name, index) else { continue }
            let type = Self.oidText(X509_NAME_ENTRY_get_object(entry))
            var value = ""
            if let data = X509_NAME_ENTRY_get_data(entry) {
                var utf8: UnsafeMutablePointer<UInt8>?
                let length = ASN1_STRING_to_UTF8(&utf8, data)
                if length >= 0, let utf8 {
                    value = String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
                    CRYPTO_free(utf8, #fileID, #line)
                } else {
                    // Not a string type: the bytes in hex, which no parsed entry (refused "#…"
                    // values) can equal.
                    value = "#" + asn1StringText(data)
                }
            }
            let attribute = Attribute(type: type, value: Self.folded(value))
            let set = X509_NAME_ENTRY_set(entry)
            if set == lastSet, !rdns.isEmpty {
                rdns[rdns.count - 1] = (rdns[rdns.count - 1] + [attribute]).sorted()
            } else {
                rdns.append([attribute])
            }
            lastSet = set
        }
        self.rdns = rdns
    }

    /// A reason a text is not a distinguished name.
    struct ParseError: Error {
        let reason: String
    }

    /// Reads `text` in any of the forms of the type's documentation (without the `issuer=`
    /// that `openssl x509 -issuer` prints before it).
    /// - Throws: ``ParseError`` naming what is wrong: no `TYPE=value` pair, an unknown
    ///   attribute type, an unterminated quote or escape, a hex-encoded (`#…`) value.
    init(parsing text: String) throws(ParseError) {
        let scalars = Array(text.unicodeScalars)
        var rdns: [[Attribute]] = []
        for rdn in try Self.split(scalars) {
            var attributes: [Attribute] = []
            for ava in rdn {
                attributes.append(try Self.attribute(ava))
            }
            rdns.append(attributes.sorted())
        }
        guard !rdns.isEmpty else { throw ParseError(reason: "no TYPE=value pair") }
        self.rdns = rdns
    }

    /// The text split into relative distinguished names, each into `TYPE=value` pieces (still
    /// escaped): at `,` `;` and line ends (`/` in the compat form), and `+` within one, never
    /// inside quotes or after a backslash. A piece without `=` continues the value before it:
    /// OpenSSL's `multiline` and `sep_semi_plus_space` forms print a comma in a value as it is
    /// (`organizationName = Example, Inc.`).
    private static func split(_ scalars: [Unicode.Scalar]) throws(ParseError) -> [[[Unicode.Scalar]]] {
        var input = scalars[...]
        while let first = input.first, first.properties.isWhitespace { input = input.dropFirst() }
        let compat = input.first == "/"
        if compat { input = input.dropFirst() }
        // Each piece with the separator before it ("+" within an RDN, nil for a new one).
        var pieces: [(separator: Unicode.Scalar?, scalars: [Unicode.Scalar], hasEquals: Bool)] = []
        var piece: [Unicode.Scalar] = []
        var hasEquals = false
        var separator: Unicode.Scalar?
        var quoted = false
        var escaped = false
        func endPiece(before next: Unicode.Scalar?) {
            if piece.contains(where: { !$0.properties.isWhitespace }) {
                if !hasEquals, !pieces.isEmpty, let separator {
                    // In place: a long run of such pieces stays linear.
                    pieces[pieces.count - 1].scalars.append(separator)
                    pieces[pieces.count - 1].scalars.append(contentsOf: piece)
                } else {
                    pieces.append((separator, piece, hasEquals))
                }
            }
            piece = []
            hasEquals = false
            separator = next
        }
        for scalar in input {
            if escaped {
                piece.append(scalar)
                escaped = false
                continue
            }
            switch scalar {
            case "\\":
                piece.append(scalar)
                escaped = true
            case "\"":
                piece.append(scalar)
                quoted.toggle()
            case "," where !quoted && !compat, ";" where !quoted && !compat, "\n" where !quoted, "\r" where !quoted,
                "/" where !quoted && compat, "+" where !quoted:
                endPiece(before: scalar)
            default:
                if scalar == "=" { hasEquals = true }
                piece.append(scalar)
            }
        }
        if escaped { throw ParseError(reason: "a backslash at the end") }
        if quoted { throw ParseError(reason: "an unterminated quote") }
        endPiece(before: nil)
        var rdns: [[[Unicode.Scalar]]] = []
        for (separator, scalars, _) in pieces {
            if separator == "+", !rdns.isEmpty {
                rdns[rdns.count - 1].append(scalars)
            } else {
                rdns.append([scalars])
            }
        }
        return rdns
    }

    /// One `TYPE=value` piece: the type resolved to its OID, the value unescaped and folded.
    private static func attribute(_ piece: [Unicode.Scalar]) throws(ParseError) -> Attribute {
        let text = String(String.UnicodeScalarView(piece))
        guard let equals = piece.firstIndex(of: "=") else {
            throw ParseError(reason: "\(text.trimmingCharacters(in: .whitespaces).debugDescription) is not TYPE=value")
        }
        let typeName = String(String.UnicodeScalarView(piece[..<equals])).trimmingCharacters(in: .whitespaces)
        guard let type = oid(forTypeName: typeName) else {
            throw ParseError(reason: "unknown attribute type \(typeName.debugDescription) (a short name such as CN, O, OU, C, L, ST, a long name such as commonName, or a dotted OID)")
        }
        var value = piece[(equals + 1)...]
        while let first = value.first, first.properties.isWhitespace { value = value.dropFirst() }
        if value.first == "#" { throw ParseError(reason: "\(typeName): a hex-encoded (#…) value; write the value as text") }
        return Attribute(type: type, value: folded(try unescaped(Array(value))))
    }

    /// The value without quotes and escapes (`\,` a comma, `\2C` the byte 0x2C). White space at
    /// its ends, escaped or not, is left to ``folded(_:)``, which drops it on both sides.
    private static func unescaped(_ scalars: [Unicode.Scalar]) throws(ParseError) -> String {
        var bytes: [UInt8] = []
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "\\" {
                guard index + 1 < scalars.count else { throw ParseError(reason: "a backslash at the end") }
                let next = scalars[index + 1]
                if index + 2 < scalars.count, let high = hexValue(next), let low = hexValue(scalars[index + 2]) {
                    bytes.append(high << 4 | low)
                    index += 3
                } else {
                    bytes.append(contentsOf: Array(String(next).utf8))
                    index += 2
                }
                continue
            }
            if scalar != "\"" { bytes.append(contentsOf: Array(String(scalar).utf8)) }
            index += 1
        }
        guard let value = String(validating: bytes, as: UTF8.self) else { throw ParseError(reason: "escaped bytes that are not UTF-8") }
        return value
    }

    private static func hexValue(_ scalar: Unicode.Scalar) -> UInt8? {
        guard scalar.isASCII, let value = UInt8(String(scalar), radix: 16) else { return nil }
        return value
    }

    /// A value as names compare: case folded, white space trimmed and runs of it one space.
    static func folded(_ value: String) -> String {
        value.lowercased().split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// Names OpenSSL does not know, or knows in another case: Java's, RFC 4519's, and the
    /// upper-case spellings people write. Anything else goes to OpenSSL's table.
    private static let aliases: [String: String] = [
        "cn": "2.5.4.3", "commonname": "2.5.4.3", "sn": "2.5.4.4", "surname": "2.5.4.4", "serialnumber": "2.5.4.5",
        "c": "2.5.4.6", "countryname": "2.5.4.6", "l": "2.5.4.7", "localityname": "2.5.4.7",
        "st": "2.5.4.8", "s": "2.5.4.8", "stateorprovincename": "2.5.4.8", "street": "2.5.4.9", "streetaddress": "2.5.4.9",
        "o": "2.5.4.10", "organizationname": "2.5.4.10", "ou": "2.5.4.11", "organizationalunitname": "2.5.4.11",
        "title": "2.5.4.12", "postalcode": "2.5.4.17", "gn": "2.5.4.42", "givenname": "2.5.4.42",
        "dnqualifier": "2.5.4.46", "organizationidentifier": "2.5.4.97",
        "dc": "0.9.2342.19200300.100.1.25", "domaincomponent": "0.9.2342.19200300.100.1.25",
        "uid": "0.9.2342.19200300.100.1.1", "userid": "0.9.2342.19200300.100.1.1",
        "e": "1.2.840.113549.1.9.1", "email": "1.2.840.113549.1.9.1", "emailaddress": "1.2.840.113549.1.9.1",
    ]

    /// The dotted OID of an attribute type name, or nil when neither the aliases nor OpenSSL
    /// know it.
    private static func oid(forTypeName name: String) -> String? {
        var name = name
        if name.lowercased().hasPrefix("oid.") { name = String(name.dropFirst(4)) }
        if let oid = aliases[name.lowercased()] { return oid }
        guard !name.isEmpty, let object = OBJ_txt2obj(name, 0) else { return nil }
        defer { ASN1_OBJECT_free(object) }
        let oid = oidText(object)
        return oid.isEmpty ? nil : oid
    }

    private static func oidText(_ object: OpaquePointer?) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        let length = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
        guard length > 0, length < buffer.count else { return "" }
        return decodeCString(buffer)
    }
}
