import Foundation
import ServerTrust
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file opened for one hop's upload (``Request/Body/file(_:)``): opened, and its size taken,
/// before the request starts, so a missing or unreadable file fails before anything is sent.
/// The descriptor closes when the upload that reads it is released.
final class UploadFile: Sendable {
    let path: String
    let size: Int
    private let descriptor: Int32

    init(_ url: URL, requestURL: String) throws(SessionError) {
        guard url.isFileURL else {
            throw SessionError(.uploadFailed, "The body file \(URLRedaction.redacted(url)) is not a file: URL.", url: requestURL)
        }
        path = url.path
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw SessionError(.uploadFailed, "Cannot open the body file \(path): \(String(cString: strerror(errno))).", url: requestURL)
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw SessionError(.uploadFailed, "The body file \(path) is not a regular file.", url: requestURL)
        }
        self.descriptor = descriptor
        size = Int(info.st_size)
    }

    deinit { close(descriptor) }

    /// Reads the file's first ``size`` bytes in 64 KiB chunks; a file that shrank fails.
    var source: UploadSource {
        UploadSource { [self] sink in
            var offset = 0
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            while offset < size {
                try Task.checkCancellation()
                let wanted = min(buffer.count, size - offset)
                let got = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, wanted, off_t(offset)) }
                guard got > 0 else {
                    throw SessionError(
                        .uploadFailed, got == 0 ? "the file ended after \(offset) of its \(size) bytes (it shrank)"
                            : "read failed: \(String(cString: strerror(errno)))")
                }
                offset += got
                try await sink.write(Array(buffer[..<got]))
            }
        }
    }
}
