internal import COpenSSL

/// A failure to build lab material: bad input to a builder, or an OpenSSL call that failed.
///
/// The lab throws rather than traps, so a mistake in a PKI shows up as the failing call (a
/// test's failure), with OpenSSL's own explanation, instead of crashing the whole process.
public struct LabPKIError: Error, CustomStringConvertible, Sendable {
    /// What the builder was doing.
    public let message: String
    /// OpenSSL's error queue at the time, oldest first.
    public let openSSLErrors: [String]

    package init(_ message: String) {
        self.message = message
        openSSLErrors = drainLabOpenSSLErrors()
    }

    /// The message, then OpenSSL's errors in parentheses.
    public var description: String {
        openSSLErrors.isEmpty ? message : message + " (" + openSSLErrors.joined(separator: "; ") + ")"
    }
}

/// Empties OpenSSL's thread-local error queue into strings.
func drainLabOpenSSLErrors() -> [String] {
    var messages: [String] = []
    while case let code = ERR_get_error(), code != 0 {
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    return messages
}

/// Throws a ``LabPKIError`` when an OpenSSL call reports failure (anything but 1, or nil).
package func check(_ result: Int32, _ what: @autoclosure () -> String) throws {
    guard result == 1 else { throw LabPKIError("\(what()) failed") }
}

package func check<T>(_ value: T?, _ what: @autoclosure () -> String) throws -> T {
    guard let value else { throw LabPKIError("\(what()) failed") }
    return value
}
