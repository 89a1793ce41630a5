internal import CZlib

/// One zlib inflate stream, decoding gzip, zlib-wrapped or raw deflate data with a bound on the
/// decoded size.
///
/// Owns its `z_stream` (allocated on the heap, as zlib keeps a pointer back to it) and ends it
/// in `deinit`. Used on one task at a time, never shared: not `Sendable`.
final class ZlibInflater {
    /// The framing of the compressed data.
    enum Format {
        /// RFC 1952 (`Content-Encoding: gzip`).
        case gzip
        /// RFC 1950, a zlib header and Adler-32 trailer (`deflate` as the RFC means it).
        case zlib
        /// RFC 1951 with no wrapper (`deflate` as some servers send it; libcurl accepts both).
        case raw

        fileprivate var windowBits: Int32 {
            switch self {
            case .gzip: 16 + MAX_WBITS
            case .zlib: MAX_WBITS
            case .raw: -MAX_WBITS
            }
        }
    }

    /// Why inflating stopped without a whole, valid stream.
    enum Failure: Error, Equatable {
        /// zlib rejected the data (bad header, bad block, checksum mismatch): its message.
        case corrupt(String)
        /// The data ended before the end of the compressed stream.
        case truncated
        /// Bytes follow the end of the compressed stream.
        case trailingData
        /// The decoded size would pass the limit; `produced` bytes had been decoded when
        /// inflating stopped (at most the limit plus one output chunk).
        case limitExceeded(produced: Int)
    }

    /// Decoded bytes are produced this many at a time, so a bomb is stopped within one chunk
    /// of the limit.
    static let chunkSize = 64 << 10

    private let stream: UnsafeMutablePointer<z_stream>

    init(_ format: Format) throws(Failure) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = CZlib_inflateInit2(stream, format.windowBits)
        guard status == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw .corrupt("inflateInit2 failed (\(status))")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Decodes all of `input`, which must be exactly one complete stream, into at most `limit` bytes.
    func inflateAll(_ input: [UInt8], limit: Int) throws(Failure) -> [UInt8] {
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: Self.chunkSize)
        var result: Result<Void, Failure> = .success(())
        input.withUnsafeBufferPointer { source in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
            stream.pointee.avail_in = UInt32(source.count)
            defer {
                stream.pointee.next_in = nil
                stream.pointee.avail_in = 0
            }
            while true {
                let (status, produced) = chunk.withUnsafeMutableBufferPointer { target in
                    stream.pointee.next_out = target.baseAddress
                    stream.pointee.avail_out = UInt32(target.count)
                    let status = inflate(stream, Z_NO_FLUSH)
                    let produced = target.count - Int(stream.pointee.avail_out)
                    stream.pointee.next_out = nil
                    stream.pointee.avail_out = 0
                    return (status, produced)
                }
                if output.count + produced > limit {
                    result = .failure(.limitExceeded(produced: output.count + produced))
                    return
                }
                output.append(contentsOf: chunk[..<produced])
                switch status {
                case Z_STREAM_END:
                    if stream.pointee.avail_in != 0 { result = .failure(.trailingData) }
                    return
                case Z_OK:
                    continue
                case Z_BUF_ERROR where produced == 0:
                    // No progress possible: all input consumed before the end of the stream.
                    result = .failure(.truncated)
                    return
                case Z_BUF_ERROR:
                    continue
                default:
                    let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                    result = .failure(.corrupt(message))
                    return
                }
            }
        }
        try result.get()
        return output
    }
}
