import ArgumentParser
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustTUF
import ServerTrustUpdates

/// `servertrust fetch --updates-root FILE --updates-url BASE --updates-dir DIR [--updates-target NAME]`:
/// the fetched host's policy comes from a TUF repository, through ServerTrustUpdates'
/// `TrustUpdateClient` — the same code an application runs.
struct FetchUpdatesOptions: ParsableArguments {
    @Option(name: .customLong("updates-root"), help: ArgumentHelp(
        "Take the policy from a TUF repository: FILE is its trusted root.json (used when --updates-dir holds no root yet).",
        valueName: "FILE"))
    var root: String?

    @Option(name: .customLong("updates-url"), help: ArgumentHelp(
        "The repository: BASE/metadata/ and BASE/targets/ (https:, or http: on loopback only).", valueName: "BASE"))
    var url: String?

    @Option(name: .customLong("updates-dir"), help: ArgumentHelp(
        "Where the trusted metadata is kept between runs (rollback protection lives there).", valueName: "DIR"))
    var directory: String?

    @Option(name: .customLong("updates-target"), help: ArgumentHelp("The policy target (default policy.json).", valueName: "NAME"))
    var target: String?

    var isEnabled: Bool { root != nil || url != nil || directory != nil || target != nil }

    /// Checks that the three required options come together.
    func validate() throws {
        guard isEnabled else { return }
        guard root != nil, url != nil, directory != nil else {
            throw ValidationError("--updates-root, --updates-url and --updates-dir go together.")
        }
    }

    /// Restores the last trusted state from DIR, refreshes from the repository and returns the
    /// client whose live manager the fetch then uses. The update host is evaluated with the
    /// command's anchors and resolve entries, pinned to `pins` when given; a failed refresh
    /// leaves the last trusted policy in force and says so on standard error.
    ///
    /// - Throws: `CommandFailure` (status 1) when no delivered policy is in force afterwards: a
    ///   fetch that was asked to use the repository's policy never falls back to less.
    func client(floor: ServerTrustManager, anchors: TrustAnchors?, resolve: [String], pins: [String]) async throws -> TrustUpdateClient {
        guard let root, let url, let directory else { preconditionFailure("validated") }
        let initialRoot: InitialRoot
        do {
            guard let bytes = FileManager.default.contents(atPath: root) else { throw TUFError(.storeFailure, "cannot read \(root)") }
            initialRoot = try InitialRoot(bytes: Array(bytes))
        } catch let error as TUFError {
            throw CommandFailure(status: CommandFailure.usage, message: "error: --updates-root \(root): \(error.description)")
        }
        var sessionConfiguration = Session.Configuration()
        if let anchors { sessionConfiguration.anchors = .bundle(anchors) }
        sessionConfiguration.resolve = resolve
        sessionConfiguration.redirectPolicy = .disallow
        sessionConfiguration.requestTimeout = nil
        // Plain http only to loopback: the fetcher refuses it for any other host.
        sessionConfiguration.allowsPlainHTTP = true
        let updateHostManager: ServerTrustManager?
        do {
            updateHostManager = try pins.isEmpty || URL(string: url)?.host == nil ? nil
                : ServerTrustManager(evaluators: [try HostPattern(URL(string: url)!.host!): try PinnedKeyHashesTrustEvaluator(pins)], allHostsMustBeEvaluated: false)
        } catch let error as TrustError {
            throw CommandFailure(status: CommandFailure.usage, message: "error: \(error.reason)")
        }
        let session = try Session(configuration: sessionConfiguration, trustManager: updateHostManager)
        defer { session.shutdown() }
        var configuration = TrustUpdateClient.Configuration(metadataDirectory: directory, initialRoot: initialRoot, repositoryURL: url)
        if let target { configuration.policyTarget = target }
        let client: TrustUpdateClient
        do {
            client = try TrustUpdateClient(floor: floor, configuration: configuration, fetcher: SessionTUFFetcher(session: session))
        } catch {
            throw CommandFailure(status: CommandFailure.usage, message: "error: --updates-dir \(directory): \(error.description)")
        }
        await client.restore()
        let status = await client.refresh()
        switch status.lastOutcome {
        case .applied?, .unchanged?:
            StandardError.write(
                "trust update: \(configuration.policyTarget) from targets version \(status.targetsVersion.map(String.init) ?? "?") is in force (sha256 \(status.policySHA256 ?? "?"))")
        case .refused?:
            StandardError.warn("the trust update was not applied: \(configuration.policyTarget) \(status.refusal?.description ?? ""); \(Self.inForce(status))")
        case .failed?, nil:
            StandardError.warn("the trust update failed: \(status.lastError?.description ?? "unknown error"); \(Self.inForce(status))")
        }
        guard status.inForce == .delivered else {
            throw CommandFailure(
                status: CommandFailure.rejected,
                message: "error: no policy from \(url) is in force (\(status.inForce.rawValue)); nothing was fetched.")
        }
        return client
    }

    static func inForce(_ status: TrustUpdateStatus) -> String {
        switch status.inForce {
        case .delivered: "the last trusted policy (sha256 \(status.policySHA256 ?? "?")) stays in force"
        case .floorNoUpdateYet: "no policy from the repository has ever been trusted"
        default: "in force: \(status.inForce.rawValue)"
        }
    }
}
