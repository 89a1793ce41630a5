import ArgumentParser
import Foundation
import ServerTrust
import ServerTrustCodeGeneration

struct GenerateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Compile a folder of certificates (DER and SPKI pin) and TUF roots into Swift constants.",
        discussion: """
            Every .pem, .der, .cer and .crt file of DIR (one certificate each) becomes \
            `static let <name>DER` (base64) and `static let <name>Pin` (sha256/…) in an enum, named \
            after the file: sample-leaf.pem → sampleLeafDER, sampleLeafPin. Output is sorted and \
            deterministic. A TUF root metadata file named <name>.tufroot.json is verified as the TUF \
            client verifies its trusted root (signed by a threshold of its own root keys, usable key \
            types, no private key) and becomes `static let <name>TUFRoot` (its exact bytes in base64, \
            for ServerTrustTUF's InitialRoot(base64:)); an expired root is a warning. The \
            ServerTrustPinsPlugin build plugin runs the same generator on every build; use this \
            command to generate the file once, or to check a folder.

            Exit status: 0 written, 1 a file cannot be compiled in (each listed with the reason), \
            2 usage error or unreadable folder.

            Examples:
              servertrust generate Certificates -o Sources/App/PinnedCertificates.swift
              servertrust generate Certificates --type-name PinnedCertificates --public -o Pins.swift
              servertrust generate Certificates --json      (check the folder, list names and pins)
            """
    )

    @Argument(help: ArgumentHelp("The folder of certificates.", valueName: "DIR"))
    var directory: String

    @Option(name: [.short, .long], help: ArgumentHelp("The Swift file to write; standard output when omitted.", valueName: "FILE.swift"))
    var output: String?

    @Option(name: .long, help: "The name of the generated enum.")
    var typeName = "Certificates"

    @Flag(name: .customLong("public"), help: "Make the generated declarations public.")
    var isPublic = false

    @Flag(name: .long, help: "Print what was generated as JSON (the source too, when there is no -o).")
    var json = false

    func run() throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CommandFailure(status: CommandFailure.usage, message: "error: \(directory) is not a folder.")
        }
        let generated: GeneratedConstants
        let generator: CertificateConstantsGenerator
        do {
            generator = try CertificateConstantsGenerator(typeName: typeName, accessLevel: isPublic ? .public : .internal)
            generated = try generator.constants(inDirectory: URL(fileURLWithPath: directory))
        } catch {
            // `error` is a CodeGenerationError (typed throws). A bad file is the input failing the check (1); a bad folder or setting is usage (2).
            let onlyFiles = error.problems.allSatisfy { $0.scope == .file }
            throw CommandFailure(
                status: onlyFiles ? CommandFailure.rejected : CommandFailure.usage,
                message: error.problems.map { problem in
                    let subject = problem.scope == .file ? (directory as NSString).appendingPathComponent(problem.file) : problem.file
                    return "error: \(subject): \(problem.reason)"
                }.joined(separator: "\n"))
        }
        for warning in generated.warnings {
            FileHandle.standardError.write(Data("warning: \((directory as NSString).appendingPathComponent(warning.file)): \(warning.reason)\n".utf8))
        }
        let constants = generated.certificates
        let source = generator.source(for: generated)
        if let output {
            do {
                if FileManager.default.contents(atPath: output) != Data(source.utf8) {
                    try Data(source.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
                }
            } catch {
                throw CommandFailure(status: CommandFailure.usage, message: "error: cannot write \(output): \(error.localizedDescription)")
            }
        }
        if json {
            print(JSONText.render(
                GenerateOutput(directory: directory, typeName: typeName, output: output, generated: generated, source: source)))
        } else if let output {
            let style = TextStyle.standardOutput
            let roots = generated.tufRoots
            let rootCount = roots.isEmpty ? "" : " and \(roots.count) TUF root\(roots.count == 1 ? "" : "s")"
            print("Wrote \(output): \(constants.count) certificate\(constants.count == 1 ? "" : "s")\(rootCount) from \(directory) as \(typeName).")
            let width = (constants.map(\.name.count) + roots.map(\.constantName.count)).max() ?? 0
            for constant in constants {
                print("  \(constant.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(style.bold(constant.pin.description))  \(constant.certificate.subject)  \(style.dim("(\(constant.fileName))"))")
            }
            for root in roots {
                let signed = root.root.metadata.signed
                print("  \(root.constantName.padding(toLength: width, withPad: " ", startingAt: 0))  TUF root version \(signed.version), expires \(signed.common.expiresText)  \(style.dim("(\(root.fileName))"))")
            }
        } else {
            print(source, terminator: "")
        }
    }
}

/// The JSON object of `generate --json`: `directory`, `typeName`, `output` (the file written,
/// or null), `certificates` (sorted by file name: `{file, name, derConstant, pinConstant, pin,
/// subject, notAfter}`), `tufRoots` (sorted by file name: `{file, constant, version, expires,
/// sha256, warnings}`) and, when nothing was written, `source` (the generated Swift).
struct GenerateOutput: Encodable {
    struct Entry: Encodable {
        let file: String
        let name: String
        let derConstant: String
        let pinConstant: String
        let pin: String
        let subject: String
        let notAfter: Date
    }

    struct TUFRootEntry: Encodable {
        let file: String
        let constant: String
        let version: Int64
        let expires: String
        let sha256: String
        let warnings: [String]
    }

    let directory: String
    let typeName: String
    let output: String?
    let certificates: [Entry]
    let tufRoots: [TUFRootEntry]
    let source: String?

    init(directory: String, typeName: String, output: String?, generated: GeneratedConstants, source: String) {
        self.directory = directory
        self.typeName = typeName
        self.output = output
        tufRoots = generated.tufRoots.map { root in
            TUFRootEntry(
                file: root.fileName, constant: root.constantName, version: root.root.metadata.signed.version,
                expires: root.root.metadata.signed.common.expiresText, sha256: root.sha256Hex, warnings: root.warnings)
        }
        certificates = generated.certificates.map { constant in
            Entry(
                file: constant.fileName, name: constant.name, derConstant: constant.derConstantName,
                pinConstant: constant.pinConstantName, pin: constant.pin.description, subject: constant.certificate.subject,
                notAfter: constant.certificate.notValidAfter)
        }
        self.source = output == nil ? source : nil
    }

    private enum CodingKeys: String, CodingKey {
        case directory, typeName, output, certificates, tufRoots, source
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(directory, forKey: .directory)
        try container.encode(typeName, forKey: .typeName)
        try container.encode(output, forKey: .output)
        try container.encode(certificates, forKey: .certificates)
        try container.encode(tufRoots, forKey: .tufRoots)
        try container.encodeIfPresent(source, forKey: .source)
    }
}
