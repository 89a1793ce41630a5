public import Logging
internal import ServerTrust

/// A swift-log sink that keeps every record, for tests that assert what was logged.
///
/// `LoggingSystem.bootstrap` is process-wide and may run once; a test instead passes
/// ``logger`` to the code under test.
public final class CapturedLogs: Sendable {
    public struct Record: Sendable, CustomStringConvertible {
        public let level: Logger.Level
        public let message: String
        public let metadata: [String: String]
        public var description: String { "[\(level)] \(message) \(metadata)" }
    }

    private let records = Locked<[Record]>([])

    public init() {}

    /// A logger labelled `servertrust` whose records land here; everything from trace up.
    public var logger: Logger {
        var logger = Logger(label: "servertrust") { _ in Handler(sink: self) }
        logger.logLevel = .trace
        return logger
    }

    public var all: [Record] { records.withLock { $0 } }

    /// The records at `level`.
    public func at(_ level: Logger.Level) -> [Record] { all.filter { $0.level == level } }

    fileprivate func append(_ record: Record) { records.withLock { $0.append(record) } }

    private struct Handler: LogHandler {
        let sink: CapturedLogs
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            var merged = metadata
            if let extra = event.metadata { merged.merge(extra) { $1 } }
            sink.append(Record(level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" }))
        }
    }
}
