import Foundation
import ServerTrustTUF
import Testing

/// The package root, the python-tuf virtual environment scripts/setup.sh makes, and the
/// repositories tuf_repo.py generates (once per test process).
enum TUFFixtures {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let script = fixtures.appendingPathComponent("tuf_repo.py").path

    static var python: String {
        let venv = packageRoot.appendingPathComponent(".venv-tuf/bin/python").path
        precondition(FileManager.default.isExecutableFile(atPath: venv), "\(venv) is missing: run scripts/setup.sh (it installs python-tuf)")
        return venv
    }

    static func temporaryDirectory(_ name: String) -> String {
        let path = NSTemporaryDirectory() + "servertrust-tuf-\(name)-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Every scenario's repository states, generated once: `<dir>/<scenario>/<state>/…`.
    static let repositories: String = {
        let directory = temporaryDirectory("repos")
        let result = Child.run(python, [script, "generate", directory], timeout: 300)
        precondition(result.status == 0, "tuf_repo.py generate failed: \(result)")
        return directory
    }()

    /// One loopback HTTP server over ``repositories`` for the whole test process.
    static let server: RepositoryServer = RepositoryServer(directory: repositories)

    /// The time now, in seconds since the Unix epoch.
    static var now: Int64 { Int64(Date().timeIntervalSince1970) }

    /// An ``Updater`` over the files of one generated scenario state (``FileFetcher``, no HTTP),
    /// its store started from the scenario's initial root.
    static func updater(_ scenario: String, state: Int = 0, clock: Int64 = now, store directory: String = temporaryDirectory("store")) throws -> Updater {
        let store = try MetadataStore(directory: directory)
        let root = try InitialRoot(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: "\(repositories)/\(scenario)/root.json"))))
        return try Updater(
            store: store, initialRoot: root, metadataBaseURL: "repo://\(state)/metadata", targetBaseURL: "repo://\(state)/targets",
            fetcher: FileFetcher(base: "\(repositories)/\(scenario)"), clock: FixedClock(seconds: clock))
    }

    /// The bytes of a generated file, `<scenario>/…`.
    static func file(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: "\(repositories)/\(path)")))
    }

    static func binary() -> String {
        let candidates = [
            Bundle.main.bundleURL.appendingPathComponent("servertrust").path,
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("servertrust").path,
            packageRoot.appendingPathComponent(".build/debug/servertrust").path,
        ]
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            preconditionFailure("servertrust binary not found; looked at \(candidates)")
        }
        return found
    }
}

/// Files of a generated repository as the transport: `repo://<state>/…` is `base/<state>/…`.
struct FileFetcher: TUFFetching {
    let base: String
    func fetch(_ url: String, maximumLength: Int, deadline: ContinuousClock.Instant) async throws(TUFError) -> [UInt8] {
        let path = base + "/" + url.dropFirst("repo://".count)
        guard let data = FileManager.default.contents(atPath: path) else { throw TUFError(.notFound, url) }
        guard data.count <= maximumLength else { throw TUFError(.downloadTooLarge, url) }
        return Array(data)
    }
}

struct FixedClock: TUFClock {
    let seconds: Int64
    func now() -> Int64 { seconds }
}

/// `tuf_repo.py serve`: a python http.server on 127.0.0.1, with endless and slow files.
final class RepositoryServer: Sendable {
    let port: Int
    let directory: String
    private let pid: pid_t
    private let stdinWrite: Int32

    init(directory: String) {
        self.directory = directory
        var toChild: [Int32] = [0, 0], fromChild: [Int32] = [0, 0]
        precondition(pipe(&toChild) == 0 && pipe(&fromChild) == 0)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        posix_spawn_file_actions_addclose(&actions, toChild[1])
        posix_spawn_file_actions_addclose(&actions, fromChild[0])
        let arguments: [String] = [TUFFixtures.python, "-u", TUFFixtures.script, "serve", directory]
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        precondition(posix_spawn(&pid, TUFFixtures.python, &actions, nil, argv, environ) == 0)
        posix_spawn_file_actions_destroy(&actions)
        close(toChild[0])
        close(fromChild[1])
        _ = fcntl(toChild[1], F_SETFD, FD_CLOEXEC)
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while read(fromChild[0], &byte, 1) == 1, byte != 10 { line.append(byte) }
        close(fromChild[0])
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else { preconditionFailure("server said \(text)") }
        self.port = port
        self.pid = pid
        self.stdinWrite = toChild[1]
    }

    func url(_ scenario: String, _ state: Int, _ part: String) -> String {
        "http://127.0.0.1:\(port)/\(scenario)/\(state)/\(part)"
    }

    /// The request paths served so far.
    func requests() -> [String] {
        ((try? String(contentsOfFile: directory + "/requests.log", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }
}

struct ChildResult: CustomStringConvertible {
    let status: Int32
    let output: String
    var description: String { "exit \(status): \(output)" }
}

/// Runs a program with its output in a file (no pipe to drain), killing it at `timeout` or, for
/// the crash test, after `killAfter` microseconds.
enum Child {
    static func spawn(_ program: String, _ arguments: [String], outputFile: String) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputFile, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, program, &actions, nil, argv, environ)
        precondition(spawned == 0, "posix_spawn \(program) failed: \(spawned)")
        return pid
    }

    static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
    }

    static func run(_ program: String, _ arguments: [String], timeout: Int = 120) -> ChildResult {
        let output = NSTemporaryDirectory() + "servertrust-tuf-out-\(UUID().uuidString)"
        defer { unlink(output) }
        let pid = spawn(program, arguments, outputFile: output)
        let start = Date()
        var status: Int32 = 0
        while true {
            let done = waitpid(pid, &status, WNOHANG)
            if done == pid { break }
            if Date().timeIntervalSince(start) > Double(timeout) {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                return ChildResult(status: -2, output: "killed after \(timeout) s")
            }
            usleep(2_000)
        }
        let code: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
        return ChildResult(status: code, output: (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
    }
}

/// `servertrust updates …` against one scenario of the shared server.
struct UpdatesClient {
    let scenario: String
    let metadataDirectory = TUFFixtures.temporaryDirectory("meta")
    let targetDirectory = TUFFixtures.temporaryDirectory("targets")
    var server: RepositoryServer { TUFFixtures.server }

    init(_ scenario: String) {
        self.scenario = scenario
        let result = Child.run(TUFFixtures.binary(), ["updates", "--metadata-dir", metadataDirectory, "init", "\(TUFFixtures.repositories)/\(scenario)/root.json"])
        precondition(result.status == 0, "init failed: \(result)")
    }

    func refresh(state: Int, extra: [String] = []) -> ChildResult {
        Child.run(TUFFixtures.binary(), ["updates", "--metadata-url", server.url(scenario, state, "metadata"), "--metadata-dir", metadataDirectory] + extra + ["refresh"])
    }

    func download(state: Int, _ names: [String]) -> ChildResult {
        Child.run(
            TUFFixtures.binary(),
            ["updates", "--metadata-dir", metadataDirectory, "--metadata-url", server.url(scenario, state, "metadata")]
                + names.flatMap { ["--target-name", $0] }
                + ["--target-base-url", server.url(scenario, state, "targets"), "--target-dir", targetDirectory, "download"])
    }

    func show() -> String {
        Child.run(TUFFixtures.binary(), ["updates", "--metadata-dir", metadataDirectory, "show"]).output
    }
}

/// Asserts a failed run (exit status exactly 1) whose error names `code`.
func expectFailure(_ result: ChildResult, _ code: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(result.status == 1, "\(result)", sourceLocation: sourceLocation)
    #expect(result.output.contains("error: \(code):"), "\(result)", sourceLocation: sourceLocation)
}
