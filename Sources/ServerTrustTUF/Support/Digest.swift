internal import COpenSSL

/// Hashes over OpenSSL's EVP digests, by the names TUF metadata uses. `package` for the plugin's
/// tool, which prints a compiled-in root's SHA-256 beside its constant.
package enum Digest {
    /// The digest for a TUF hash name, or nil for one the client does not support (md5 and sha1
    /// are refused as broken; blake2b-256 needs OpenSSL 3.2).
    static func algorithm(named name: String) -> OpaquePointer? {
        switch name {
        case "sha224": EVP_sha224()
        case "sha256": EVP_sha256()
        case "sha384": EVP_sha384()
        case "sha512": EVP_sha512()
        default: nil
        }
    }

    static func hash(_ bytes: [UInt8], algorithm: OpaquePointer) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBufferPointer { EVP_Digest($0.baseAddress, $0.count, &output, &length, algorithm, nil) }
        precondition(ok == 1, "EVP_Digest failed")
        return Array(output.prefix(Int(length)))
    }

    package static func sha256(_ bytes: [UInt8]) -> [UInt8] { hash(bytes, algorithm: EVP_sha256()) }

    package static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Hex (either case, as Python's `bytes.fromhex` reads signatures) to bytes.
    static func bytes(hex: String) -> [UInt8]? {
        let utf8 = Array(hex.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count / 2)
        var i = 0
        while i < utf8.count {
            guard let high = nibble(utf8[i]), let low = nibble(utf8[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }
}
