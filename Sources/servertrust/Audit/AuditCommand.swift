import ArgumentParser
import Foundation
import ServerTrust
import ServerTrustHTTP

struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Check every host of a policy file against its live server, before a rotation reaches users.",
        discussion: """
            For each host of the policy file: connects (HEAD /), judges the live chain with the \
            host's policy today and --warn-days from now, and reports the matching pins, whether \
            a backup pin exists, and the days until each pin, pin set and certificate expires. \
            Wildcard patterns are probed only through --probe PATTERN=HOST. Meant for a daily CI job.

            Exit status: 0 every host passes today and at the horizon; 1 a host fails now or \
            within --warn-days; 2 usage error or invalid policy file; 3 a host could not be reached.

            Examples:
              servertrust audit --policy pins.json --warn-days 45
              servertrust audit --policy pins.json --probe '*.example.com=www.example.com' --json
            """
    )

    @Option(name: .long, help: ArgumentHelp("The policy file (JSON).", valueName: "FILE"))
    var policy: String

    @Option(name: .long, help: "Fail when a host's policy would reject its live chain this many days from now.")
    var warnDays = 30

    @Option(name: .long, help: ArgumentHelp("The host to connect to for a wildcard pattern. Repeatable.", valueName: "PATTERN=HOST"))
    var probe: [String] = []

    @Option(name: .long, help: "The port to connect to.")
    var port = 443

    @Option(name: .long, help: ArgumentHelp("Audit as of this date instead of now (ISO 8601, e.g. 2027-06-01T00:00:00Z), to rehearse a date.", valueName: "DATE"))
    var at: String?

    @OptionGroup var connection: ConnectionOptions

    @Flag(name: .long, help: "Print the result as JSON.")
    var json = false

    func run() async throws {
        guard (0...3650).contains(warnDays) else {
            throw CommandFailure(status: CommandFailure.usage, message: "error: --warn-days must be 0…3650.")
        }
        guard (1...65535).contains(port) else { throw CommandFailure(status: CommandFailure.usage, message: "error: --port must be 1…65535.") }
        let now: Date
        if let at {
            guard let date = try? Date(at, strategy: Date.ISO8601FormatStyle()) else {
                throw CommandFailure(status: CommandFailure.usage, message: "error: --at \(at.debugDescription) is not an ISO 8601 date-time with a time zone.")
            }
            now = date
        } else {
            now = Date()
        }
        let file: TrustPolicyFile
        let anchors: TrustAnchors
        var probes: [HostPattern: String] = [:]
        do {
            file = try TrustPolicyFile(contentsOf: URL(fileURLWithPath: policy))
            anchors = try connection.ca.map { try TrustAnchors(contentsOfFile: $0) } ?? TrustAnchors.system()
            for entry in probe {
                let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2, !parts[1].isEmpty else {
                    throw CommandFailure(status: CommandFailure.usage, message: "error: --probe \(entry.debugDescription) is not PATTERN=HOST.")
                }
                let pattern = try HostPattern(parts[0])
                guard pattern.matches(parts[1]) else {
                    throw CommandFailure(status: CommandFailure.usage, message: "error: --probe: \(parts[1]) is not covered by \(pattern).")
                }
                probes[pattern] = HostName.normalize(parts[1])
            }
        } catch let error as TrustError {
            throw CommandFailure(status: CommandFailure.usage, message: "error: \(error.reason)")
        }

        var audits: [TrustAudit.HostReport] = []
        for host in file.hosts {
            audits.append(await audit(host, probeHost: probes[host.pattern], anchors: anchors, now: now))
        }
        if json {
            print(JSONText.render(TrustAudit.Report(policy: policy, date: now, warnDays: warnDays, hosts: audits)))
        } else {
            for audit in audits { audit.lines.forEach { print($0) } }
        }
        if audits.contains(where: \.status.isFailure) { throw CommandFailure(status: CommandFailure.rejected, message: "") }
        if audits.contains(where: { $0.status == .unreachable }) { throw CommandFailure(status: CommandFailure.transfer, message: "") }
    }

    private func audit(_ host: TrustPolicyFile.Host, probeHost: String?, anchors: TrustAnchors, now: Date) async -> TrustAudit.HostReport {
        let name: String
        switch host.pattern.kind {
        case .exact, .ipAddress:
            name = probeHost ?? host.pattern.suffix
        default:
            guard let probeHost else {
                return .skipped(host, note: "a wildcard pattern; name a host to probe with --probe '\(host.pattern)=HOST'")
            }
            name = probeHost
        }
        let authority = name.contains(":") ? "[\(name)]" : name
        guard let url = URL(string: "https://\(authority):\(port)/") else {
            return .unreachable(host, host: name, note: "cannot form a URL for \(name)")
        }
        do {
            let result = try await ServerProbe(url: url, method: .head, options: connection).run()
            return TrustAudit.HostReport(
                policy: host, host: name, presentedChain: result.observation.presentedChain,
                stapledOCSPResponse: result.observation.stapledOCSPResponse, anchors: anchors,
                revocationFetcher: CurlRevocationFetcher(resolve: connection.resolve), now: now, warnDays: warnDays)
        } catch {
            return .unreachable(host, host: name, note: error.message)
        }
    }
}
