import Foundation
import PackagePlugin

/// Compiles the certificates of a `Certificates` folder into Swift constants for the target it
/// is applied to: for each `.pem`, `.der`, `.cer` and `.crt` file, its DER in base64 and its
/// SPKI pin (`Certificates.sampleLeafDER`, `Certificates.sampleLeafPin`), so pins live in the
/// binary and no certificate file is read at run time.
///
/// A TUF root metadata file in the same folder, named `<name>.tufroot.json`, is verified as the
/// TUF client verifies the root it starts from (ServerTrustTUF's parser, `_type` root, signed by
/// a threshold of its own root keys; every role's threshold reachable with supported key types;
/// no private key) and compiled in as `Certificates.<name>TUFRoot`, its exact bytes in base64,
/// for `InitialRoot(base64:)`. An expired root builds with a warning.
///
/// The folder is the target's own `Certificates/` when it has one (list it in the target's
/// `exclude:`, or SwiftPM warns about unhandled files), else the package's `Certificates/`.
/// A file that does not parse or verify fails the build with its name and the reason.
///
/// The command runs on every build (a few milliseconds) and rewrites the Swift file only when
/// it changes, so an unchanged folder recompiles nothing. Declaring the folder's files as inputs
/// instead would not be enough: SwiftPM plans the build once and re-plans only when sources or
/// the manifest change, so a certificate added later would not be an input — its edits would go
/// unnoticed — and one removed later would be a missing input that fails every build. Running
/// every time, the tool reads the folder as it is now; it rewrites a stamp file that is the
/// command's only declared input, which is what makes the next build run it again.
///
/// The work is done by the `servertrust-generate` tool, built from the same generator as
/// `servertrust generate`, so both produce the same file.
@main
struct ServerTrustPinsPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        guard target is any SourceModuleTarget else { return [] }
        let folder = try certificateFolder(target: target, package: context.package)
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("PinnedCertificates.swift")
        let stamp = context.pluginWorkDirectoryURL.appendingPathComponent("PinnedCertificates.stamp")
        if !FileManager.default.fileExists(atPath: stamp.path) {
            try Data().write(to: stamp)
        }
        return [
            .buildCommand(
                displayName: "Compiling the certificates and TUF roots of \(folder.path) into Swift constants",
                executable: try context.tool(named: "servertrust-generate").url,
                arguments: [folder.path, output.path, "--stamp", stamp.path],
                inputFiles: [stamp],
                outputFiles: [output])
        ]
    }

    private func certificateFolder(target: any Target, package: Package) throws -> URL {
        let candidates = [
            target.directoryURL.appendingPathComponent("Certificates"),
            package.directoryURL.appendingPathComponent("Certificates"),
        ]
        for candidate in candidates {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), isDirectory.boolValue {
                return candidate
            }
        }
        throw PluginFailure(
            "ServerTrustPinsPlugin found no Certificates folder for target \(target.name): create "
                + candidates.map(\.path).joined(separator: " or ") + " with the certificates (and *.tufroot.json TUF roots) to compile in.")
    }
}

struct PluginFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
