/// The TLS presentation-language encodings (RFC 8446 §3) that RFC 6962 structures use: integers
/// big-endian, variable-length vectors prefixed with their length in 1, 2 or 3 bytes.
enum TLSEncoding {
    /// `value` as `byteCount` big-endian bytes.
    static func integer(_ value: UInt64, byteCount: Int) -> [UInt8] {
        (0..<byteCount).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    /// `bytes` prefixed with their length in `lengthBytes` bytes (`opaque x<0..2^(8·n)-1>`).
    static func vector(_ bytes: [UInt8], lengthBytes: Int) -> [UInt8] {
        precondition(
            UInt64(bytes.count) < (UInt64(1) << (8 * UInt64(lengthBytes))),
            "\(bytes.count) bytes do not fit a vector with a \(lengthBytes)-byte length")
        return integer(UInt64(bytes.count), byteCount: lengthBytes) + bytes
    }
}
