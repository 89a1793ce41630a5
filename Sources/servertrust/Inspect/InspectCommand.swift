import ArgumentParser
import Foundation
import ServerTrust

struct InspectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Connect to a server and show its chains, pins and which default checks pass.",
        discussion: """
            Connects with one HEAD (or GET) of /, reports trust problems without stopping at them, \
            and prints the presented and the validated chain: subject, issuer, validity with days \
            left, names, key, signature algorithm, SPKI pin, SHA-256, OCSP and CRL URLs, the \
            stapled OCSP status, and whether the chain and host checks pass, and the Certificate \
            Transparency SCTs it showed (embedded, TLS extension, stapled): by log ID, or with \
            --ct-log-list verified against their logs and judged by the policy (reported, never \
            enforced).

            Nothing is sent but the request line and standard headers, no redirect is followed and \
            the body is ignored: the connection is accepted whatever the checks say, so that a \
            failing server can still be shown.

            Exit status: 0 every default check passed, 1 the server was inspected and a check \
            failed, 2 usage error, 3 the server could not be reached.

            Examples:
              servertrust inspect https://api.example.com/
              servertrust inspect https://localhost:8443/ --ca Certificates/sample-root.pem --resolve localhost:8443:127.0.0.1
              servertrust inspect https://api.example.com/ --proxy http://127.0.0.1:3128   (what the proxy presents)
              servertrust inspect https://api.example.com/ --json | jq '.validatedChain[].spkiPin'
            """
    )

    @Argument(help: "An https: URL; only its scheme, host and port are used.")
    var url: String

    @OptionGroup var connection: ConnectionOptions

    @Option(name: .long, help: "Request method: HEAD or GET.")
    var method: String = "HEAD"

    @Flag(name: .long, help: "Print the report as JSON.")
    var json = false

    @OptionGroup var ct: CTLogListOptions

    func run() async throws {
        guard let method = ServerProbe.Method(rawValue: method.uppercased()) else {
            throw CommandFailure(status: CommandFailure.usage, message: "error: --method must be HEAD or GET, not \(self.method).")
        }
        let target = try connection.target(url)
        if let problem = ct.problem() { throw CommandFailure(status: CommandFailure.usage, message: "error: \(problem)") }
        let logs: CTLogStore?
        do {
            logs = try ct.loadForCommand().map(CTLogStore.init)
        } catch let error as CommandFailure {
            throw error
        } catch {
            throw CommandFailure(status: CommandFailure.usage, message: "error: --ct-log-list: \((error as? TrustError)?.reason ?? "\(error)")")
        }
        let result = try await ServerProbe(url: target, method: method, options: connection).run()
        let report = InspectionReport(result: result, now: Date(), scts: InspectedSCTs(result.observation, logs: logs))
        print(json ? report.json : report.text(style: .standardOutput))
        if !result.observation.passesDefaultValidation {
            throw CommandFailure(status: CommandFailure.rejected, message: "", hints: json ? [] : report.hints)
        }
    }
}
