internal import CSQLite
import Foundation

/// One connection to an SQLite file: prepared statements, typed binding, and transactions that
/// take the write lock first (`BEGIN IMMEDIATE`), so two processes on one file serialise their
/// claims instead of failing at commit. Not shared between threads: ``SQLiteLedgerStore``
/// holds it under a lock.
final class SQLiteDatabase {
    private let handle: OpaquePointer
    let path: String

    /// Opens (creating) the file with a busy timeout, foreign keys on, and the WAL journal, in
    /// which readers never wait for the writer.
    init(path: String, busyTimeout: Duration) throws(LedgerError) {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX
        let status = sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            let reason = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            throw LedgerError(.storeUnavailable, "Cannot open the ledger database \(path): \(reason) (SQLite \(status)).")
        }
        self.handle = handle
        self.path = path
        let milliseconds = busyTimeout.components.seconds * 1000 + busyTimeout.components.attoseconds / 1_000_000_000_000_000
        sqlite3_busy_timeout(handle, Int32(clamping: milliseconds))
        try execute("PRAGMA foreign_keys = ON")
        try execute("PRAGMA journal_mode = WAL")
        // FULL: a transaction is on disk when COMMIT returns, in WAL mode too (NORMAL may lose
        // the last ones at power loss), which "durable before claim returns" needs.
        try execute("PRAGMA synchronous = FULL")
    }

    deinit { sqlite3_close_v2(handle) }

    /// Runs SQL without results (several statements allowed).
    func execute(_ sql: String) throws(LedgerError) {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard status == SQLITE_OK else {
            throw error(status, message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle)), sql)
        }
    }

    /// The rows of one statement, each read by `row`.
    func query<Row>(
        _ sql: String, _ values: [SQLiteValue] = [], row: (SQLiteRow) throws(LedgerError) -> Row
    ) throws(LedgerError) -> [Row] {
        var statement: OpaquePointer?
        let prepared = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard prepared == SQLITE_OK, let statement else { throw error(prepared, String(cString: sqlite3_errmsg(handle)), sql) }
        defer { sqlite3_finalize(statement) }
        for (index, value) in values.enumerated() {
            let position = Int32(index + 1)
            let bound: Int32
            switch value {
            case .null: bound = sqlite3_bind_null(statement, position)
            case .integer(let number): bound = sqlite3_bind_int64(statement, position, number)
            case .text(let text): bound = sqlite3_bind_text(statement, position, text, -1, servertrust_sqlite_transient())
            }
            guard bound == SQLITE_OK else { throw error(bound, String(cString: sqlite3_errmsg(handle)), sql) }
        }
        var rows: [Row] = []
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { return rows }
            guard status == SQLITE_ROW else { throw error(status, String(cString: sqlite3_errmsg(handle)), sql) }
            rows.append(try row(SQLiteRow(statement: statement)))
        }
    }

    /// Runs one statement; returns how many rows it changed.
    @discardableResult
    func run(_ sql: String, _ values: [SQLiteValue] = []) throws(LedgerError) -> Int {
        _ = try query(sql, values) { _ throws(LedgerError) in () }
        return Int(sqlite3_changes(handle))
    }

    /// `body` in one transaction that holds the write lock from its start; rolled back when
    /// `body` throws, so a refusal writes nothing.
    func transaction<Result>(_ body: () throws(LedgerError) -> Result) throws(LedgerError) -> Result {
        try execute("BEGIN IMMEDIATE")
        let result: Result
        do {
            result = try body()
            try execute("COMMIT")
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
        return result
    }

    private func error(_ status: Int32, _ message: String, _ sql: String) -> LedgerError {
        let primary = status & 0xFF
        // Busy or locked past the timeout, I/O, a full disk: the claim may succeed later.
        if [SQLITE_BUSY, SQLITE_LOCKED, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_PROTOCOL].contains(primary) {
            return LedgerError(.storeUnavailable, "The ledger database \(path) is unavailable: \(message) (SQLite \(status)); retry later.")
        }
        if primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB {
            return LedgerError(.corruptRecord, "The ledger database \(path) is damaged: \(message) (SQLite \(status)).")
        }
        let statement = sql.split(separator: " ").prefix(4).joined(separator: " ")
        return LedgerError(.storeFailed, "The ledger database \(path) refused \(statement)…: \(message) (SQLite \(status)).")
    }
}

/// A value bound to a statement.
enum SQLiteValue {
    case null
    case integer(Int64)
    case text(String)

    static func date(_ date: Date?) -> SQLiteValue { date.map { .integer(LedgerTime.milliseconds($0)) } ?? .null }
    static func optional(_ text: String?) -> SQLiteValue { text.map { .text($0) } ?? .null }
    static func optional(_ number: Int64?) -> SQLiteValue { number.map { .integer($0) } ?? .null }
}

/// One result row, its columns read by index and checked: a row that does not hold what the
/// schema says is a ``LedgerError/Code/corruptRecord``, never a crash or a default.
struct SQLiteRow {
    fileprivate let statement: OpaquePointer

    func text(_ column: Int32, _ name: String) throws(LedgerError) -> String {
        guard let text = try optionalText(column, name) else { throw LedgerError(.corruptRecord, "The ledger row's \(name) is missing.") }
        return text
    }

    /// NULL as nil; a value of another type is damage.
    func optionalText(_ column: Int32, _ name: String) throws(LedgerError) -> String? {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_NULL: return nil
        case SQLITE_TEXT:
            guard let bytes = sqlite3_column_text(statement, column) else { return nil }
            return String(cString: bytes)
        default: throw LedgerError(.corruptRecord, "The ledger row's \(name) is not text.")
        }
    }

    func integer(_ column: Int32, _ name: String) throws(LedgerError) -> Int64 {
        guard let value = try optionalInteger(column, name) else { throw LedgerError(.corruptRecord, "The ledger row's \(name) is missing.") }
        return value
    }

    /// NULL as nil; a value of another type is damage.
    func optionalInteger(_ column: Int32, _ name: String) throws(LedgerError) -> Int64? {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_NULL: return nil
        case SQLITE_INTEGER: return sqlite3_column_int64(statement, column)
        default: throw LedgerError(.corruptRecord, "The ledger row's \(name) is not an integer.")
        }
    }
}
