public import Foundation
package import ServerTrustTUF
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What the TUF and trust-update test targets run their peers with: the repository generator
/// `tuf_repo.py` (run by ``PackageFiles/python``), its generated repositories, and scratch
/// directories.
public enum TUFTooling {
    /// The repository generator (`generate`, `policies`, `compiled-root`).
    public static var repositoryScript: String {
        PackageFiles.path("Tests/ServerTrustTUFTests/Fixtures/tuf_repo.py")
    }

    /// A new directory under the temporary directory, named after `name`.
    public static func temporaryDirectory(_ name: String) -> String {
        let path = NSTemporaryDirectory() + "servertrust-tuf-\(name)-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Every scenario's repository states, generated once: `<dir>/<scenario>/<state>/…`.
    package static let repositories: String = {
        let directory = TUFTooling.temporaryDirectory("repos")
        let result = Child.run(PackageFiles.python, [TUFTooling.repositoryScript, "generate", directory], timeout: 300)
        precondition(result.status == 0, "tuf_repo.py generate failed: \(result)")
        return directory
    }()

    /// An ``Updater`` over the files of one generated scenario state (``FileFetcher``, no HTTP),
    /// its store started from the scenario's initial root.
    package static func updater(_ scenario: String, state: Int = 0, clock: Int64 = Int64(Date().timeIntervalSince1970), store directory: String = TUFTooling.temporaryDirectory("store")) throws -> Updater {
        let store = try MetadataStore(directory: directory)
        let root = try InitialRoot(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: "\(repositories)/\(scenario)/root.json"))))
        return try Updater(
            store: store, initialRoot: root, metadataBaseURL: "repo://\(state)/metadata", targetBaseURL: "repo://\(state)/targets",
            fetcher: FileFetcher(base: "\(repositories)/\(scenario)"), clock: FixedClock(seconds: clock))
    }

    /// The bytes of a generated file, `<scenario>/…`.
    package static func file(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: "\(repositories)/\(path)")))
    }
}

/// Files of a generated repository as the transport: `repo://<state>/…` is `base/<state>/…`.
package struct FileFetcher: TUFFetching {
    package let base: String
    package init(base: String) { self.base = base }
    package func fetch(_ url: String, maximumLength: Int, deadline: ContinuousClock.Instant) async throws(TUFError) -> [UInt8] {
        let path = base + "/" + url.dropFirst("repo://".count)
        guard let data = FileManager.default.contents(atPath: path) else { throw TUFError(.notFound, url) }
        guard data.count <= maximumLength else { throw TUFError(.downloadTooLarge, url) }
        return Array(data)
    }
}

package struct FixedClock: TUFClock {
    package let seconds: Int64
    package init(seconds: Int64) { self.seconds = seconds }
    package func now() -> Int64 { seconds }
}

public struct ChildResult: CustomStringConvertible, Sendable {
    public let status: Int32
    public let output: String
    public init(status: Int32, output: String) { (self.status, self.output) = (status, output) }
    public var description: String { "exit \(status): \(output)" }
}

/// Runs a program with its standard output and error in one file, in the order written (no pipe
/// to drain), killing it at `timeout`; `spawn` and `wait` let a test kill it at a moment of its
/// choosing (the TUF crash test). ``ChildProcess`` is the runner for a tool fed input whose
/// output and errors are read apart.
public enum Child {
    public static func spawn(_ program: String, _ arguments: [String], outputFile: String) -> pid_t {
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

    public static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
    }

    public static func run(_ program: String, _ arguments: [String], timeout: Int = 120) -> ChildResult {
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
