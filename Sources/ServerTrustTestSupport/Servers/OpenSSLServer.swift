import Foundation
import ServerTrustLab

/// `openssl s_server` as a real peer, for what an in-process server cannot show: a TLS extension
/// from a serverinfo file, a chosen key-exchange group list. It serves `-www` on 127.0.0.1 at a
/// port of its own choosing, for `connections` connections or 60 s, whichever ends first.
public struct OpenSSLServer: Sendable {
    public let port: Int
    /// The folder holding its files (`leaf.pem`, `chain.pem`, `leaf.key`, and any extra ones).
    public let directory: String

    /// - Parameters:
    ///   - leaf: the leaf certificate, PEM.
    ///   - chain: the certificates sent after it, PEM.
    ///   - key: the leaf's private key, PEM.
    ///   - files: more files to write beside them, by name.
    ///   - arguments: more `s_server` arguments (shell words), as `-tls1_3 -groups X25519`.
    ///   - connections: how many connections to accept before exiting.
    public static func start(
        leaf: String, chain: String, key: String, files: [String: String] = [:], arguments: String, connections: Int
    ) throws -> OpenSSLServer {
        let directory = try LabPKI.writeTemporaryFile(key, name: "leaf.key").components(separatedBy: "/").dropLast().joined(separator: "/")
        for (name, contents) in ["leaf.pem": leaf, "chain.pem": chain].merging(files, uniquingKeysWith: { $1 }) {
            try Data(contents.utf8).write(to: URL(fileURLWithPath: "\(directory)/\(name)"))
        }
        let start = try ChildProcess.run("/bin/sh", ["-c", """
            cd '\(directory)' || exit 1
            timeout 60 openssl s_server \(arguments) -cert leaf.pem -cert_chain chain.pem -key leaf.key \
                -accept 127.0.0.1:0 -www -naccept \(connections) >server.log 2>&1 </dev/null &
            for _ in $(seq 200); do grep -q '^ACCEPT' server.log && break; sleep 0.05; done
            sed -n 's/^ACCEPT 127.0.0.1:\\([0-9]*\\)$/\\1/p' server.log
            """])
        guard let port = Int(start.outputText.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw ChildProcess.SpawnError(description: "openssl s_server did not start: \(start.errorText) \((try? String(contentsOfFile: "\(directory)/server.log", encoding: .utf8)) ?? "")")
        }
        return OpenSSLServer(port: port, directory: directory)
    }

    /// Removes its files (the process ends by itself).
    public func removeFiles() { try? FileManager.default.removeItem(atPath: directory) }
}
