package import Foundation
package import COpenSSL
internal import CServerTrustShims

/// Small conversions between Swift values and the OpenSSL objects the builders fill in.
package enum OpenSSLEncoding {
    /// Seconds since 1970 for `ASN1_TIME_set` and friends (UTCTime until 2049, then GeneralizedTime).
    package static func timeT(_ date: Date) -> time_t { time_t(date.timeIntervalSince1970.rounded(.down)) }

    /// A serial number from upper- or lower-case hex, or 16 random bytes (positive, 128 bits of
    /// entropy less one) when `hex` is nil, as CAs are required to use: an `ASN1_INTEGER` the
    /// caller frees, as a raw pointer (opaque from OpenSSL 4: `OpenSSLObjectPointer`).
    package static func serialNumber(hex: String?) throws -> UnsafeMutableRawPointer {
        var bignum: OpaquePointer?
        defer { BN_free(bignum) }
        if let hex {
            guard !hex.isEmpty, hex.allSatisfy(\.isHexDigit), BN_hex2bn(&bignum, hex) == Int32(hex.utf8.count) else {
                throw LabPKIError("serial number \"\(hex)\" is not hexadecimal")
            }
        } else {
            var bytes = [UInt8](repeating: 0, count: 16)
            try check(RAND_bytes(&bytes, Int32(bytes.count)), "RAND_bytes")
            bytes[0] = (bytes[0] & 0x7F) | 0x40  // positive, and always exactly 16 bytes long
            bignum = try check(BN_bin2bn(bytes, Int32(bytes.count), nil), "BN_bin2bn")
        }
        return try check(BN_to_ASN1_INTEGER(bignum, nil), "BN_to_ASN1_INTEGER").openSSLRaw
    }

    /// The DER encoding OpenSSL's `i2d_*` functions produce, via their two-call protocol.
    package static func der(_ encode: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) throws -> [UInt8] {
        let length = encode(nil)
        guard length > 0 else { throw LabPKIError("DER encoding failed") }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return encode(&cursor)
        }
        guard written == length else { throw LabPKIError("DER encoding failed") }
        return bytes
    }

    /// What `body` writes to a memory BIO.
    package static func bioOutput(_ body: (OpaquePointer) -> Int32) throws -> [UInt8] {
        let bio = try check(BIO_new(BIO_s_mem()), "BIO_new")
        defer { BIO_free(bio) }
        try check(body(bio), "writing to a memory BIO")
        var data: UnsafeMutablePointer<CChar>?
        let length = CServerTrustShims_BIO_get_mem_data(bio, &data)
        guard let data, length > 0 else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
    }
}
