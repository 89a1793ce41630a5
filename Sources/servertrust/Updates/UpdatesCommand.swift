import ArgumentParser
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustTUF
import ServerTrustUpdates

/// `servertrust updates`: the TUF client, speaking tuf-conformance's client CLI protocol
/// (CLIENT-CLI.md at tuf-conformance eec841c) plus `show`.
///
/// The options are declared here, on `updates` itself, and the action is a positional argument,
/// so options and action may come in any order (the suite passes `--metadata-url` before
/// `--metadata-dir`). Any failure exits with status 1, as the protocol requires — a documented
/// exception to the tool's 0/1/2/3.
struct UpdatesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "updates",
        abstract: "Keep trusted metadata current from a TUF repository and download verified targets.",
        discussion: """
            Actions:
              init ROOT    trust ROOT (a root.json file) as the initial root; no network access
              refresh      update root, timestamp, snapshot and targets metadata
              download     refresh, then download each --target-name into --target-dir
              show         print the trusted version and expiry of each role, and the trust update
                           this store holds: the verified policy target (--target-name, default
                           policy.json), deny-list entries and signing keys (--json for JSON)
            Exit status: 0 success, 1 any failure (the tuf-conformance client protocol).
            Plain http: URLs are accepted only for loopback hosts.

            Examples:
              servertrust updates --metadata-dir meta init root.json
              servertrust updates --metadata-dir meta --metadata-url https://tuf.example.com/metadata refresh
              servertrust updates --metadata-dir meta --metadata-url URL --target-base-url URL \\
                  --target-name policy.json --target-dir targets download
            """
    )

    @Option(name: .customLong("metadata-dir"), help: "The directory of trusted metadata (created if missing).")
    var metadataDirectory: String

    @Option(name: .customLong("metadata-url"), help: "The repository's metadata base URL.")
    var metadataURL: String?

    @Option(name: .customLong("target-name"), help: "A target path to download; repeat for several, processed in order.")
    var targetNames: [String] = []

    @Option(name: .customLong("target-base-url"), help: "The repository's targets base URL.")
    var targetBaseURL: String?

    @Option(name: .customLong("target-dir"), help: "Where downloaded targets are stored.")
    var targetDirectory: String?

    @Option(name: .customLong("download-timeout"), help: "Seconds one download may take (the slow-retrieval defence; default 30).")
    var downloadTimeout: Int = 30

    @Flag(help: "With show: print JSON.")
    var json = false

    @Argument(help: "init, refresh, download or show.")
    var action: String

    @Argument(help: "With init: the trusted root file.")
    var rootFile: String?

    func run() async throws {
        do {
            try await perform()
        } catch {
            fflush(nil)
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw CommandFailure(status: 1, message: "")
        }
    }

    private func perform() async throws {
        switch action {
        case "init":
            guard let rootFile else { throw TUFError(.invalidState, "init needs the trusted root file") }
            guard let bytes = FileManager.default.contents(atPath: rootFile) else {
                throw TUFError(.storeFailure, "cannot read \(rootFile)")
            }
            let store = try MetadataStore(directory: metadataDirectory)
            let lock = try store.lock()
            defer { withExtendedLifetime(lock) {} }
            try store.write("root.json", Array(bytes))
            print("Initialized \(metadataDirectory) with \(rootFile)")
        case "refresh":
            try await withUpdater { updater in try await updater.refresh() }
            print("Refreshed metadata in \(metadataDirectory)")
        case "download":
            guard let targetDirectory else { throw TUFError(.invalidState, "download needs --target-dir") }
            guard !targetNames.isEmpty else { throw TUFError(.invalidState, "download needs --target-name") }
            guard targetBaseURL != nil else { throw TUFError(.invalidState, "download needs --target-base-url") }
            try await withUpdater { updater in
                for name in targetNames {
                    guard let target = try await updater.targetInfo(name) else { throw TUFError(.targetNotFound, "\(name) is not in the repository") }
                    if updater.cachedTarget(target, in: targetDirectory) != nil {
                        print("\(name): cached copy is current")
                        continue
                    }
                    try await updater.downloadTarget(target, to: targetDirectory)
                    print("\(name): downloaded")
                }
            }
        case "show":
            try await show()
        default:
            throw TUFError(.invalidState, "unknown action \(action): expected init, refresh, download or show")
        }
    }

    /// Runs `body` with an updater that fetches through a `Session` (ServerTrustUpdates'
    /// `SessionTUFFetcher`): the system's CA bundle, no redirects, no proxy, no retries; plain
    /// http only to loopback hosts, which the fetcher enforces.
    private func withUpdater(_ body: (Updater) async throws -> Void) async throws {
        guard let metadataURL else { throw TUFError(.invalidState, "\(action) needs --metadata-url") }
        let store = try MetadataStore(directory: metadataDirectory)
        var configuration = UpdaterConfiguration()
        configuration.downloadTimeBudget = .seconds(max(1, downloadTimeout))
        var sessionConfiguration = Session.Configuration()
        sessionConfiguration.redirectPolicy = .disallow
        sessionConfiguration.requestTimeout = nil
        // The fetcher accepts plain http only to a loopback host (the tuf-conformance suite
        // serves on localhost); the session must not refuse it before the fetcher decides.
        sessionConfiguration.allowsPlainHTTP = true
        let session = try Session(configuration: sessionConfiguration)
        defer { session.shutdown() }
        let updater = try Updater(
            store: store, metadataBaseURL: metadataURL, targetBaseURL: targetBaseURL, fetcher: SessionTUFFetcher(session: session),
            configuration: configuration)
        try await body(updater)
    }

    /// The trusted role versions, then what a `TrustUpdateClient` on this store would put in
    /// force now (restored offline, every file verified again): the policy target
    /// (`--target-name`, default policy.json), its deny-list, signing keys and CT log list — or, once the
    /// metadata has expired, the floor with the last verified deny-list.
    private func show() async throws {
        let store = try MetadataStore(directory: metadataDirectory)
        let report = try TrustedStateReport(store: store, now: SystemTUFClock().now())
        var configuration = TrustUpdateClient.Configuration(
            metadataDirectory: metadataDirectory, initialRoot: nil, repositoryURL: metadataURL ?? "https://offline.invalid")
        if let target = targetNames.first { configuration.policyTarget = target }
        let client = try TrustUpdateClient(
            floor: try ServerTrustManager(policies: [:], allHostsMustBeEvaluated: false), configuration: configuration,
            fetcher: OfflineFetcher())
        let status = await client.restore()
        if json {
            let data = try JSONEncoder.sortedPretty.encode(ShowReport(roles: report.roles, trustUpdate: status))
            print(String(decoding: data, as: UTF8.self))
        } else {
            for role in report.roles {
                let state = role.version.map { "version \($0), expires \(role.expires ?? "?")\(role.expired == true ? " (EXPIRED)" : "")" } ?? role.problem ?? "absent"
                print("\(role.name): \(state)")
            }
            if status.inForce == .delivered {
                print("\(configuration.policyTarget): verified, sha256 \(status.policySHA256 ?? "?"), targets version \(status.targetsVersion.map(String.init) ?? "?")"
                    + (status.policyExpires.map { ", expires \($0.formatted(.iso8601))" } ?? ""))
                print("deny-list entries: \(status.denyListEntries); signing keys: \(status.signingKeyIDs.isEmpty ? "none" : status.signingKeyIDs.joined(separator: ", "))")
            } else if status.inForce == .floorMetadataExpired || status.inForce == .floorStoreInterrupted {
                // What a client starting on this store keeps of it: only what refuses.
                let why = status.inForce == .floorMetadataExpired ? "the stored metadata has expired" : "the store could not be restored"
                print("\(configuration.policyTarget): not in force, \(why) (\(status.lastError?.description ?? status.inForce.rawValue)); the floor is (\(status.inForce.rawValue))")
                let withdrawn = status.lastVerifiedSigningKeyIDs.map {
                    "none delivered in force; compiled-in keys only as the last verified set holds them: \($0.isEmpty ? "none" : $0.joined(separator: ", "))"
                } ?? "none"
                print("deny-list entries: \(status.denyListEntries) (the last verified deny-list, kept); signing keys: \(withdrawn)")
            } else {
                print("\(configuration.policyTarget): no verified policy in this store (\(status.lastError?.description ?? status.refusal?.description ?? status.inForce.rawValue))")
            }
            if let list = status.certificateTransparencyLogList {
                let source = list.source == .delivered ? "delivered (\(configuration.certificateTransparencyLogListTarget ?? "ct_log_list.json"))" : "the floor's"
                print("CT log list: \(list.logCount) logs, log_list_timestamp \(list.timestamp.formatted(.iso8601)), \(source)")
            }
        }
    }

    struct ShowReport: Encodable {
        let roles: [TrustedStateReport.Role]
        let trustUpdate: TrustUpdateStatus
    }

    /// `show` never touches the network.
    struct OfflineFetcher: TUFFetching {
        func fetch(_ url: String, maximumLength: Int, deadline: ContinuousClock.Instant) async throws(TUFError) -> [UInt8] {
            throw TUFError(.downloadFailed, "show works offline")
        }
    }
}

extension JSONEncoder {
    static var sortedPretty: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
