internal import CZlib

/// Compresses test payloads with zlib, so local servers can send `Content-Encoding: gzip` or
/// `deflate` bodies made from a known original.
public enum TestCompression {
    /// The framing of the compressed bytes.
    public enum Format: Sendable {
        /// RFC 1952, `Content-Encoding: gzip`.
        case gzip
        /// RFC 1950 (zlib header and Adler-32), `Content-Encoding: deflate` as specified.
        case zlib
        /// RFC 1951 without a wrapper, `deflate` as some servers send it.
        case rawDeflate

        fileprivate var windowBits: Int32 {
            switch self {
            case .gzip: 16 + MAX_WBITS
            case .zlib: MAX_WBITS
            case .rawDeflate: -MAX_WBITS
            }
        }
    }

    /// `bytes` compressed at the best compression level.
    public static func compress(_ bytes: [UInt8], as format: Format = .gzip) -> [UInt8] {
        // On the heap: zlib keeps a pointer back to the stream and checks it on every call.
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer {
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
        precondition(CZlib_deflateInit2(stream, Z_BEST_COMPRESSION, format.windowBits) == Z_OK, "deflateInit2 failed")
        defer { deflateEnd(stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(stream, UInt(bytes.count))))
        let status = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.pointee.avail_in = UInt32(input.count)
                stream.pointee.next_out = out.baseAddress
                stream.pointee.avail_out = UInt32(out.count)
                return deflate(stream, Z_FINISH)
            }
        }
        precondition(status == Z_STREAM_END, "deflate did not finish (\(status))")
        return Array(output[..<Int(stream.pointee.total_out)])
    }

    /// A decompression bomb: `decodedSize` zero bytes, gzip-compressed (64 MiB → about 64 KiB).
    public static func gzipBomb(decodedSize: Int) -> [UInt8] {
        compress([UInt8](repeating: 0, count: decodedSize), as: .gzip)
    }
}
