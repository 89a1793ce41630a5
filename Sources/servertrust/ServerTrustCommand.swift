import ArgumentParser
import Foundation
import Logging

@main
struct ServerTrustCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "servertrust",
        abstract: "Check TLS server trust the way a pinned ServerTrust client does.",
        discussion: """
            Exit status: 0 trusted / success, 1 trust rejected, 2 usage error or unreadable input, \
            3 other transfer error. Colour only on a terminal, never with NO_COLOR set; every \
            command takes --json.

            Examples:
              servertrust demo
              servertrust inspect https://api.example.com/
              servertrust pins https://api.example.com/ --swift
              servertrust fetch https://api.example.com/v1/status --pin sha256/AAAA…=
              servertrust verify --chain chain.pem --roots roots.pem --host api.example.com
              servertrust generate Certificates -o Sources/App/PinnedCertificates.swift
              servertrust audit --policy pins.json --warn-days 45
              servertrust updates --metadata-dir meta --metadata-url https://tuf.example.com/metadata refresh
            """,
        subcommands: [
            DemoCommand.self, InspectCommand.self, PinsCommand.self, FetchCommand.self, VerifyCommand.self,
            GenerateCommand.self, KeysCommand.self, AuditCommand.self, UpdatesCommand.self, PurchasesCommand.self,
        ]
    )

    /// Maps parse and validation errors to exit status 2 (ArgumentParser's default is 64) — 1
    /// for `updates`, whose protocol wants 1 for any failure — and our own ``CommandFailure`` to
    /// its status.
    static func main() async {
        // Every command prints what went wrong itself (standard error or --json); the library's
        // swift-log lines would repeat it in another format.
        LoggingSystem.bootstrap { _ in SwiftLogNoOpLogHandler() }
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            // Written out now, not by exit's stdio flush: a sanitizer's exit handler (LeakSanitizer)
            // may end the process before that flush, and the output would be lost with it.
            fflush(nil)  // every output stream (stdout is a C global Swift 6 will not read here)
        } catch let failure as CommandFailure {
            fflush(nil)
            if !failure.message.isEmpty { StandardError.write(highlightingErrorPrefix(failure.message)) }
            Foundation.exit(failure.status)
        } catch {
            let code = exitCode(for: error)
            if code == .success { exit(withError: error) }
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            // `updates` speaks the tuf-conformance client protocol, which wants exactly 1 for any
            // failure, an unparsable command line included (its documented exception to 0/1/2/3).
            let updates = CommandLine.arguments.dropFirst().first == UpdatesCommand.configuration.commandName
            Foundation.exit(updates ? CommandFailure.rejected : code == .failure || code == .validationFailure ? CommandFailure.usage : code.rawValue)
        }
    }
}

/// `error:` in red when standard error is a terminal.
private func highlightingErrorPrefix(_ message: String) -> String {
    guard message.hasPrefix("error:") else { return message }
    return TextStyle.standardError.red("error:") + message.dropFirst("error:".count)
}

/// An exit with a status and a message for standard error.
struct CommandFailure: Error {
    static let rejected: Int32 = 1
    static let usage: Int32 = 2
    static let transfer: Int32 = 3

    let status: Int32
    let message: String

    init(status: Int32, message: String) {
        self.status = status
        self.message = message
    }

    /// A message followed by `hint:` lines that say how to fix the problem.
    init(status: Int32, message: String, hints: [String]) {
        self.init(status: status, message: ([message].filter { !$0.isEmpty } + FixHint.format(hints)).joined(separator: "\n"))
    }
}
