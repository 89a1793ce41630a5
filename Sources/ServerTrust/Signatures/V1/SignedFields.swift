/// The byte-level building blocks of the canonical layouts: big-endian integers and
/// length-prefixed fields (a 4-byte big-endian length, then the bytes), so no two different
/// field lists can encode to the same message.
enum SignedFields {
    static func uint16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }

    static func uint32(_ value: UInt32) -> [UInt8] { (0..<4).reversed().map { UInt8(value >> (UInt32($0) * 8) & 0xFF) } }

    static func uint64(_ value: UInt64) -> [UInt8] { (0..<8).reversed().map { UInt8(value >> (UInt64($0) * 8) & 0xFF) } }

    static func readUInt64(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// `domain` followed by each field as length ‖ bytes.
    static func message(domain: [UInt8], _ fields: [[UInt8]]) -> [UInt8] {
        var out = domain
        out.reserveCapacity(domain.count + fields.reduce(0) { $0 + 4 + $1.count })
        for field in fields {
            out += uint32(UInt32(field.count))
            out += field
        }
        return out
    }
}
