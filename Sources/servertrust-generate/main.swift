import Foundation
import ServerTrustCodeGeneration

// The tool ServerTrustPinsPlugin runs on every build:
// `servertrust-generate INPUT_DIR OUTPUT_FILE [--stamp FILE]`. It compiles certificates and
// verifies and compiles TUF roots (`*.tufroot.json`); a file that fails fails the build.
// It exists apart from `servertrust` so the plugin does not depend on the executable it is
// applied to (a dependency cycle); both use the same generator, so their outputs are identical.

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 2 || (arguments.count == 4 && arguments[2] == "--stamp") else {
    FileHandle.standardError.write(Data("usage: servertrust-generate INPUT_DIR OUTPUT_FILE.swift [--stamp FILE]\n".utf8))
    exit(2)
}
let input = URL(fileURLWithPath: arguments[0])
let output = URL(fileURLWithPath: arguments[1])
let stamp = arguments.count == 4 ? URL(fileURLWithPath: arguments[3]) : nil

do {
    let generator = try CertificateConstantsGenerator()
    let generated = try generator.constants(inDirectory: input)
    // `path: warning: reason`, like the errors below: the build shows it and goes on.
    for warning in generated.warnings {
        FileHandle.standardError.write(Data("\(input.appendingPathComponent(warning.file).path): warning: \(warning.reason)\n".utf8))
    }
    let source = generator.source(for: generated)
    // Rewrite only on change, so an unchanged folder does not recompile the target.
    if FileManager.default.contents(atPath: output.path) != Data(source.utf8) {
        try Data(source.utf8).write(to: output, options: .atomic)
    }
    // The stamp is an input of this very command: rewriting it makes the next build run the
    // command again, which is how a certificate edited in place is noticed even when it was
    // added after the build was planned (the build plan lists only the files present then).
    if let stamp { try Data(Date().timeIntervalSince1970.description.utf8).write(to: stamp) }
} catch let error as CodeGenerationError {
    // `path: error: reason` is the form build logs and editors recognise as a diagnostic.
    for problem in error.problems {
        let path = problem.scope == .file ? input.appendingPathComponent(problem.file).path : problem.file
        FileHandle.standardError.write(Data("\(path): error: \(problem.reason)\n".utf8))
    }
    exit(1)
} catch {
    FileHandle.standardError.write(Data("\(output.path): error: cannot write the generated file: \(error.localizedDescription)\n".utf8))
    exit(1)
}
