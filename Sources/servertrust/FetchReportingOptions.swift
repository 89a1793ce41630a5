import ArgumentParser
import Foundation
import ServerTrust
import ServerTrustHTTP

/// `fetch --report-uri`, and `--mode` (shared with ``FetchSignatureOptions``) as it applies to
/// `--pin` and `--revocation`: trial them without enforcing them, and send failure reports.
struct FetchReportingOptions: ParsableArguments {
    @Option(name: .customLong("report-uri"), help: ArgumentHelp(
        "Send an RFC 7469 failure report here (https:) on any trust failure, through a separate session with default validation against the same anchors. Repeatable.",
        valueName: "URL"))
    var reportURIs: [String] = []

    @Option(name: .long, help: ArgumentHelp(
        "A policy file (JSON): its hosts' pins, modes, canaries, revocation and report URIs replace --pin and --revocation. --report-uri adds to its top-level report URIs.",
        valueName: "FILE"))
    var policy: String?

    /// The loaded ``policy`` (see ``loadPolicy()``).
    var policyFile: TrustPolicyFile?

    enum CodingKeys: CodingKey { case reportURIs, policy }

    /// Reads ``policy``; an invalid file is a usage error naming its line and field.
    ///
    /// - Parameter certificateTransparencyLogs: the list (`--ct-log-list`) the file's
    ///   `"certificateTransparency"` hosts are checked against; nil for none.
    mutating func loadPolicy(certificateTransparencyLogs: CertificateTransparencyLogs? = nil) throws {
        guard let policy else { return }
        do {
            policyFile = try TrustPolicyFile(contentsOf: URL(fileURLWithPath: policy), certificateTransparencyLogs: certificateTransparencyLogs)
        } catch let error as TrustError {
            throw CommandFailure(status: CommandFailure.usage, message: "error: \(error.reason)")
        }
    }

    /// Installs the reporter (when report URIs are given) and the hook that records every
    /// trust failure for the output.
    func apply(to configuration: inout Session.Configuration, events: FetchTrustEvents) throws {
        configuration.onTrustFailure = { events.append($0) }
        guard !reportURIs.isEmpty || policyFile.map({ !$0.reportURIs.isEmpty || $0.hosts.contains { !$0.policy.reportURIs.isEmpty } }) == true else { return }
        var reporting = TrustFailureReporter.Configuration()
        // The file's per-host report URIs are on its hosts' policies (`HostPolicy.reportURIs`,
        // in `policyFile.manager`); the reporter takes its top-level ones, for every host.
        if let policyFile { reporting.reportURIs = policyFile.reportURIs }
        reporting.reportURIs += try reportURIs.map { text in
            guard let url = URL(string: text), url.scheme?.lowercased() == "https", url.host?.isEmpty == false else {
                throw CommandFailure(status: CommandFailure.usage, message: "error: --report-uri \(URLRedaction.redacted(text).debugDescription) is not an https: URL with a host.")
            }
            return url
        }
        reporting.anchors = configuration.anchors
        reporting.resolve = configuration.resolve
        reporting.counters = configuration.trustCounters
        do {
            configuration.failureReporter = try TrustFailureReporter(reporting)
        } catch {
            throw CommandFailure(status: CommandFailure.transfer, message: "error: \(error)")
        }
    }

    /// Waits for queued reports (a command that exits would abandon them).
    func flush(_ configuration: Session.Configuration) async {
        guard let reporter = configuration.failureReporter else { return }
        await reporter.flush()
        reporter.shutdown()
    }

    /// Text mode: one stderr line per report-only failure, which the body alone would hide.
    static func warn(events: FetchTrustEvents) {
        for event in events.all where event.report.mode != .enforced {
            FileHandle.standardError.write(Data("warning: \(event)\n".utf8))
        }
    }
}

/// The trust failures a fetch saw, recorded by ``Session/Configuration/onTrustFailure``.
final class FetchTrustEvents: Sendable {
    private let events = Locked<[TrustFailureEvent]>([])
    func append(_ event: TrustFailureEvent) { events.withLock { $0.append(event) } }
    var all: [TrustFailureEvent] { events.withLock { $0 } }
}
