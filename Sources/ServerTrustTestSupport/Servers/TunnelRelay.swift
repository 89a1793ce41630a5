import Foundation
internal import COpenSSL
internal import ServerTrustLab

/// Copies bytes both ways between two sockets, each plain or TLS, on one thread, until both
/// directions have closed or the server stops.
///
/// One thread drives both `SSL*`s because an `SSL` must not be used by two threads at once.
/// The sockets are switched to non-blocking mode; a write that would block waits for its
/// socket alone, which is fine for test traffic (every peer here keeps reading).
enum TunnelRelay {
    /// One side of a tunnel. Borrows the socket and the `SSL*`.
    final class Endpoint {
        let fd: Int32
        let ssl: OpaquePointer?
        fileprivate var readClosed = false

        init(fd: Int32, ssl: OpaquePointer? = nil) {
            self.fd = fd
            self.ssl = ssl
        }

        fileprivate enum ReadResult {
            case data(Int)
            case wouldBlock
            case closed
        }

        /// TLS records already decrypted, which `poll` cannot see.
        fileprivate var hasBufferedData: Bool { ssl.map { SSL_pending($0) > 0 } ?? false }

        fileprivate func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
            if let ssl {
                let count = SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
                if count > 0 { return .data(Int(count)) }
                let error = SSL_get_error(ssl, count)
                ERR_clear_error()
                return error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE ? .wouldBlock : .closed
            }
            while true {
                let count = recv(fd, buffer.baseAddress, buffer.count, 0)
                if count > 0 { return .data(count) }
                if count < 0 && errno == EINTR { continue }
                return count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? .wouldBlock : .closed
            }
        }

        fileprivate func writeAll(_ bytes: UnsafeRawBufferPointer, stopSignal: StopSignal) -> Bool {
            var offset = 0
            while offset < bytes.count {
                let rest = bytes.count - offset
                if let ssl {
                    // A retried SSL_write must repeat the same arguments: offset only moves on success.
                    let count = SSL_write(ssl, bytes.baseAddress! + offset, Int32(clamping: rest))
                    if count > 0 {
                        offset += Int(count)
                        continue
                    }
                    let error = SSL_get_error(ssl, count)
                    ERR_clear_error()
                    let events = error == SSL_ERROR_WANT_WRITE ? POLLOUT : error == SSL_ERROR_WANT_READ ? POLLIN : 0
                    guard events != 0, stopSignal.wait(for: Int16(events), on: fd) else { return false }
                } else {
                    let count = send(fd, bytes.baseAddress! + offset, rest, Int32(MSG_NOSIGNAL))
                    if count > 0 {
                        offset += count
                    } else if count < 0 && errno == EINTR {
                        continue
                    } else if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                        guard stopSignal.wait(for: Int16(POLLOUT), on: fd) else { return false }
                    } else {
                        return false
                    }
                }
            }
            return true
        }

        /// Tells the peer no more bytes come this way: `close_notify`, or a TCP half-close.
        fileprivate func closeWrite() {
            if let ssl {
                _ = SSL_shutdown(ssl)
                ERR_clear_error()
            } else {
                shutdown(fd, Int32(SHUT_WR))
            }
        }
    }

    /// Relays until both directions closed. `initial` goes to `b` first (bytes the client sent
    /// right behind its `CONNECT`).
    static func run(_ a: Endpoint, _ b: Endpoint, initial: [UInt8] = [], stopSignal: StopSignal) {
        for endpoint in [a, b] {
            _ = fcntl(endpoint.fd, F_SETFL, fcntl(endpoint.fd, F_GETFL) | O_NONBLOCK)
        }
        if !initial.isEmpty {
            guard initial.withUnsafeBytes({ b.writeAll($0, stopSignal: stopSignal) }) else { return }
        }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while !(a.readClosed && b.readClosed) {
            var entries = [
                pollfd(fd: a.readClosed ? -1 : a.fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: b.readClosed ? -1 : b.fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stopSignal.fd, events: Int16(POLLIN), revents: 0),
            ]
            let timeout: Int32 = a.hasBufferedData || b.hasBufferedData ? 0 : -1
            let ready = poll(&entries, 3, timeout)
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 || entries[2].revents != 0 { return }
            for (source, sink, entry) in [(a, b, entries[0]), (b, a, entries[1])]
            where !source.readClosed && (entry.revents != 0 || source.hasBufferedData) {
                draining: while true {
                    let result = buffer.withUnsafeMutableBytes { source.read(into: $0) }
                    switch result {
                    case .data(let count):
                        guard buffer.withUnsafeBytes({ sink.writeAll(UnsafeRawBufferPointer(rebasing: $0[..<count]), stopSignal: stopSignal) })
                        else { return }
                    case .wouldBlock:
                        break draining
                    case .closed:
                        source.readClosed = true
                        sink.closeWrite()
                        break draining
                    }
                }
            }
        }
    }
}
