public import Foundation
public import ServerTrustLab

/// A log list in Chrome's v3 schema (`log_list.json`) naming test logs, and its detached
/// signature (`log_list.sig`).
///
/// ```swift
/// var list = TestCTLogList()
/// list.add(logA, state: .usable, since: .days(-400))
/// list.add(logB, state: .retired, since: .days(-10))
/// let json = list.json(timestamp: now)
/// let signature = try list.signature(of: json, key: listKey)
/// ```
///
/// Operators appear in the order their first log was added, each with its logs (`logs`) and
/// its static-ct-api logs (`tiled_logs`) in the order added.
public struct TestCTLogList: Sendable {
    /// A log's state in the list (`state`: `{"usable": {"timestamp": …}}`).
    public enum State: String, Sendable, CaseIterable {
        case pending, qualified, usable, readonly, retired, rejected
    }

    /// One log's entry.
    public struct Entry: Sendable {
        /// The log: its description, key, log ID and operator name.
        public var log: TestCTLog
        /// nil omits `state` (a log list may have logs without one).
        public var state: State?
        /// When the log entered ``state``.
        public var stateTimestamp: Date
        /// `temporal_interval`: the notAfter range of the certificates it accepts; nil omits it.
        public var temporalInterval: Range<Date>?
        /// A static-ct-api log (`tiled_logs`, with `submission_url` and `monitoring_url`)
        /// rather than an RFC 6962 one (`logs`, with `url`).
        public var isTiled: Bool
        /// Maximum merge delay in seconds. Default 86400.
        public var mmd: Int
    }

    /// `version`. Default "1.0".
    public var version = "1.0"
    /// The entries, in the order added.
    public var entries: [Entry] = []

    /// An empty list.
    public init() {}

    /// Adds `log` under its operator.
    ///
    /// - Parameters:
    ///   - state: nil omits the state.
    ///   - since: the state's timestamp.
    ///   - temporalInterval: default none.
    ///   - tiled: a static-ct-api log. Default false.
    public mutating func add(
        _ log: TestCTLog, state: State?, since: Date, temporalInterval: Range<Date>? = nil, tiled: Bool = false
    ) {
        entries.append(Entry(log: log, state: state, stateTimestamp: since, temporalInterval: temporalInterval, isTiled: tiled, mmd: 86400))
    }

    /// The list as JSON, with `log_list_timestamp` set to `timestamp`.
    public func json(timestamp: Date) -> [UInt8] {
        var operatorNames: [String] = []
        for entry in entries where !operatorNames.contains(entry.log.operatorName) { operatorNames.append(entry.log.operatorName) }
        let operators: [[String: Any]] = operatorNames.enumerated().map { index, name in
            let own = entries.filter { $0.log.operatorName == name }
            return [
                "name": name,
                "email": ["ct-operator-\(index)@example.com"],
                "logs": own.filter { !$0.isTiled }.map(Self.object),
                "tiled_logs": own.filter(\.isTiled).map(Self.object),
            ]
        }
        let root: [String: Any] = ["version": version, "log_list_timestamp": Self.rfc3339(timestamp), "operators": operators]
        do {
            let data = try JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            return Array(data)
        } catch {
            preconditionFailure("a log list of strings, numbers and arrays is valid JSON: \(error)")
        }
    }

    /// A detached signature over `json` with `key`: RSA PKCS#1 v1.5 with SHA-256 (how Google
    /// signs `log_list.sig`), ECDSA with SHA-256 (DER), or Ed25519.
    public func signature(of json: [UInt8], key: LabKey) throws -> [UInt8] {
        try key.signature(over: json)
    }

    /// RFC 3339 in UTC, whole seconds: `2024-01-01T10:00:00Z`.
    public static func rfc3339(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }

    private static func object(_ entry: Entry) -> [String: Any] {
        let slug = entry.log.description.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "-" }
        let base = "https://\(String(slug)).ct.example/"
        var object: [String: Any] = [
            "description": entry.log.description,
            "log_id": Data(entry.log.logID).base64EncodedString(),
            "key": Data(entry.log.publicKeyDER).base64EncodedString(),
            "mmd": entry.mmd,
        ]
        if entry.isTiled {
            object["submission_url"] = base
            object["monitoring_url"] = base.replacingOccurrences(of: "https://", with: "https://mon.")
        } else {
            object["url"] = base
        }
        if let state = entry.state {
            object["state"] = [state.rawValue: ["timestamp": rfc3339(entry.stateTimestamp)]]
        }
        if let interval = entry.temporalInterval {
            object["temporal_interval"] = [
                "start_inclusive": rfc3339(interval.lowerBound), "end_exclusive": rfc3339(interval.upperBound),
            ]
        }
        return object
    }
}
