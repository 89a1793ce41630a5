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

            Examples:
              servertrust verify --chain chain.pem --roots roots.pem --host api.example.com
              servertrust verify --chain chain.pem --roots roots.pem --host 10.0.0.1 --time 2026-01-01T00:00:00Z
              servertrust verify --chain chain.pem --roots ca.pem --crl ca.crl --pin sha256/AAAA…=
              servertrust verify --chain chain.pem --roots ca.pem --ocsp-response leaf.ocsp --require-ocsp
            """
    )

    @Option(name: .long, help: ArgumentHelp("PEM bundle (or DER file) presented by the server, leaf first.", valueName: "FILE"))
    var chain: String

    @Option(name: .long, help: ArgumentHelp("Trust anchors, PEM bundle or DER; need not be self-signed.", valueName: "FILE"))
    var roots: String

    // `.unconditional`: a reference host may begin with "-" (`-example.com`), which is a name to
    // match, not an option.
    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Host name or IP address the leaf must be valid for.", valueName: "NAME|IP"))
    var host: String?

    @Option(name: .long, help: ArgumentHelp("Validation time (RFC 3339), default now.", valueName: "RFC3339"))
    var time: String?

    @Option(name: .long, help: ArgumentHelp("A CRL (DER or PEM); turns on CRL checking for the whole chain. Repeatable.", valueName: "FILE"))
    var crl: [String] = []

    @Option(name: .long, help: ArgumentHelp("SPKI pin sha256/<base64>; any certificate of the validated chain may match. Repeatable.", valueName: "PIN"))
    var pin: [String] = []

    @Option(name: .customLong("ocsp-response"), help: ArgumentHelp("A DER OCSP response for the leaf, treated as stapled and judged at --time. REVOKED rejects; UNKNOWN warns unless --require-ocsp.", valueName: "FILE"))
    var ocspResponse: String?

    @Flag(name: .customLong("require-ocsp"), help: "Hard-fail: reject unless a verified, fresh OCSP response says GOOD (also implied by a must-staple leaf when a response is checked).")
    var requireOCSP = false

    @Option(name: .customLong("ocsp-max-age"), help: ArgumentHelp("Oldest OCSP response accepted, by thisUpdate, whether or not it has a nextUpdate. Default 604800 (7 days).", valueName: "SECONDS"))
    var ocspMaxAge: Int?

    @Flag(name: .long, help: "Print the result as JSON on standard output.")
    var json = false

    func run() throws {
        let input: VerificationInput
        do {
            input = try VerificationInput(
                chainPath: chain, rootsPath: roots, crlPaths: crl, pins: pin, time: time,
                ocspResponsePath: ocspResponse, requireOCSP: requireOCSP, ocspMaximumAge: ocspMaxAge)
        } catch let error as TrustError {
            throw CommandFailure(status: CommandFailure.usage, message: "error: \(error.reason)")
        }
        let report = input.verification.verify(host: host)
        for warning in VerificationInput.warnings(for: report) { FileHandle.standardError.write(Data("warning: \(warning)\n".utf8)) }
        if json {
            print(JSONText.render(report))
        } else if let failure = report.failure {
            FileHandle.standardError.write(Data(("rejected: \(failure)\n").utf8))
        } else {
            print("trusted: \(report.evaluator) accepted \(report.validatedChain.count)-certificate chain ending at \(report.validatedChain.last?.subject ?? "?")")
            if input.verification.staple != nil {
                print("revocation: \(report.revocation.text)")
            }
        }
        if report.failure != nil { throw CommandFailure(status: CommandFailure.rejected, message: "") }
    }
}
