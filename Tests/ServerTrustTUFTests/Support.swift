import Foundation
import ServerTrustTUF
import ServerTrustTestSupport
import Testing

/// The generated repositories served over loopback HTTP, and the fixtures directory; the
/// repositories themselves and the tools they are made with are ``TUFTooling``'s.
enum TUFFixtures {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// One loopback HTTP server over ``repositories`` for the whole test process.
    static let server: RepositoryServer = RepositoryServer(directory: TUFTooling.repositories)

    /// The time now, in seconds since the Unix epoch.
    static var now: Int64 { Int64(Date().timeIntervalSince1970) }
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
        let arguments: [String] = [PackageFiles.python, "-u", TUFTooling.repositoryScript, "serve", directory]
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        precondition(posix_spawn(&pid, PackageFiles.python, &actions, nil, argv, environ) == 0)
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

/// `servertrust updates …` against one scenario of the shared server.
struct UpdatesClient {
    let scenario: String
    let metadataDirectory = TUFTooling.temporaryDirectory("meta")
    let targetDirectory = TUFTooling.temporaryDirectory("targets")
    var server: RepositoryServer { TUFFixtures.server }

    init(_ scenario: String) {
        self.scenario = scenario
        let result = Child.run(PackageFiles.servertrustBinary, ["updates", "--metadata-dir", metadataDirectory, "init", "\(TUFTooling.repositories)/\(scenario)/root.json"])
        precondition(result.status == 0, "init failed: \(result)")
    }

    func refresh(state: Int, extra: [String] = []) -> ChildResult {
        Child.run(PackageFiles.servertrustBinary, ["updates", "--metadata-url", server.url(scenario, state, "metadata"), "--metadata-dir", metadataDirectory] + extra + ["refresh"])
    }

    func download(state: Int, _ names: [String]) -> ChildResult {
        Child.run(
            PackageFiles.servertrustBinary,
            ["updates", "--metadata-dir", metadataDirectory, "--metadata-url", server.url(scenario, state, "metadata")]
                + names.flatMap { ["--target-name", $0] }
                + ["--target-base-url", server.url(scenario, state, "targets"), "--target-dir", targetDirectory, "download"])
    }

    func show() -> String {
        Child.run(PackageFiles.servertrustBinary, ["updates", "--metadata-dir", metadataDirectory, "show"]).output
    }
}

/// Asserts a failed run (exit status exactly 1) whose error names `code`.
func expectFailure(_ result: ChildResult, _ code: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(result.status == 1, "\(result)", sourceLocation: sourceLocation)
    #expect(result.output.contains("error: \(code):"), "\(result)", sourceLocation: sourceLocation)
}
