/// OLPC canonical JSON exactly as securesystemslib's `encode_canonical` writes it — the bytes
/// TUF signatures are made over.
///
/// Object members sorted by key in Unicode code-point order (Python's `sorted` on `str`, which
/// is UTF-8 byte order); no whitespace; strings in raw UTF-8 with only `\` and `"` escaped (a
/// control character is written as the raw byte, as securesystemslib does); integers in
/// decimal; `true`, `false`, `null`.
package enum CanonicalJSON {
    /// The canonical encoding of `value`.
    package static func encode(_ value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(4096)
        write(value, into: &output)
        return output
    }

    private static func write(_ value: JSONValue, into output: inout [UInt8]) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .integer(let number): output.append(contentsOf: String(number).utf8)
        case .string(let text): writeString(text, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                write(element, into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            let sorted = members.map { (key: Array($0.key.utf8), value: $0.value) }.sorted { $0.key.lexicographicallyPrecedes($1.key) }
            for (offset, member) in sorted.enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                writeString(bytes: member.key, into: &output)
                output.append(UInt8(ascii: ":"))
                write(member.value, into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static func writeString(_ text: String, into output: inout [UInt8]) {
        writeString(bytes: Array(text.utf8), into: &output)
    }

    private static func writeString(bytes: [UInt8], into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in bytes {
            if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"") { output.append(UInt8(ascii: "\\")) }
            output.append(byte)
        }
        output.append(UInt8(ascii: "\""))
    }
}
