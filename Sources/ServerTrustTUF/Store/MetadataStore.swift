#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The client's trusted metadata on disk: one directory, plain file names (`root.json`,
/// `timestamp.json`, a delegated role's percent-encoded name), written so that a crash never
/// leaves a torn file.
///
/// Each write goes to a temporary file (mode 0600) in the same directory, is `fsync`ed, renamed
/// over the old file, and the directory is `fsync`ed, so after a crash a file holds either its
/// old or its new bytes. A crash *between* two files can still leave, say, a new timestamp
/// beside an old snapshot: that is why the ``Updater`` loads every stored file through the same
/// checks as a download, so an inconsistent store is refused and
/// refetched, never trusted; a temporary file a killed writer left is removed by the next
/// lock holder. Every update takes an exclusive `flock` on `.lock` in the directory, so two
/// processes never update one store at once.
///
/// The application gives the first trusted root: ``installInitialRoot(_:)`` writes an
/// ``InitialRoot`` (a file it ships, or a root compiled in) only into a store that has none.
public final class MetadataStore: Sendable {
    public let directory: String
    /// The most bytes read from one stored file.
    public let maximumFileLength: Int

    /// Opens (and creates, mode 0700) `directory`.
    public init(directory: String, maximumFileLength: Int = 16 << 20) throws(TUFError) {
        self.directory = directory
        self.maximumFileLength = maximumFileLength
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw TUFError(.storeFailure, "cannot create \(directory): \(String(cString: strerror(errno)))")
        }
    }

    func path(_ name: String) -> String { directory.hasSuffix("/") ? directory + name : directory + "/" + name }

    /// The bytes of `name`, or nil when it does not exist or cannot be read.
    public func read(_ name: String) -> [UInt8]? {
        FileIO.read(path(name), maximumLength: maximumFileLength)
    }

    /// Replaces `name` with `bytes` atomically and durably.
    package func write(_ name: String, _ bytes: [UInt8]) throws(TUFError) {
        try FileIO.writeAtomically(bytes, to: path(name), directory: directory)
    }

    /// Removes `name` if it exists.
    package func remove(_ name: String) {
        unlink(path(name))
    }

    /// Writes `root` as the trusted root (`root.json`) if the store holds none yet, under the
    /// store's lock; returns whether it did.
    ///
    /// A store that holds a root keeps it, whatever its version: after a rotation it holds a
    /// newer root than the one the application shipped, and going back to the shipped one would
    /// undo the rotation (a key the repository removed would be trusted again). A stored root
    /// that is unreadable or fails its checks is not replaced either: the ``Updater`` refuses
    /// it with the reason, rather than silently trusting the shipped root instead.
    @discardableResult
    public func installInitialRoot(_ root: InitialRoot) throws(TUFError) -> Bool {
        let lock = try lock()
        defer { withExtendedLifetime(lock) {} }
        var status = stat()
        guard lstat(path("root.json"), &status) != 0 else { return false }
        guard errno == ENOENT else {
            throw TUFError(.storeFailure, "cannot inspect \(path("root.json")): \(String(cString: strerror(errno)))")
        }
        try write("root.json", root.bytes)
        return true
    }

    /// Blocks until this process holds the store's exclusive lock; the lock is released when
    /// the returned value is released (or the process ends).
    package func lock() throws(TUFError) -> StoreLock {
        let fd = open(path(".lock"), O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw TUFError(.storeFailure, "cannot open \(path(".lock")): \(String(cString: strerror(errno)))") }
        while flock(fd, LOCK_EX) != 0 {
            if errno == EINTR { continue }
            close(fd)
            throw TUFError(.storeFailure, "cannot lock \(path(".lock")): \(String(cString: strerror(errno)))")
        }
        removeStaleTemporaryFiles()
        return StoreLock(fd: fd)
    }

    /// Temporary files a killed writer left behind; only a lock holder writes, so any present
    /// now is stale.
    private func removeStaleTemporaryFiles() {
        guard let dir = opendir(directory) else { return }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.contains(".tmp-") { unlink(path(name)) }
        }
    }
}

/// An exclusive lock on a ``MetadataStore``; closing the descriptor releases it.
package final class StoreLock: Sendable {
    private let fd: Int32
    init(fd: Int32) { self.fd = fd }
    deinit { close(fd) }
}

/// Whole-file reads and crash-safe writes.
enum FileIO {
    static func read(_ path: String, maximumLength: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > maximumLength { return nil }
        }
    }

    static func writeAtomically(_ bytes: [UInt8], to path: String, directory: String) throws(TUFError) {
        func failure(_ what: String) -> TUFError { TUFError(.storeFailure, "\(what) \(path): \(String(cString: strerror(errno)))") }
        var template = Array((path + ".tmp-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw failure("cannot create a temporary file for") }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var ok = fchmod(fd, 0o600) == 0
        var offset = 0
        while ok && offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, bytes.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                ok = false
            } else {
                offset += written
            }
        }
        ok = ok && fsync(fd) == 0
        let error = failure("cannot write")
        close(fd)
        guard ok else {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let error = failure("cannot rename into")
            unlink(temporary)
            throw error
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            fsync(directoryFD)
            close(directoryFD)
        }
    }
}

/// Python's `urllib.parse.quote(name, safe="")`: a role name or target path as one file name.
func percentEncoded(_ name: String) -> String {
    var out = ""
    for byte in name.utf8 {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "~"):
            out.unicodeScalars.append(Unicode.Scalar(byte))
        default:
            let hex = Array("0123456789ABCDEF")
            out += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 0xF)])
        }
    }
    return out
}
