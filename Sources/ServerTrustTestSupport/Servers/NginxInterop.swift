import Foundation
internal import ServerTrust

/// The nginx that interop tests talk to: the one `.ci/run` started (`SERVERTRUST_INTEROP_DIR`),
/// or one this test process starts with `scripts/interop/nginx.sh` and stops at exit.
///
/// In test support (not one test target) so every test target that talks to nginx — the
/// session's and each adapter's — reads the same servers the same way.
public enum NginxInterop {
    public struct Environment: Sendable {
        public let values: [String: String]
        public var host: String { values["SERVERTRUST_INTEROP_HOST"]! }
        public var root: String { values["SERVERTRUST_INTEROP_ROOT"]! }
        public var intermediatePin: String { values["SERVERTRUST_INTEROP_INTERMEDIATE_PIN"]! }
        public var ecdsaLeafPin: String { values["SERVERTRUST_INTEROP_ECDSA_LEAF_PIN"]! }
        public var rsaLeafPin: String { values["SERVERTRUST_INTEROP_RSA_LEAF_PIN"]! }
        /// The AIA OCSP URL of the live leaves: the `openssl ocsp -port` responder nginx.sh runs.
        public var ocspResponderURL: String { "http://127.0.0.1:\(port("OCSP_RESPONDER"))/" }
        /// The text file nginx serves gzip-compressed under `/compressed/interop.txt`.
        public var compressibleFile: String { values["SERVERTRUST_INTEROP_COMPRESSIBLE_FILE"]! }
        public func port(_ name: String) -> Int { Int(values["SERVERTRUST_INTEROP_\(name)"]!)! }
        public func url(_ portName: String, _ path: String = "/") -> String { "https://\(host):\(port(portName))\(path)" }
        /// Every server's port for the interop host name (an interop.env written before the
        /// mutual-TLS servers existed simply lacks theirs).
        public var resolve: [String] {
            ["TLS13_ECDSA_H2_STAPLED", "TLS12_ECDSA_H1_STAPLED", "TLS13_RSA_H2", "TLS12_RSA_H1",
             "TLS13_LIVE_OCSP_GOOD", "TLS12_LIVE_OCSP_REVOKED", "MTLS_REQUIRED", "MTLS_OPTIONAL"]
                .compactMap { values["SERVERTRUST_INTEROP_\($0)"] }.map { "\(host):\($0):127.0.0.1" }
        }
    }

    private static let started = Locked<Result<Environment, NginxError>?>(nil)

    public struct NginxError: Error, CustomStringConvertible { public let description: String }

    public static func environment() throws -> Environment {
        try started.withLock { cached in
            if let cached { return try cached.get() }
            let result = Result { () throws(NginxError) -> Environment in try load() }
            cached = result
            return try result.get()
        }
    }

    private static func load() throws(NginxError) -> Environment {
        if let dir = ProcessInfo.processInfo.environment["SERVERTRUST_INTEROP_DIR"] {
            return try parse("\(dir)/interop.env")
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("servertrust-nginx-\(getpid())").path
        let packageRoot = PackageFiles.root.path
        let status = run("\(packageRoot)/scripts/interop/nginx.sh", ["start", dir], environment: [:])
        guard status == 0 else { throw NginxError(description: "scripts/interop/nginx.sh start failed (exit \(status)); is nginx installed? Run scripts/setup.sh.") }
        stopCommand.withLock { $0 = ("\(packageRoot)/scripts/interop/nginx.sh", dir) }
        atexit(stopStartedNginx)
        return try parse("\(dir)/interop.env")
    }

    /// The script and folder of the nginx this process started, stopped at exit.
    static let stopCommand = Locked<(script: String, directory: String)?>(nil)

    private static func parse(_ path: String) throws(NginxError) -> Environment {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw NginxError(description: "Cannot read \(path).")
        }
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return Environment(values: values)
    }

    /// Runs a bash script to completion with posix_spawn and waitpid (Foundation's Process
    /// can hang waiting for a child whose own background child keeps running, as nginx does).
    @discardableResult
    public static func run(_ path: String, _ arguments: [String], environment: [String: String]) -> Int32 {
        let argv = (["/bin/bash", path] + arguments).map { strdup($0) } + [nil]
        let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        var pid: pid_t = 0
        guard posix_spawn(&pid, "/bin/bash", &actions, nil, argv, envp) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
    }
}

/// `atexit` handler: stops the nginx this test process started, if any.
private func stopStartedNginx() {
    guard let command = NginxInterop.stopCommand.withLock({ $0 }) else { return }
    NginxInterop.run(command.script, ["stop", command.directory], environment: [:])
}
