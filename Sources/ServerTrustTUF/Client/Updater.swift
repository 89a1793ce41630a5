/// The TUF client workflow (specification 1.0, section 5): refresh the top-level metadata, find
/// a target through the delegation graph, download and verify it.
///
/// A port of python-tuf's ngclient `Updater` with the same order of loads and the same local
/// store rules: each stored file is loaded through the trusted-metadata checks (python-tuf's
/// `TrustedMetadataSet`: root → timestamp → snapshot → targets, each against what is trusted) before
/// anything is downloaded, and a download is stored only after it is trusted. Each refresh or
/// download holds the store's lock.
public actor Updater {
    package let store: MetadataStore
    package let metadataBaseURL: String
    package let targetBaseURL: String?
    package let configuration: UpdaterConfiguration
    private let fetcher: any TUFFetching
    private let clock: any TUFClock
    package private(set) var trusted: TrustedMetadataSet

    /// Starts from the trusted root in `store` (`root.json`), which the application put there
    /// (``MetadataStore/installInitialRoot(_:)``, or `servertrust updates init`), or which
    /// an earlier refresh rotated forward.
    ///
    /// - Parameters:
    ///   - store: the trusted metadata; it must hold `root.json`.
    ///   - metadataBaseURL: where `N.root.json`, `timestamp.json` … are fetched.
    ///   - targetBaseURL: where targets are fetched; nil when only metadata is refreshed.
    ///   - fetcher: the transport; it enforces each download's length limit and deadline.
    ///   - clock: the time expiry is checked against, read once here (default: the system clock).
    ///   - configuration: limits (default: python-tuf's, ``UpdaterConfiguration``).
    public init(store: MetadataStore, metadataBaseURL: String, targetBaseURL: String? = nil, fetcher: any TUFFetching,
                clock: any TUFClock = SystemTUFClock(), configuration: UpdaterConfiguration = UpdaterConfiguration()) throws(TUFError) {
        self.store = store
        self.metadataBaseURL = metadataBaseURL.hasSuffix("/") ? metadataBaseURL : metadataBaseURL + "/"
        self.targetBaseURL = targetBaseURL.map { $0.hasSuffix("/") ? $0 : $0 + "/" }
        self.fetcher = fetcher
        self.clock = clock
        self.configuration = configuration
        guard let rootBytes = store.read("root.json") else {
            throw TUFError(.storeFailure, "no trusted root: \(store.directory)/root.json is missing or cannot be read")
        }
        trusted = try TrustedMetadataSet(rootBytes: rootBytes, referenceTime: clock.now())
    }

    /// Starts from the root the application ships — compiled in (`InitialRoot(base64:
    /// Certificates.updatesTUFRoot)`) or read from a file — unless `store` already holds a root.
    ///
    /// `initialRoot` is written to the store only when the store has no `root.json`
    /// (``MetadataStore/installInitialRoot(_:)``); a stored root, rotated forward by earlier
    /// refreshes, wins over the shipped one. Then the stored root is loaded and checked as by
    /// ``init(store:metadataBaseURL:targetBaseURL:fetcher:clock:configuration:)``.
    ///
    /// - Parameters:
    ///   - store: the trusted metadata.
    ///   - initialRoot: the root to start from when the store has none.
    ///   - metadataBaseURL: where `N.root.json`, `timestamp.json` … are fetched.
    ///   - targetBaseURL: where targets are fetched; nil when only metadata is refreshed.
    ///   - fetcher: the transport; it enforces each download's length limit and deadline.
    ///   - clock: the time expiry is checked against, read once here (default: the system clock).
    ///   - configuration: limits (default: python-tuf's, ``UpdaterConfiguration``).
    public init(store: MetadataStore, initialRoot: InitialRoot, metadataBaseURL: String, targetBaseURL: String? = nil,
                fetcher: any TUFFetching, clock: any TUFClock = SystemTUFClock(),
                configuration: UpdaterConfiguration = UpdaterConfiguration()) throws(TUFError) {
        try store.installInitialRoot(initialRoot)
        try self.init(
            store: store, metadataBaseURL: metadataBaseURL, targetBaseURL: targetBaseURL, fetcher: fetcher, clock: clock,
            configuration: configuration)
    }

    private var refreshed = false

    /// Loads the stored timestamp, snapshot and top-level targets through the same checks as
    /// a refresh, downloading nothing: the last trusted state, for a client that starts while
    /// its repository is unreachable. Afterwards ``targetInfo(_:)`` answers from it (a
    /// delegated role not in the store is still downloaded).
    ///
    /// - Throws: `TUFError` when a role is missing from the store, or fails its checks —
    ///   `.expired` once the stored metadata has expired (the specification: stop
    ///   trusting it), `.storeFailure` when the store is empty.
    public func loadStoredMetadata() throws(TUFError) {
        let lock = try store.lock()
        defer { withExtendedLifetime(lock) {} }
        for name in ["timestamp.json", "snapshot.json", "targets.json"] where store.read(name) == nil {
            throw TUFError(.storeFailure, "\(store.directory)/\(name) is missing: no trusted state to start from")
        }
        _ = try trusted.updateTimestamp(store.read("timestamp.json")!)
        _ = try trusted.updateSnapshot(store.read("snapshot.json")!, trusted: true)
        _ = try trusted.updateTargets(store.read("targets.json")!, roleName: "targets", delegator: "root")
        refreshed = true
    }

    /// The earliest `expires` of the trusted root, timestamp, snapshot and top-level targets
    /// (seconds since the Unix epoch): after it, what they describe is no longer trusted. Nil
    /// before they are loaded. A target delivered by a delegated role is trusted only until
    /// ``trustedUntil(forTargets:)``.
    public var trustedUntil: Int64? {
        guard let timestamp = trusted.timestamp, let snapshot = trusted.snapshot, let targets = trusted.targets["targets"] else { return nil }
        return min(timestamp.signed.common.expires, snapshot.signed.common.expires, targets.metadata.signed.common.expires, trusted.root.signed.common.expires)
    }

    /// ``trustedUntil``, or earlier when a delegated role on the path that delivered one of
    /// `paths` expires earlier: the specification trusts no expired delegated role, so what it
    /// delivered is trusted no longer than it is. Only targets ``targetInfo(_:)`` found count;
    /// nil before the top-level metadata is loaded.
    public func trustedUntil(forTargets paths: [String]) -> Int64? {
        guard let topLevel = trustedUntil else { return nil }
        return paths.compactMap { delegationPathExpires[$0] }.reduce(topLevel, min)
    }

    /// The earliest `expires` of the targets roles from the top-level one to the role that
    /// listed the target, by the target paths ``targetInfo(_:)`` found.
    private var delegationPathExpires: [String: Int64] = [:]

    /// Client workflow 5.3–5.6: root (through every intermediate version), timestamp,
    /// snapshot, top-level targets.
    public func refresh() async throws(TUFError) {
        let lock = try store.lock()
        defer { withExtendedLifetime(lock) {} }
        try await loadRoot()
        try await loadTimestamp()
        try await loadSnapshot()
        _ = try await loadTargets("targets", delegator: "root")
        refreshed = true
    }

    private func download(_ url: String, maximumLength: Int) async throws(TUFError) -> [UInt8] {
        let deadline = ContinuousClock.now.advanced(by: configuration.downloadTimeBudget)
        let bytes = try await fetcher.fetch(url, maximumLength: maximumLength, deadline: deadline)
        guard bytes.count <= maximumLength else {
            throw TUFError(.downloadTooLarge, "\(url): over \(maximumLength) bytes")
        }
        return bytes
    }

    private func metadataURL(_ role: String, version: Int64?) -> String {
        let name = percentEncoded(role)
        return metadataBaseURL + (version.map { "\($0).\(name).json" } ?? "\(name).json")
    }

    private func loadRoot() async throws(TUFError) {
        for _ in 0..<configuration.maximumRootRotations {
            let version = try trusted.root.signed.nextVersion()
            let bytes: [UInt8]
            do throws(TUFError) {
                bytes = try await download(metadataURL("root", version: version), maximumLength: configuration.rootMaximumLength)
            } catch {
                if error.code == .notFound { break }
                throw error
            }
            try trusted.updateRoot(bytes)
            try store.write("root.json", bytes)
        }
    }

    private func loadTimestamp() async throws(TUFError) {
        if let local = store.read("timestamp.json") {
            do throws(TUFError) { try trusted.updateTimestamp(local) } catch { if error.code == .invalidState { throw error } }
        }
        let bytes = try await download(metadataURL("timestamp", version: nil), maximumLength: configuration.timestampMaximumLength)
        if case .updated = try trusted.updateTimestamp(bytes) {
            try store.write("timestamp.json", bytes)
        }
    }

    private func loadSnapshot() async throws(TUFError) {
        if let local = store.read("snapshot.json") {
            do throws(TUFError) {
                try trusted.updateSnapshot(local, trusted: true)
                return
            } catch {
                if error.code == .invalidState { throw error }
            }
        }
        guard let meta = trusted.timestamp?.signed.snapshotMeta else { throw TUFError(.invalidState, "no trusted timestamp") }
        let length = meta.length.map(Int.init) ?? configuration.snapshotMaximumLength
        let version = trusted.root.signed.consistentSnapshot ? meta.version : nil
        let bytes = try await download(metadataURL("snapshot", version: version), maximumLength: length)
        try trusted.updateSnapshot(bytes)
        try store.write("snapshot.json", bytes)
    }

    private func loadTargets(_ role: String, delegator: String) async throws(TUFError) -> Targets {
        if trusted.contains(role, delegator: delegator), let cached = trusted.targets[role] { return cached.metadata.signed }
        let fileName = percentEncoded(role) + ".json"
        if let local = store.read(fileName) {
            do throws(TUFError) {
                return try trusted.updateTargets(local, roleName: role, delegator: delegator).signed
            } catch {
                if error.code == .invalidState { throw error }
            }
        }
        guard let meta = trusted.snapshot?.signed.meta["\(role).json"] else {
            throw TUFError(.missingMetadataInfo, "role \(role) was delegated but is not part of snapshot")
        }
        let length = meta.length.map(Int.init) ?? configuration.targetsMaximumLength
        let version = trusted.root.signed.consistentSnapshot ? meta.version : nil
        let bytes = try await download(metadataURL(role, version: version), maximumLength: length)
        let new = try trusted.updateTargets(bytes, roleName: role, delegator: delegator)
        try store.write(fileName, bytes)
        return new.signed
    }

    /// The trusted description of `path`, found by a pre-order depth-first walk of the
    /// delegation graph (terminating delegations end it; at most
    /// ``UpdaterConfiguration/maximumDelegations`` roles). Refreshes first if this updater has
    /// not refreshed yet; nil when no role lists the target.
    public func targetInfo(_ path: String) async throws(TUFError) -> TargetFile? {
        if !refreshed { try await refresh() }
        let lock = try store.lock()
        defer { withExtendedLifetime(lock) {} }
        var toVisit: [(role: String, delegator: String, pathExpires: Int64)] = [("targets", "root", .max)]
        var visited = Set<String>()
        while visited.count <= configuration.maximumDelegations, let (role, delegator, parentPathExpires) = toVisit.popLast() {
            if visited.contains(role) { continue }
            let targets = try await loadTargets(role, delegator: delegator)
            let pathExpires = min(parentPathExpires, targets.common.expires)
            if let target = targets.targets[path] {
                delegationPathExpires[path] = pathExpires
                return target
            }
            visited.insert(role)
            if let delegations = targets.delegations {
                var children: [(role: String, delegator: String, pathExpires: Int64)] = []
                for (child, terminating) in delegations.rolesFor(targetPath: path) {
                    children.append((child, role, pathExpires))
                    if terminating {
                        toVisit.removeAll()
                        break
                    }
                }
                toVisit.append(contentsOf: children.reversed())
            }
        }
        return nil
    }

    /// The local file name of a target in a targets directory: its path percent-encoded, so one
    /// target always lands in the same file.
    package nonisolated static func localFileName(for target: TargetFile) -> String { percentEncoded(target.path) }

    /// The cached copy of `target` in `directory` if its length and hashes match, else nil.
    public nonisolated func cachedTarget(_ target: TargetFile, in directory: String) -> [UInt8]? {
        let path = directory + "/" + Self.localFileName(for: target)
        guard let bytes = FileIO.read(path, maximumLength: Int(clamping: target.length)), (try? target.verify(bytes)) != nil else { return nil }
        return bytes
    }

    /// Downloads `target`, verifies its length and hashes, and stores it atomically (mode 0600)
    /// in `directory`; returns the bytes.
    @discardableResult
    public func downloadTarget(_ target: TargetFile, to directory: String) async throws(TUFError) -> [UInt8] {
        guard let targetBaseURL else { throw TUFError(.invalidState, "no target base URL") }
        var path = target.path
        if trusted.root.signed.consistentSnapshot && configuration.prefixTargetsWithHash, let first = target.hashes.first {
            if let slash = path.lastIndex(of: "/") {
                path = String(path[...slash]) + "\(first.digest)." + String(path[path.index(after: slash)...])
            } else {
                path = "\(first.digest).\(path)"
            }
        }
        let bytes = try await download(targetBaseURL + path, maximumLength: Int(clamping: target.length))
        try target.verify(bytes)
        try FileIO.writeAtomically(bytes, to: directory + "/" + Self.localFileName(for: target), directory: directory)
        return bytes
    }
}
