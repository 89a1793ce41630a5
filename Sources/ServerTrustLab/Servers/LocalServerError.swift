import Foundation
internal import COpenSSL

/// Why a local server could not start, or could not take a new identity.
public struct LocalServerError: Error, CustomStringConvertible, Sendable {
    /// What failed, with `errno` text or OpenSSL's error queue appended.
    public let description: String

    package init(_ what: String) {
        description = what
    }

    package init(_ what: String, errno code: Int32) {
        description = "\(what): \(String(cString: strerror(code)))"
    }

    /// `what`, followed by the OpenSSL error queue of this thread, which this drains.
    package static func openSSL(_ what: String) -> LocalServerError {
        var messages: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return LocalServerError(messages.isEmpty ? what : "\(what): \(messages.joined(separator: "; "))")
    }
}
