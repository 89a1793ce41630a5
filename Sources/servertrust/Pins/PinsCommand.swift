import ArgumentParser
import Foundation
import ServerTrust

struct PinsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pins",
        abstract: "Print a server's SPKI pins: as Swift, as sha256/… lines or in curl's form.",
        discussion: """
            Connects like inspect and prints the pins of the validated chain — leaf, intermediates \
            and root. --swift prints a ServerTrustManager entry to paste into an app, with the pins \
            as named constants; add a backup pin (a key you hold offline) before shipping it.

            When the chain does not validate (or is not valid for the host), the pins of the chain \
            as sent are printed with a warning and the exit status is 1: do not pin what you \
            have not verified.

            Exit status: 0 pins of a validated chain, 1 the server fails default validation, \
            2 usage error, 3 the server could not be reached.

            Examples:
              servertrust pins https://api.example.com/ --swift
              servertrust pins https://api.example.com/ --format curl
              servertrust pins https://localhost:8443/ --ca Certificates/sample-root.pem --resolve localhost:8443:127.0.0.1
            """
    )

    /// What to print.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case sha256, curl, swift
    }

    @Argument(help: "An https: URL; only its scheme, host and port are used.")
    var url: String

    @OptionGroup var connection: ConnectionOptions

    @Flag(name: .long, help: "Print a ready-to-paste ServerTrustManager entry (same as --format swift).")
    var swift = false

    @Option(name: .long, help: "sha256 (sha256/… per line), curl (sha256//… per line) or swift.")
    var format: Format?

    @Flag(name: .long, help: "Print the pins, their roles and the Swift snippet as JSON.")
    var json = false

    func validate() throws {
        if swift, let format, format != .swift {
            throw ValidationError("--swift and --format \(format.rawValue) ask for different outputs; pick one.")
        }
    }

    func run() async throws {
        let target = try connection.target(url)
        let result = try await ServerProbe(url: target, method: .head, options: connection).run()
        let pins = ServerPins(result: result)
        if json {
            print(pins.json)
        } else {
            switch swift ? .swift : format ?? .sha256 {
            case .sha256: print(pins.lines(curlForm: false))
            case .curl: print(pins.lines(curlForm: true))
            case .swift: print(pins.swiftSnippet)
            }
        }
        guard pins.isVerified else {
            let failure = [result.observation.chain, result.observation.hostName].compactMap { outcome -> TrustError? in
                if case .failed(let error) = outcome { return error }
                return nil
            }.first
            throw CommandFailure(
                status: CommandFailure.rejected,
                message: TextStyle.standardError.yellow("warning:")
                    + " these pins come from the chain as sent, which fails default validation"
                    + (failure.map { " (\($0.code): \($0.reason))" } ?? "") + "; verify them out of band before pinning them.",
                hints: failure.map { FixHint.lines(for: $0, url: URLRedaction.redacted(target)) } ?? [])
        }
    }
}
