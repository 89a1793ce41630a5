public import Foundation

/// Where the tests find what the package holds besides its sources: the package's root (for
/// `Certificates/`, `docs/`, `scripts/` and fixtures), the `servertrust` binary SwiftPM built
/// beside the test bundle, and the Python virtual environment scripts/setup.sh makes
/// (python-tuf and the RFC 9421 peer's library). One place, so a moved file or build folder is
/// changed once.
public enum PackageFiles {
    /// The package's root directory (this file is Sources/ServerTrustTestSupport/Tools/PackageFiles.swift).
    public static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The path of `relativePath` under the package's root.
    public static func path(_ relativePath: String) -> String {
        root.appendingPathComponent(relativePath).path
    }

    /// The virtual environment's Python interpreter; stops the test process with what to run
    /// when scripts/setup.sh has not made it.
    public static var python: String {
        let venv = path(".venv-tuf/bin/python")
        precondition(FileManager.default.isExecutableFile(atPath: venv), "\(venv) is missing: run scripts/setup.sh (it installs python-tuf)")
        return venv
    }

    /// The `servertrust` binary SwiftPM built with the tests: the test bundle sits in the same
    /// build folder as the executables (or one level below it), else the default debug folder.
    public static let servertrustBinary: String = {
        let candidates = [
            Bundle.main.bundleURL.appendingPathComponent("servertrust").path,
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("servertrust").path,
            path(".build/debug/servertrust"),
        ]
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            preconditionFailure("servertrust binary not found; looked at \(candidates)")
        }
        return found
    }()
}
