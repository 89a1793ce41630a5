import HTTPTypes
internal import ServerTrust

/// The header fields of one response head, kept as the lines curl delivered and made into
/// `HTTPFields` the first time they are read.
///
/// Why lazily: making seven `HTTPField`s per response (a `String` per value, swift-http-types
/// validating it, the fields' storage, and releasing all of it with the response) was the
/// largest single cost ServerTrust added to a kept-alive request, and most callers read one
/// field or none. The header callback now only copies each field line into one buffer; the
/// session itself reads fields only when it needs them — `Location` on a redirect status,
/// `Content-Encoding` when content decoding is configured, the signed-response fields for a host
/// with such a policy — and so does a caller reading ``Response/headers``. SwiftNIO's
/// `HTTPHeaders` keeps the head's bytes in the same spirit.
///
/// What is made is exactly what the header callback made before: each line parsed by
/// ``HeaderLine/parts(of:)`` and made by ``HeaderLine/field(name:value:)``, in arrival order, a
/// name that is not an RFC 9110 token dropped, repeated fields kept. Each line is kept with its
/// length, never split again on a delimiter, so no byte a server sends can turn one line into
/// two. The fields are made once, under a lock (a `Response` is `Sendable` and may be read from
/// several tasks at once), and shared by every later read. The lock is `Locked`, a pthread mutex
/// ThreadSanitizer sees, as everywhere in the package: with `Synchronization.Mutex` it reported
/// two tasks' first reads as a race.
final class ReceivedFields: Sendable {
    /// Each field line as curl delivered it, after its length (a native-endian `UInt32`).
    /// Never changed after `init`.
    private let lines: [UInt8]
    private let made: Locked<HTTPFields?>

    /// No fields.
    static let empty = ReceivedFields(lines: [], made: HTTPFields())

    private init(lines: [UInt8], made: HTTPFields?) {
        self.lines = lines
        self.made = Locked(made)
    }

    /// The fields of `buffer`'s lines, made when first read. The lines are copied: the buffer
    /// goes on receiving (trailers, or the next head after an interim one).
    convenience init(_ buffer: borrowing Buffer) {
        let bytes = buffer.bytes
        self.init(lines: Array(bytes), made: bytes.isEmpty ? HTTPFields() : nil)
    }

    /// Whether the fields have been made: read, or there were none.
    var isMade: Bool { made.withLock { $0 != nil } }

    /// The fields, made on the first read.
    var fields: HTTPFields {
        made.withLock { made in
            if let made { return made }
            let fields = Self.make(lines)
            made = fields
            return fields
        }
    }

    /// Each line parsed as the header callback parses it (``HeaderLine/parts(of:)``), and
    /// each `name: value` made into a field (``HeaderLine/field(name:value:)``) or dropped.
    private static func make(_ lines: [UInt8]) -> HTTPFields {
        var fields = HTTPFields()
        lines.withUnsafeBytes { bytes in
            var start = 0
            while start < bytes.count {
                let count = Int(bytes.loadUnaligned(fromByteOffset: start, as: UInt32.self))
                let line = UnsafeRawBufferPointer(rebasing: bytes[(start + 4)..<(start + 4 + count)])
                start += 4 + count
                if case .field(let name, let value) = HeaderLine.parts(of: line), let field = HeaderLine.field(name: name, value: value) {
                    fields.append(contentsOf: CollectionOfOne(field))
                }
            }
        }
        return fields
    }

    // Fast path: docs/PERFORMANCE.md#fast-paths, "Header lines parsed on bytes".
    /// The field lines of the head being received (loop thread, one transfer): each line
    /// after its length, in one block of memory that grows by doubling and is reused by the
    /// next head, and copied into the ``ReceivedFields`` made from it.
    ///
    /// Not an array: appending a line here is a capacity check, a store and a `memcpy`, where
    /// the two array appends of each line (its length, then its bytes) each checked uniqueness
    /// and capacity and went through the generic sequence copy, on every header line of every
    /// response.
    // Fast path: docs/PERFORMANCE.md#fast-paths, "Header lines in one buffer".
    struct Buffer: ~Copyable {
        private var base: UnsafeMutableRawPointer?
        private var count = 0
        private var capacity = 0

        init() {}

        deinit { base?.deallocate() }

        /// The lines kept since the head started.
        fileprivate var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

        /// Starts a new head: what was kept so far belongs to an earlier one (1xx, a redirect,
        /// an attempt given up), and a head already handed out has its own copy.
        mutating func startHead() { count = 0 }

        /// Keeps one field line as curl delivered it (copied: curl reuses its buffer). A line
        /// is at most ``Transfer/maximumHeaderBytes`` long (the transfer refuses more before
        /// it gets here), so its length fits, and neither sum below can overflow.
        mutating func append(line: UnsafeRawBufferPointer) {
            let end = count + 4 + line.count
            if end > capacity { grow(toAtLeast: end) }
            guard let base else { preconditionFailure("ReceivedFields.Buffer has no storage after growing") }
            // Unaligned: a line's length goes right after the previous line's last byte.
            base.storeBytes(of: UInt32(truncatingIfNeeded: line.count), toByteOffset: count, as: UInt32.self)
            if let source = line.baseAddress, !line.isEmpty { (base + count + 4).copyMemory(from: source, byteCount: line.count) }
            count = end
        }

        private mutating func grow(toAtLeast needed: Int) {
            var grownCapacity = max(capacity * 2, 512)  // one allocation for a typical head
            while grownCapacity < needed { grownCapacity *= 2 }
            let grown = UnsafeMutableRawPointer.allocate(byteCount: grownCapacity, alignment: MemoryLayout<UInt32>.alignment)
            if let base {
                grown.copyMemory(from: base, byteCount: count)
                base.deallocate()
            }
            base = grown
            capacity = grownCapacity
        }
    }
}
