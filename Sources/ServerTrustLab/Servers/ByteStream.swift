import Foundation
internal import COpenSSL

/// A blocking, bidirectional byte stream: the HTTP engine's view of a connection, plain or TLS.
///
/// A stream is used by one thread only (its connection's); it does not own the socket.
package protocol ByteStream: AnyObject {
    /// Reads at most `buffer.count` bytes; 0 means the peer closed (or the connection broke).
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int
    /// Writes every byte; false if the connection broke.
    func write(_ bytes: UnsafeRawBufferPointer) -> Bool
}

extension ByteStream {
    package func write(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { write($0) }
    }
}

/// A plain TCP socket.
package final class SocketStream: ByteStream {
    private let fd: Int32

    package init(fd: Int32) { self.fd = fd }

    package func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        while true {
            let count = recv(fd, buffer.baseAddress, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            return max(count, 0)
        }
    }

    package func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }
}

/// A server-side TLS connection over a blocking socket; borrows the `SSL*`.
package final class TLSStream: ByteStream {
    private let ssl: OpaquePointer

    package init(ssl: OpaquePointer) { self.ssl = ssl }

    package func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let count = SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
        if count <= 0 { ERR_clear_error() }
        return max(Int(count), 0)
    }

    package func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = SSL_write(ssl, bytes.baseAddress! + offset, Int32(clamping: bytes.count - offset))
            guard count > 0 else {
                ERR_clear_error()
                return false
            }
            offset += Int(count)
        }
        return true
    }
}
