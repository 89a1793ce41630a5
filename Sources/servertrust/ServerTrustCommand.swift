import ArgumentParser
import Foundation

@main
struct ServerTrustCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "servertrust",
        abstract: "Check TLS server trust the way a pinned ServerTrust client does.",
        discussion: """
            Exit status: 0 trusted / success, 1 trust rejected, 2 usage error or unreadable input, \
            3 other transfer error.
            """,
        subcommands: [VerifyCommand.self, FetchCommand.self]
    )

    /// Maps parse and validation errors to exit status 2 (ArgumentParser's default is 64), and
    /// our own ``CommandFailure`` to its status.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let failure as CommandFailure {
            if !failure.message.isEmpty { FileHandle.standardError.write(Data((failure.message + "\n").utf8)) }
            Foundation.exit(failure.status)
        } catch {
            let code = exitCode(for: error)
            if code == .success { exit(withError: error) }
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            Foundation.exit(code == .failure || code == .validationFailure ? CommandFailure.usage : code.rawValue)
        }
    }
}

/// An exit with a status and a message for standard error.
struct CommandFailure: Error {
    static let rejected: Int32 = 1
    static let usage: Int32 = 2
    static let transfer: Int32 = 3

    let status: Int32
    let message: String
}
