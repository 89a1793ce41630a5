public import Foundation
import Dispatch

/// OCSP responses and CRLs fetched for revocation checks, shared by every evaluation.
///
/// - **What is kept.** The DER bytes a responder or distribution point sent, once verified.
///   Entries are keyed by OCSP certificate ID, and by CRL issuer plus distribution point URL
///   (so one CRL serves every certificate of its issuer).
/// - **Never trusted blindly.** Every use verifies again at that evaluation's validation time:
///   an OCSP response is verified in full (signature included); a CRL's checks are repeated
///   with its signature verification remembered per issuer key. An entry past its nextUpdate
///   (or, without one, older than the maximum age) therefore no longer answers, and the next
///   evaluation fetches a fresh one, which replaces it.
/// - **Never rolled back.** An entry is replaced only by data at least as new (OCSP
///   `producedAt`, CRL `thisUpdate`), and an OCSP "revoked" is never replaced by a "good": a
///   still-valid "good" obtained before the revocation (a server's old staple, a replayed
///   response) cannot overwrite what the cache knows, in memory or on disk (second audit,
///   finding 2).
/// - **Single flight.** When concurrent evaluations need the same missing entry, one fetches
///   and the others wait for it, each until its own deadline.
/// - **Failure backoff.** A fetch that failed is not repeated for the same entry for
///   ``failureBackoff``; evaluations in between get the same unknown status at once instead of
///   each spending the time budget on a responder that is down.
/// - **Bounded.** At most ``maximumEntries`` entries and ``maximumBytes`` bytes in memory; the
///   least recently used entry goes first.
/// - **On disk, optionally.** With a ``directory`` each entry is also written there, atomically,
///   as `ocsp-<hex>.der` or `crl-<hex>.der` (hex = SHA-256 of the key). A new cache over the same
///   directory loads a file when an evaluation needs it and verifies it like a fetched one; a
///   file that does not parse is deleted.
///
/// Thread-safe: all state is behind one lock (`Locked`), held only for dictionary operations, never
/// during a fetch, a verification or file I/O.
public final class RevocationCache: Sendable {
    /// The process-wide cache used when an evaluator is given none: memory only, defaults.
    public static let shared = RevocationCache()

    /// Counters for tests and diagnostics, since the cache was created.
    public struct Statistics: Hashable, Sendable {
        /// Fetches performed (calls to a ``RevocationFetcher``).
        public var fetches = 0
        /// Evaluations answered from memory.
        public var hits = 0
        /// Evaluations answered from a file of ``RevocationCache/directory``.
        public var diskHits = 0
        /// Lookups that found nothing usable.
        public var misses = 0
        /// Evaluations that waited for another evaluation's fetch of the same entry.
        public var coalescedWaits = 0
        /// Fetches skipped because the same fetch failed less than ``RevocationCache/failureBackoff`` ago.
        public var suppressedFetches = 0
        /// Entries removed to stay within the bounds.
        public var evictions = 0
        /// Entries held in memory now.
        public var entries = 0
        /// Evaluations waiting for another's fetch right now.
        public var waiting = 0
    }

    /// The most entries kept in memory.
    public let maximumEntries: Int
    /// The most bytes of DER kept in memory.
    public let maximumBytes: Int
    /// Where entries are also stored, or `nil` for memory only.
    public let directory: URL?
    /// How long a failed fetch is not repeated for the same entry.
    public let failureBackoff: Duration

    private let state = Locked(State())

    /// - Parameters:
    ///   - maximumEntries: default 4,096.
    ///   - maximumBytes: default 64 MiB.
    ///   - directory: where to persist entries; created if missing. Default `nil` (memory only).
    ///     - Warning: use a directory only this process's user can write; files are verified on
    ///       load, so a planted file can cost a verification, not a wrong answer.
    ///   - failureBackoff: default 30 seconds; `.zero` retries every time.
    public init(
        maximumEntries: Int = 4096,
        maximumBytes: Int = 64 << 20,
        directory: URL? = nil,
        failureBackoff: Duration = .seconds(30)
    ) {
        self.maximumEntries = max(1, maximumEntries)
        self.maximumBytes = max(1, maximumBytes)
        self.directory = directory
        self.failureBackoff = failureBackoff
        if let directory {
            try? FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
    }

    /// The counters so far.
    public var statistics: Statistics {
        state.withLock { state in
            var statistics = state.statistics
            statistics.entries = state.entries.count
            statistics.waiting = state.waiting
            return statistics
        }
    }

    /// Forgets every entry and failure in memory (files in ``directory`` stay).
    public func removeAll() {
        state.withLock { state in
            state.entries.removeAll()
            state.failures.removeAll()
            state.bytes = 0
        }
    }

    // MARK: - Lookup

    /// A cached payload that `accept` (the caller's full verification) takes: from memory,
    /// else from the directory. A file whose bytes do not parse is deleted.
    func cached(
        _ key: RevocationCacheKey, maximumSize: Int, accept: (CachedRevocationData) -> Bool
    ) -> (data: CachedRevocationData, fromDisk: Bool)? {
        if let data = state.withLock({ $0.use(key) }), data.der.count <= maximumSize, accept(data) {
            state.withLock { $0.statistics.hits += 1 }
            return (data, false)
        }
        if let data = load(key, maximumSize: maximumSize), accept(data) {
            state.withLock { state in
                state.statistics.diskHits += 1
                state.insert(key, data, limits: (maximumEntries, maximumBytes))
            }
            return (data, true)
        }
        state.withLock { $0.statistics.misses += 1 }
        return nil
    }

    /// The entry in memory for `key`, if any, unverified and without counting a hit: a server
    /// staples the same response for hours, and reusing the parsed response (whose signature
    /// check is remembered) spares a parse and a signature verification per handshake.
    func peek(_ key: RevocationCacheKey) -> CachedRevocationData? {
        state.withLock { $0.entries[key]?.data }
    }

    /// Stores verified data (a staple, or a fetched response that verified), unless the entry
    /// already held is newer or says "revoked" where `data` does not.
    func store(_ key: RevocationCacheKey, _ data: CachedRevocationData) {
        let stored = state.withLock { state in
            state.failures[key] = nil
            return state.insert(key, data, limits: (maximumEntries, maximumBytes))
        }
        if stored { persist(key, data) }
    }

    // MARK: - Single flight

    /// What one fetch produced.
    enum FetchOutcome: Sendable {
        /// Verified data, now stored.
        case stored(CachedRevocationData)
        /// No usable data, and why.
        case failed(RevocationStatus.UnknownReason, String)
    }

    /// Runs `fetch` for `key` unless another evaluation is already running it, in which case
    /// this one waits for that outcome until `deadline`; unless the same fetch failed within
    /// ``failureBackoff``, in which case that failure is returned at once.
    ///
    /// `fetch` fetches, parses and verifies, and says whether to store; it runs without the lock.
    func fetchOnce(
        _ key: RevocationCacheKey, deadline: ContinuousClock.Instant, fetch: () -> FetchOutcome
    ) -> FetchOutcome {
        enum Role {
            case leader(Flight)
            case follower(Flight)
            case suppressed(RevocationStatus.UnknownReason, String)
        }
        let now = ContinuousClock.now
        let role: Role = state.withLock { state in
            if let failure = state.failures[key], now < failure.until {
                state.statistics.suppressedFetches += 1
                return .suppressed(failure.reason, failure.explanation + " (The same fetch failed moments ago; it is not retried yet.)")
            }
            if let flight = state.flights[key] {
                state.statistics.coalescedWaits += 1
                state.waiting += 1
                return .follower(flight)
            }
            let flight = Flight()
            state.flights[key] = flight
            return .leader(flight)
        }
        switch role {
        case .suppressed(let reason, let explanation):
            return .failed(reason, explanation)
        case .follower(let flight):
            let outcome = flight.wait(until: deadline)
            state.withLock { $0.waiting -= 1 }
            return outcome ?? .failed(
                .timeout, "Another evaluation was fetching the same revocation data and had not finished by the deadline.")
        case .leader(let flight):
            let outcome = fetch()
            let stored = state.withLock { state in
                state.flights[key] = nil
                switch outcome {
                case .stored(let data):
                    state.failures[key] = nil
                    return state.insert(key, data, limits: (maximumEntries, maximumBytes))
                case .failed(let reason, let explanation):
                    if failureBackoff > .zero {
                        state.failures[key] = Failure(until: ContinuousClock.now + failureBackoff, reason: reason, explanation: explanation)
                    }
                    return false
                }
            }
            if stored, case .stored(let data) = outcome { persist(key, data) }
            flight.finish(outcome)
            return outcome
        }
    }

    /// Counts one call to a fetcher, for ``Statistics/fetches``.
    func noteFetch() {
        state.withLock { $0.statistics.fetches += 1 }
    }

    /// How long a responder that did not answer a SHA-256 CertID is asked in SHA-1 alone.
    static let sha1OnlyInterval: TimeInterval = 3600

    /// Whether the OCSP responder at `url` refused a SHA-256 CertID within the last hour
    /// (`RevocationOptions.OCSPCertificateIDHash.sha256`).
    func answersOnlySHA1(_ url: String) -> Bool {
        state.withLock { state in
            guard let since = state.sha1OnlyResponders[url] else { return false }
            return Date().timeIntervalSince(since) < Self.sha1OnlyInterval
        }
    }

    func noteAnswersOnlySHA1(_ url: String) {
        state.withLock { state in
            // A handful of responders in practice; bounded all the same.
            if state.sha1OnlyResponders.count >= 256 { state.sha1OnlyResponders.removeAll() }
            state.sha1OnlyResponders[url] = Date()
        }
    }

    // MARK: - Disk

    private func persist(_ key: RevocationCacheKey, _ data: CachedRevocationData) {
        guard let directory else { return }
        // .atomic writes a temporary file and renames it: a reader never sees half a file.
        try? Data(data.der).write(to: directory.appendingPathComponent(key.fileName), options: .atomic)
    }

    private func load(_ key: RevocationCacheKey, maximumSize: Int) -> CachedRevocationData? {
        guard let directory else { return nil }
        let url = directory.appendingPathComponent(key.fileName)
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
            let size = attributes[.size] as? Int, size <= maximumSize,
            let contents = try? Data(contentsOf: url)
        else { return nil }
        guard let data = CachedRevocationData(method: key.method, der: [UInt8](contents)) else {
            try? FileManager.default.removeItem(at: url)
            return nil
        }
        return data
    }
}

/// Parsed, verified revocation data as the cache keeps it.
struct CachedRevocationData: Sendable {
    enum Parsed: Sendable {
        case ocsp(OCSPResponse)
        case crl(ProfiledCRL)
    }

    let parsed: Parsed
    let der: [UInt8]
    /// The URL it was fetched from; `nil` for a staple or data loaded from disk.
    let origin: String?
    /// A server stapled it (the directory does not record this: a file's provenance is unknown).
    let stapled: Bool
    /// When the data was issued: an OCSP response's `producedAt`, a CRL's `thisUpdate`.
    let issuedAt: Date?
    /// An OCSP response that was verified to say "revoked" for the certificate of its key.
    let saysRevoked: Bool

    init(ocsp response: OCSPResponse, der: [UInt8], origin: String?, stapled: Bool = false, status: RevocationStatus? = nil) {
        parsed = .ocsp(response)
        self.der = der
        self.origin = origin
        self.stapled = stapled
        issuedAt = response.producedAt
        if case .revoked = status { saysRevoked = true } else { saysRevoked = false }
    }

    init(crl: ProfiledCRL, der: [UInt8], origin: String?) {
        parsed = .crl(crl)
        self.der = der
        self.origin = origin
        stapled = false
        issuedAt = crl.crl.thisUpdate
        saysRevoked = false
    }

    /// Whether this may replace `old` under the same key: never an older issue over a newer
    /// one, never a "good" (or unknown) over a "revoked".
    func mayReplace(_ old: CachedRevocationData) -> Bool {
        if old.saysRevoked && !saysRevoked { return false }
        if let previous = old.issuedAt, let issued = issuedAt, issued < previous { return false }
        return true
    }

    /// Parses bytes read back from disk; `nil` when they are not what `method` stores.
    init?(method: RevocationMethod, der: [UInt8]) {
        switch method {
        case .ocsp:
            guard let response = try? OCSPResponse(derEncoded: der) else { return nil }
            self.init(ocsp: response, der: der, origin: nil)
        case .crl:
            guard let crl = try? CertificateRevocationList(bytes: der) else { return nil }
            self.init(crl: ProfiledCRL(crl), der: der, origin: nil)
        }
    }

    var ocspResponse: OCSPResponse? {
        if case .ocsp(let response) = parsed { return response }
        return nil
    }

    var crl: ProfiledCRL? {
        if case .crl(let crl) = parsed { return crl }
        return nil
    }
}

/// One fetch in progress, which other evaluations can wait for.
private final class Flight: Sendable {
    private let group = DispatchGroup()
    private let outcome = Locked<RevocationCache.FetchOutcome?>(nil)

    init() { group.enter() }

    func finish(_ result: RevocationCache.FetchOutcome) {
        outcome.withLock { $0 = result }
        group.leave()
    }

    /// The outcome, or `nil` if `deadline` came first.
    func wait(until deadline: ContinuousClock.Instant) -> RevocationCache.FetchOutcome? {
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero else { return outcome.withLock { $0 } }
        let (seconds, attoseconds) = remaining.components
        let nanoseconds = Int(clamping: seconds) &* 1_000_000_000 &+ Int(attoseconds / 1_000_000_000)
        guard group.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success else { return nil }
        return outcome.withLock { $0 }
    }
}

private struct Failure: Sendable {
    let until: ContinuousClock.Instant
    let reason: RevocationStatus.UnknownReason
    let explanation: String
}

/// The cache's state, behind its mutex.
private struct State: Sendable {
    var entries: [RevocationCacheKey: (data: CachedRevocationData, lastUse: UInt64)] = [:]
    var flights: [RevocationCacheKey: Flight] = [:]
    var failures: [RevocationCacheKey: Failure] = [:]
    /// OCSP responders that answered a SHA-256 CertID with a refusal, and when.
    var sha1OnlyResponders: [String: Date] = [:]
    var bytes = 0
    var clock: UInt64 = 0
    var waiting = 0
    var statistics = RevocationCache.Statistics()

    mutating func use(_ key: RevocationCacheKey) -> CachedRevocationData? {
        guard let entry = entries[key] else { return nil }
        clock += 1
        entries[key] = (entry.data, clock)
        return entry.data
    }

    /// Files `data` under `key` unless the entry there must not be rolled back; returns whether
    /// it did.
    @discardableResult
    mutating func insert(_ key: RevocationCacheKey, _ data: CachedRevocationData, limits: (entries: Int, bytes: Int)) -> Bool {
        if let old = entries[key] {
            guard data.mayReplace(old.data) else { return false }
            bytes -= old.data.der.count
        }
        clock += 1
        entries[key] = (data, clock)
        bytes += data.der.count
        while entries.count > limits.entries || (bytes > limits.bytes && entries.count > 1) {
            guard let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse }) else { break }
            entries[oldest.key] = nil
            bytes -= oldest.value.data.der.count
            statistics.evictions += 1
        }
        // Failures expire on their own; bound them too, so a flood of bad responders cannot grow them.
        if failures.count > limits.entries {
            let now = ContinuousClock.now
            failures = failures.filter { $0.value.until > now }
        }
        return true
    }
}
