/// Limits of one ``Updater``; the defaults are python-tuf's `UpdaterConfig`.
public struct UpdaterConfiguration: Sendable {
    /// Root versions fetched in one refresh at most (default 256).
    public var maximumRootRotations = 256
    /// Targets roles visited in one target lookup at most (default 32).
    public var maximumDelegations = 32
    /// Byte limits of downloads whose length trusted metadata does not state: root 512,000,
    /// timestamp 16,384, snapshot 2,000,000, targets 5,000,000 — the endless-data defence.
    public var rootMaximumLength = 512_000
    public var timestampMaximumLength = 16_384
    public var snapshotMaximumLength = 2_000_000
    public var targetsMaximumLength = 5_000_000
    /// The time one download may take, connection included (default 30 s): the slow-retrieval
    /// defence.
    public var downloadTimeBudget: Duration = .seconds(30)
    /// Whether target URLs carry the hash prefix when the root says `consistent_snapshot`
    /// (default true).
    public var prefixTargetsWithHash = true

    public init() {}
}
