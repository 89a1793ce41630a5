import ArgumentParser
import Foundation
import ServerTrust

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify a certificate chain offline, as a pinned client would.",
        discussion: """
            Exit status: 0 trusted, 1 rejected (reason on standard error, or a JSON object on \
            standard output with --json), 2 usage error or unreadable input.

            --batch verifies many chains in one process, for test harnesses (the conformance \
            runner): each line of standard input is one verification, a JSON array of the \
            arguments above; each line of standard output is its result, a JSON object \
            {"status": exit status, "stdout": text, "stderr": text}, exactly what a \
            `servertrust verify` with those arguments would have exited with and printed.

            Examples:
              servertrust verify --chain chain.pem --roots roots.pem --host api.example.com
              servertrust verify --chain chain.pem --roots roots.pem --host 10.0.0.1 --time 2026-01-01T00:00:00Z
              servertrust verify --chain chain.pem --roots ca.pem --crl ca.crl --pin sha256/AAAA…=
              servertrust verify --chain chain.pem --roots ca.pem --ocsp-response leaf.ocsp --require-ocsp
              servertrust verify --chain chain.pem --roots ca.pem --host api.example.com --ct-log-list log_list.json --require-ct
              echo '["--chain", "chain.pem", "--roots", "roots.pem"]' | servertrust verify --batch
            """
    )

    // Optional only so that --batch can go without them; validate() requires both otherwise.
    @Option(name: .long, help: ArgumentHelp("PEM bundle (or DER file) presented by the server, leaf first.", valueName: "FILE"))
    var chain: String?

    @Option(name: .long, help: ArgumentHelp("Trust anchors, PEM bundle or DER; need not be self-signed.", valueName: "FILE"))
    var roots: String?

    // `.unconditional`: a reference host may begin with "-" (`-example.com`), which is a name to
    // match, not an option.
    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Host name or IP address the leaf must be valid for.", valueName: "NAME|IP"))
    var host: String?

    @Option(name: [.long, .customLong("at")], help: ArgumentHelp("Validation time (RFC 3339), default now; SCTs issued after it are refused.", valueName: "RFC3339"))
    var time: String?

    @OptionGroup var ct: CTLogListOptions

    @Flag(name: .customLong("require-ct"), help: "Reject unless the leaf meets the Certificate Transparency policy against --ct-log-list.")
    var requireCT = false

    @Option(name: .long, help: ArgumentHelp("A CRL (DER or PEM); turns on CRL checking for the whole chain. Repeatable.", valueName: "FILE"))
    var crl: [String] = []

    @Option(name: .long, help: ArgumentHelp("SPKI pin sha256/<base64>; any certificate of the validated chain may match, or an anchor above it that issued its top. Repeatable.", valueName: "PIN"))
    var pin: [String] = []

    @Option(name: .customLong("ocsp-response"), help: ArgumentHelp("A DER OCSP response for the leaf, treated as stapled and judged at --time. REVOKED rejects; UNKNOWN warns unless --require-ocsp.", valueName: "FILE"))
    var ocspResponse: String?

    @Flag(name: .customLong("require-ocsp"), help: "Hard-fail: reject unless a verified, fresh OCSP response says GOOD (also implied by a must-staple leaf when a response is checked).")
    var requireOCSP = false

    @Option(name: .customLong("ocsp-max-age"), help: ArgumentHelp("Oldest OCSP response accepted, by thisUpdate, whether or not it has a nextUpdate. Default 604800 (7 days).", valueName: "SECONDS"))
    var ocspMaxAge: Int?

    @Flag(name: .long, help: "Print the result as JSON on standard output.")
    var json = false

    @Flag(name: .long, help: "Read one verification a line from standard input (a JSON array of arguments); write one result a line (see below).")
    var batch = false

    func validate() throws {
        if batch {
            let others = chain != nil || roots != nil || host != nil || time != nil || !crl.isEmpty || !pin.isEmpty
                || ocspResponse != nil || requireOCSP || ocspMaxAge != nil || json || !ct.isEmpty || requireCT
            if others { throw ValidationError("--batch takes no other option: each line of standard input holds one verification's.") }
            return
        }
        if chain == nil { throw ValidationError("Missing expected argument '--chain <FILE>'") }
        if roots == nil { throw ValidationError("Missing expected argument '--roots <FILE>'") }
        if let problem = ct.problem(requireCT: requireCT) { throw ValidationError(problem) }
    }

    func run() throws {
        if batch {
            VerifyBatch.run()
            return
        }
        let output = try verify()
        if !output.standardError.isEmpty { FileHandle.standardError.write(Data(output.standardError.utf8)) }
        if !output.standardOutput.isEmpty { print(output.standardOutput, terminator: "") }
        if output.status != 0 { throw CommandFailure(status: output.status, message: "") }
    }

    /// What this verification prints and the status it exits with (0 trusted, 1 rejected); a
    /// ``CommandFailure`` for input that cannot be used.
    func verify() throws -> VerifyBatch.Output {
        guard let chain, let roots else { throw CommandFailure(status: CommandFailure.usage, message: "error: --chain and --roots are required.") }
        var input: VerificationInput
        do {
            input = try VerificationInput(
                chainPath: chain, rootsPath: roots, crlPaths: crl, pins: pin, time: time,
                ocspResponsePath: ocspResponse, requireOCSP: requireOCSP, ocspMaximumAge: ocspMaxAge)
            if let list = try ct.load() {
                try input.checkCertificateTransparency(list, required: requireCT)
            }
        } catch let error as TrustError {
            throw CommandFailure(status: CommandFailure.usage, message: "error: \(error.reason)")
        }
        let report = input.verification.verify(host: host)
        var output = VerifyBatch.Output(status: report.failure == nil ? 0 : CommandFailure.rejected)
        for warning in VerificationInput.warnings(for: report) { output.standardError += "warning: \(warning)\n" }
        if json {
            output.standardOutput += JSONText.render(report) + "\n"
        } else if let failure = report.failure {
            output.standardError += "rejected: \(failure)\n"
        } else {
            output.standardOutput += "trusted: \(report.evaluator) accepted \(report.validatedChain.count)-certificate chain ending at \(report.validatedChain.last?.subject ?? "?")\n"
            for match in report.matchedPins ?? [] {
                output.standardOutput += "matched pin: \(match.pin): \(match.subject) (depth \(match.depth)\(match.anchorExtension ? ", an anchor above the validated path" : ""))\n"
            }
            if input.verification.staple != nil {
                output.standardOutput += "revocation: \(report.revocation.text)\n"
            }
            if let ct = report.certificateTransparency {
                output.standardOutput += CTText.lines(ct).map { $0 + "\n" }.joined()
            }
        }
        return output
    }
}

/// `servertrust verify --batch`: many verifications in one process. Each line is parsed as the
/// arguments of `servertrust verify` and run by the same ``VerifyCommand/verify()``; errors map
/// to the exit status and message `ServerTrustCommand.main` gives them. Nothing else here
/// decides anything.
enum VerifyBatch {
    struct Output: Encodable {
        var status: Int32
        var standardOutput = ""
        var standardError = ""

        enum CodingKeys: String, CodingKey {
            case status
            case standardOutput = "stdout"
            case standardError = "stderr"
        }
    }

    static func run() {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        while let line = readLine(strippingNewline: true) {
            let output: Output
            if let arguments = try? JSONDecoder().decode([String].self, from: Data(line.utf8)) {
                output = verify(arguments)
            } else {
                output = Output(status: CommandFailure.usage, standardError: "error: a --batch line must be a JSON array of strings, the arguments of one `servertrust verify`.\n")
            }
            var text = (try? encoder.encode(output)) ?? Data(#"{"status":2,"stderr":"error: unencodable result\n","stdout":""}"#.utf8)
            text.append(UInt8(ascii: "\n"))
            FileHandle.standardOutput.write(text)
        }
    }

    private static func verify(_ arguments: [String]) -> Output {
        do {
            guard let command = try ServerTrustCommand.parseAsRoot(["verify"] + arguments) as? VerifyCommand, !command.batch else {
                return Output(status: CommandFailure.usage, standardError: "error: a --batch line must hold the arguments of one `servertrust verify`, without --batch.\n")
            }
            return try command.verify()
        } catch let failure as CommandFailure {
            return Output(status: failure.status, standardError: failure.message.isEmpty ? "" : failure.message + "\n")
        } catch {
            let code = ServerTrustCommand.exitCode(for: error)
            if code == .success { return Output(status: 0, standardOutput: ServerTrustCommand.fullMessage(for: error) + "\n") }  // --help
            let status = code == .failure || code == .validationFailure ? CommandFailure.usage : code.rawValue
            return Output(status: status, standardError: ServerTrustCommand.fullMessage(for: error) + "\n")
        }
    }
}
