import Foundation

/// ANSI styling for one output stream, on only when the stream is a terminal and `NO_COLOR` is
/// unset or empty (https://no-color.org): piped output, logs and golden tests stay plain.
struct TextStyle: Sendable {
    let isEnabled: Bool

    static let standardOutput = TextStyle(fileDescriptor: STDOUT_FILENO)
    static let standardError = TextStyle(fileDescriptor: STDERR_FILENO)

    init(fileDescriptor: Int32, environment: [String: String] = ProcessInfo.processInfo.environment) {
        isEnabled = isatty(fileDescriptor) == 1 && (environment["NO_COLOR"] ?? "").isEmpty
    }

    func bold(_ text: String) -> String { wrap(text, "1") }
    func dim(_ text: String) -> String { wrap(text, "2") }
    func red(_ text: String) -> String { wrap(text, "31") }
    func green(_ text: String) -> String { wrap(text, "32") }
    func yellow(_ text: String) -> String { wrap(text, "33") }

    private func wrap(_ text: String, _ code: String) -> String {
        isEnabled && !text.isEmpty ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
}

/// Writes to standard error, which carries diagnostics, warnings and hints; standard output
/// carries only the result, so it can be piped.
enum StandardError {
    static func write(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// `warning: text`, yellow on a terminal.
    static func warn(_ text: String) {
        write(TextStyle.standardError.yellow("warning:") + " " + text)
    }
}

/// Serialises JSON output: each command's report type, pretty-printed with sorted keys so
/// output is stable and diffable, slashes unescaped (pins and URLs read as written), dates in
/// RFC 3339.
enum JSONText {
    static func render(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        // Every report type encodes only strings, numbers, booleans, dates and arrays of them:
        // encoding cannot fail.
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// RFC 3339 in UTC, seconds precision.
    static func date(_ date: Date) -> String { date.formatted(.iso8601) }
}
