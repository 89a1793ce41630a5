public import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a command-line tool (`openssl`, `tar`, `sh`) for a test, with `posix_spawn`.
///
/// Not Foundation's `Process`: in swift-corelibs-foundation (Swift 6.3.1) `Process.run` copies
/// each `/proc/self/fd` entry as a full 256-byte name and reads past its buffer once the process
/// has more than ~1,360 descriptors open — which the parallel test runner reaches. Under ASan
/// that is a report (docs/SECURITY-TESTING.md, finding 6); in a plain run it crashed the whole
/// suite with SIGSEGV when the read crossed into an unmapped page (seen in a CI rehearsal).
///
/// Input, output and errors go through files, so a full pipe can never stall the child. A child
/// still running after `timeout` is killed with SIGKILL (SIGTERM may be blocked in children of
/// test threads — DESIGN.md §4).
public enum ChildProcess {
    public struct Result: Sendable {
        /// The exit status; -1 when killed by a signal, -2 when killed after the timeout.
        public let status: Int32
        public let output: [UInt8]
        public let errors: [UInt8]

        public var outputText: String { String(decoding: output, as: UTF8.self) }
        public var errorText: String { String(decoding: errors, as: UTF8.self) }
    }

    public struct SpawnError: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// Runs `executable` with `arguments` to completion, blocking the calling thread.
    public static func run(_ executable: String, _ arguments: [String], input: [UInt8] = [], timeout: TimeInterval = 60) throws -> Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ServerTrustChild-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let inputPath = directory.appendingPathComponent("stdin").path
        let outputPath = directory.appendingPathComponent("stdout").path
        let errorPath = directory.appendingPathComponent("stderr").path
        try Data(input).write(to: URL(fileURLWithPath: inputPath))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, inputPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else { throw SpawnError(description: "posix_spawn \(executable) failed: \(String(cString: strerror(spawned)))") }

        let deadline = Date(timeIntervalSinceNow: timeout)
        var status: Int32 = 0
        var timedOut = false
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { break }
            if reaped == -1 && errno != EINTR { throw SpawnError(description: "waitpid failed: \(errno)") }
            if !timedOut && Date() >= deadline {
                timedOut = true
                kill(pid, SIGKILL)
            }
            usleep(2_000)
        }
        let exitStatus: Int32 = timedOut ? -2 : (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
        return Result(
            status: exitStatus, output: Array(try Data(contentsOf: URL(fileURLWithPath: outputPath))),
            errors: Array(try Data(contentsOf: URL(fileURLWithPath: errorPath))))
    }

    /// The same on a thread of its own, so a cooperative thread is never blocked.
    public static func run(
        _ executable: String, _ arguments: [String], input: [UInt8] = [], timeout: TimeInterval = 60
    ) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Swift.Result { try run(executable, arguments, input: input, timeout: timeout) })
            }.start()
        }
    }
}

/// A server a test runs as a child process (a Python interop peer): it prints one line — its
/// port — on standard output, and serves until its standard input closes.
///
/// Its standard error goes to a file (``errorText``), so a full pipe never stalls it; `stop()`
/// (or `deinit`) closes its input and kills it with SIGKILL.
///
/// `Sendable` as checked: every stored property is an immutable value but ``stop()``'s flag,
/// an atomic, so the descriptor is closed and the child reaped once whichever thread stops it.
public final class ServerProcess: Sendable {
    /// The first line the server printed, without its newline.
    public let firstLine: String
    private let pid: pid_t
    private let inputWrite: Int32
    private let errorPath: String
    private let stopped = Atomic<Bool>(false)

    /// Starts `executable` and waits for its first line of output.
    /// - Throws: `ChildProcess.SpawnError` when it cannot start or ends before printing a line.
    public init(_ executable: String, _ arguments: [String]) throws {
        var toChild: [Int32] = [0, 0]
        var fromChild: [Int32] = [0, 0]
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else { throw ChildProcess.SpawnError(description: "pipe failed: \(errno)") }
        errorPath = FileManager.default.temporaryDirectory.appendingPathComponent("ServerTrustServer-\(UUID().uuidString).stderr").path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        for descriptor in toChild + fromChild { posix_spawn_file_actions_addclose(&actions, descriptor) }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        close(toChild[0])
        close(fromChild[1])
        guard spawned == 0 else {
            close(toChild[1])
            close(fromChild[0])
            throw ChildProcess.SpawnError(description: "posix_spawn \(executable) failed: \(String(cString: strerror(spawned)))")
        }
        _ = fcntl(toChild[1], F_SETFD, FD_CLOEXEC)
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count < 4096 {
            let count = read(fromChild[0], &byte, 1)
            if count == -1 && errno == EINTR { continue }
            guard count == 1, byte != 10 else { break }
            line.append(byte)
        }
        close(fromChild[0])
        self.pid = pid
        inputWrite = toChild[1]
        firstLine = String(decoding: line, as: UTF8.self)
        if firstLine.isEmpty {
            stop()
            throw ChildProcess.SpawnError(description: "\(executable) printed nothing: \(errorText)")
        }
    }

    /// What the server wrote on standard error so far.
    public var errorText: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    /// Ends the server and reaps it.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        close(inputWrite)
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        try? FileManager.default.removeItem(atPath: errorPath)
    }

    deinit { stop() }
}
