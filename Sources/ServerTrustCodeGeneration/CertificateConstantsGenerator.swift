package import Foundation
import ServerTrustCertificates

/// Turns a folder of certificates into one Swift file of constants: for each file its DER in
/// base64 and its SPKI pin, named after the file, so pins are compiled in and nothing is read
/// at run time. A TUF root in the folder (`<name>.tufroot.json`, ``TUFRootConstant``) is
/// verified and compiled in beside them, as `<name>TUFRoot`.
///
/// Shared by `servertrust generate` and the `servertrust-generate` tool that
/// `ServerTrustPinsPlugin` runs, so both write byte-for-byte the same file. The output is
/// deterministic: files sorted by name (UTF-8 byte order), no date, no path, no machine detail.
///
/// ```swift
/// enum Certificates {
///     static let sampleLeafDER = "MIIC…"
///     static let sampleLeafPin = "sha256/…"
///     static let sampleLeaf = PinnedCertificateConstant(fileName: "sample-leaf.pem", …)
///     static let all: [PinnedCertificateConstant] = [sampleLeaf, …]
///     static let updatesTUFRoot = "eyJzaWdu…"    // from updates.tufroot.json
/// }
/// ```
///
/// The generated file imports nothing, so it compiles in any target; the constants are plain
/// strings for `Certificate(base64Encoded:)` and `Pin(_:)` or `.pinnedKeyHashes([…])`.
package struct CertificateConstantsGenerator: Sendable {
    /// The access level of the generated declarations.
    package enum AccessLevel: String, Sendable, CaseIterable {
        case `internal`, `public`
    }

    /// Extensions compiled in, compared case-insensitively. Anything else in the folder (a README,
    /// a script, `chain.pem.txt`) is ignored.
    package static let fileExtensions: Set<String> = ["pem", "der", "cer", "crt"]

    /// The name of the generated struct that describes one certificate, nested in the namespace.
    package static let entryTypeName = "PinnedCertificateConstant"
    /// The name of the generated array of every entry.
    package static let allMemberName = "all"

    /// The generated namespace, an `enum`. Default `Certificates`.
    package let typeName: String
    /// Default `internal`.
    package let accessLevel: AccessLevel

    /// - Throws: ``CodeGenerationError`` when `typeName` is not a plain Swift type name.
    package init(typeName: String = "Certificates", accessLevel: AccessLevel = .internal) throws(CodeGenerationError) {
        guard let first = typeName.first, first.isASCII, first.isLetter || first == "_",
            typeName.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }),
            ConstantName.spelled(typeName) == typeName, typeName != Self.entryTypeName
        else {
            throw CodeGenerationError(file: typeName, reason: "is not usable as the generated type's name; use letters, digits and _, e.g. Certificates", scope: .setting)
        }
        self.typeName = typeName
        self.accessLevel = accessLevel
    }

    /// Whether `fileName` is compiled in: a certificate extension and not a hidden file.
    package static func isCertificateFile(_ fileName: String) -> Bool {
        guard !fileName.hasPrefix("."), let dot = fileName.lastIndex(of: ".") else { return false }
        return fileExtensions.contains(fileName[fileName.index(after: dot)...].lowercased())
    }

    /// Reads and parses every certificate file and TUF root directly in `directory` (not in
    /// subfolders).
    ///
    /// - Parameter now: the time a TUF root's expiry is judged against (default: now).
    /// - Throws: ``CodeGenerationError`` listing every file that fails, or the folder when it
    ///   cannot be read or holds neither a certificate file nor a TUF root.
    package func constants(inDirectory directory: URL, now: Date = Date()) throws(CodeGenerationError) -> GeneratedConstants {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw CodeGenerationError(file: directory.path, reason: "cannot list the folder: \(error.localizedDescription)", scope: .folder)
        }
        var files: [(name: String, contents: [UInt8])] = []
        var problems: [CodeGenerationError.Problem] = []
        for name in names where Self.isCertificateFile(name) || TUFRootConstant.isTUFRootFile(name) {
            let url = directory.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            guard let data = FileManager.default.contents(atPath: url.path) else {
                problems.append(.init(file: name, reason: "cannot be read"))
                continue
            }
            files.append((name, [UInt8](data)))
        }
        guard problems.isEmpty else { throw CodeGenerationError(problems.sorted(by: Self.fileOrder)) }
        guard !files.isEmpty else {
            throw CodeGenerationError(
                file: directory.path,
                reason: "holds no certificate file (\(Self.fileExtensions.sorted().map { "." + $0 }.joined(separator: ", "))) or TUF root (<name>\(TUFRootConstant.fileSuffix)); add one, or do not apply the plugin to this target",
                scope: .folder)
        }
        return try constants(files: files, now: now)
    }

    /// Parses and names in-memory files, sorted by name: a `<name>.tufroot.json` file as a TUF
    /// root, any other as a certificate.
    ///
    /// - Parameter now: the time a TUF root's expiry is judged against (default: now).
    /// - Throws: ``CodeGenerationError`` listing every file that fails to parse or verify and
    ///   every pair of files whose names give the same Swift name.
    package func constants(files: [(name: String, contents: [UInt8])], now: Date = Date()) throws(CodeGenerationError) -> GeneratedConstants {
        var certificates: [CertificateConstant] = []
        var tufRoots: [TUFRootConstant] = []
        var problems: [CodeGenerationError.Problem] = []
        for file in files.sorted(by: { Self.precedes($0.name, $1.name) }) {
            do {
                if TUFRootConstant.isTUFRootFile(file.name) {
                    tufRoots.append(try TUFRootConstant(fileName: file.name, contents: file.contents, now: now))
                } else {
                    certificates.append(try CertificateConstant(fileName: file.name, contents: file.contents))
                }
            } catch {
                problems += error.problems
            }
        }
        let generated = GeneratedConstants(certificates: certificates, tufRoots: tufRoots)
        problems += collisions(in: generated)
        guard problems.isEmpty else { throw CodeGenerationError(problems.sorted(by: Self.fileOrder)) }
        return generated
    }

    /// The Swift source for `generated`, in the order given.
    package func source(for generated: GeneratedConstants) -> String {
        let constants = generated.certificates
        let access = accessLevel.rawValue
        let tufRootCount = generated.tufRoots.count
        let roots = tufRootCount == 0 ? "" : " and \(tufRootCount) TUF root\(tufRootCount == 1 ? "" : "s")"
        let rootsUse = tufRootCount == 0 ? "" : "\n/// A TUF root (`\(typeName).xTUFRoot`) is the base64 of a verified root metadata file."
        var out = """
            // Generated by ServerTrustCodeGeneration (servertrust generate, or the ServerTrustPinsPlugin
            // build plugin) from \(constants.count) certificate file\(constants.count == 1 ? "" : "s")\(roots). Do not edit: change the files and build again.

            /// Certificates compiled into the binary: for each file, its DER encoding in base64 and its
            /// SPKI pin, so no certificate file is read at run time.
            ///
            /// Use `Certificate(base64Encoded: \(typeName).xDER)` for a certificate, and
            /// `\(typeName).xPin` in `.pinnedKeyHashes([…])`.\(rootsUse)
            \(access) enum \(typeName) {
                /// One compiled-in certificate.
                \(access) struct \(Self.entryTypeName): Hashable, Sendable {
                    /// The file it came from, e.g. `sample-leaf.pem`.
                    \(access) let fileName: String
                    /// The subject distinguished name (RFC 2253).
                    \(access) let subject: String
                    /// The DER encoding in base64.
                    \(access) let derBase64: String
                    /// The SPKI pin, `sha256/<base64>`.
                    \(access) let pin: String
                }

            """
        for constant in constants {
            let certificate = constant.certificate
            let name = ConstantName.spelled(constant.name)
            out += """

                    // \(comment(constant.fileName))
                    //   subject  \(comment(certificate.subject))
                    //   issuer   \(comment(certificate.issuer))
                    //   expires  \(certificate.notValidAfter.formatted(.iso8601))
                    //   SHA-256  \(certificate.sha256Fingerprint.map { String(format: "%02x", $0) }.joined())
                    /// `\(comment(constant.fileName))` as base64 DER.
                    \(access) static let \(constant.derConstantName) = \(literal(constant.derBase64))
                    /// The SPKI pin of `\(comment(constant.fileName))`.
                    \(access) static let \(constant.pinConstantName) = \(literal(constant.pin.description))
                    \(access) static let \(name) = \(Self.entryTypeName)(
                        fileName: \(literal(constant.fileName)), subject: \(literal(certificate.subject)),
                        derBase64: \(constant.derConstantName), pin: \(constant.pinConstantName))

                """
        }
        out += """

                /// Every certificate above, sorted by file name.
                \(access) static let \(Self.allMemberName): [\(Self.entryTypeName)] = [\(constants.map { ConstantName.spelled($0.name) }.joined(separator: ", "))]

            """
        for tufRoot in generated.tufRoots {
            let signed = tufRoot.root.metadata.signed
            let threshold = signed.roles[.root].map { "\($0.threshold) of \($0.keyIDs.count)" } ?? "?"
            out += """

                    // \(comment(tufRoot.fileName))
                    //   TUF root version \(signed.version), expires \(comment(signed.common.expiresText)), root threshold \(threshold) keys
                    //   SHA-256  \(tufRoot.sha256Hex)
                    /// `\(comment(tufRoot.fileName))`: a TUF trusted root, verified when this file was generated, as
                    /// the base64 of its exact bytes. Start from it with ServerTrustTUF's
                    /// `Updater(store:initialRoot: InitialRoot(base64: \(typeName).\(tufRoot.constantName)), …)`.
                    \(access) static let \(tufRoot.constantName) = \(literal(tufRoot.base64))

                """
        }
        out += "}\n"
        return out
    }

    /// Reads `directory` and returns the Swift source for it.
    package func source(forDirectory directory: URL) throws(CodeGenerationError) -> String {
        source(for: try constants(inDirectory: directory))
    }

    // MARK: - Helpers

    /// Every member name used twice (by two files, or by a file and a fixed member), as problems.
    private func collisions(in generated: GeneratedConstants) -> [CodeGenerationError.Problem] {
        var owners: [String: String] = [Self.allMemberName: "", Self.entryTypeName: ""]
        var problems: [CodeGenerationError.Problem] = []
        let members =
            generated.certificates.map { ($0.fileName, [$0.name, $0.derConstantName, $0.pinConstantName]) }
            + generated.tufRoots.map { ($0.fileName, [$0.constantName]) }
        for (fileName, names) in members.sorted(by: { Self.precedes($0.0, $1.0) }) {
            for member in names {
                if let owner = owners[member] {
                    let other = owner.isEmpty ? "the generated member \(member)" : "\(owner) (also \(member))"
                    problems.append(.init(file: fileName, reason: "its Swift name \(member) clashes with \(other); rename one of the files"))
                    break
                }
                owners[member] = fileName
            }
        }
        return problems
    }

    private static func precedes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }
    private static func fileOrder(_ a: CodeGenerationError.Problem, _ b: CodeGenerationError.Problem) -> Bool { precedes(a.file, b.file) }

    /// A Swift string literal for `text`, escaped.
    private func literal(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: out += "\\u{\(String(scalar.value, radix: 16))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// `text` safe inside a `//` comment: no line breaks or other control characters.
    private func comment(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))
    }
}
