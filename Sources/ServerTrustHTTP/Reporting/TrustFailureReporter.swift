public import Foundation
public import ServerTrust
import HTTPTypes

/// Sends `TrustFailureReport`s to report URIs, in the background, through a session of its own
/// that uses default validation only.
///
/// Why a separate session: a report describes a failure of the host's policy, and the report
/// URI may be covered by that same failing policy (`**.example.com` pinned to keys that no
/// longer match, or an interception proxy in the way). Reports therefore never go through the
/// reporting session's trust manager: the reporter's own ``Session`` has no manager
/// (`DefaultTrustEvaluator` for every host), and no reporter of its own, so a failure to
/// deliver a report is never itself reported.
///
/// Delivery is asynchronous: ``submit(_:hostURIs:)`` only queues and returns at once. An
/// identical report (same `TrustFailureReport.deduplicationKey`: host, port, chain, evaluator,
/// reason, mode, pins) is queued at most once per ``Configuration/deduplicationInterval``
/// (24 hours); at most ``Configuration/maximumQueuedReports`` wait, further reports are dropped
/// and counted in `TrustCounters.Snapshot.reportsDropped`.
///
/// ```swift
/// var reporting = TrustFailureReporter.Configuration()
/// reporting.reportURIs = [URL(string: "https://reports.example.net/pins")!]
/// var configuration = Session.Configuration()
/// configuration.failureReporter = try TrustFailureReporter(reporting)
/// ```
public final class TrustFailureReporter: Sendable {
    /// Where and how reports go. The defaults are safe for production.
    public struct Configuration: Sendable {
        /// Report URIs for every host whose policy names none of its own
        /// (`HostPolicy.reportURIs`). `https:` only. Default: none.
        public var reportURIs: [URL] = []
        /// Reports waiting to be sent at most; more are dropped and counted. Default 32.
        public var maximumQueuedReports: Int = 32
        /// An identical report is sent at most once within this interval. Default 24 hours.
        public var deduplicationInterval: Duration = .seconds(86_400)
        /// Anchors the reporting session validates report URIs against. Default: the system
        /// CA bundle.
        public var anchors: Session.Anchors = .system
        /// Name-to-address mappings for report URIs, curl's `HOST:PORT:ADDRESS` form.
        public var resolve: [String] = []
        /// How long one delivery may take. Default 10 s.
        public var timeout: Duration = .seconds(10)
        /// Where sent, dropped and suppressed reports are counted. Share it with the session's
        /// ``Session/Configuration/trustCounters`` for one set of numbers. Default: a fresh set.
        public var counters: TrustCounters = TrustCounters()
        /// The clock reports are stamped and deduplicated with. Default: the system clock.
        public var clock: @Sendable () -> Date = { Date() }

        /// Testing hook: queue reports without sending them until ``releaseHeldReports()``.
        var holdsReports = false

        public init() {}
    }

    /// What became of a submitted report.
    public enum Submission: Hashable, Sendable, CustomStringConvertible {
        /// Queued for delivery.
        case queued
        /// An identical report was queued within the deduplication interval.
        case suppressed
        /// The queue was full (or the reporter shut down); counted as dropped.
        case dropped
        /// No report URI applies to the host.
        case noReportURI

        public var description: String {
            switch self {
            case .queued: "report queued"
            case .suppressed: "report suppressed (identical report sent within 24 h)"
            case .dropped: "report dropped"
            case .noReportURI: "no report URI"
            }
        }
    }

    public let configuration: Configuration
    public var counters: TrustCounters { configuration.counters }

    private let session: Session
    private let state = Locked(State())

    private struct Pending {
        let report: TrustFailureReport
        let uris: [URL]
    }

    private struct State {
        var queue: [Pending] = []
        var lastQueued: [String: Date] = [:]
        var draining = false
        var held = false
        var shutDown = false
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// The most deduplication entries kept; beyond it, entries older than the interval go, and
    /// if that is not enough all of them (an identical report may then be sent again).
    static let deduplicationMemory = 4_096

    /// - Throws: ``SessionError/Code/invalidRequest`` for a report URI that is not `https:`
    ///   with a host, or a non-positive queue bound; what ``Session/init(configuration:trustManager:)``
    ///   throws when the reporting session cannot be created.
    public init(_ configuration: Configuration) throws {
        for uri in configuration.reportURIs {
            guard uri.scheme?.lowercased() == "https", let host = uri.host, !host.isEmpty else {
                throw SessionError(.invalidRequest, "Report URI \(URLRedaction.redacted(uri)) is not an https: URL with a host.", url: uri.absoluteString)
            }
        }
        guard configuration.maximumQueuedReports > 0 else {
            throw SessionError(.invalidRequest, "maximumQueuedReports must be at least 1 (it is \(configuration.maximumQueuedReports)).")
        }
        self.configuration = configuration
        var sessionConfiguration = Session.Configuration()
        sessionConfiguration.anchors = configuration.anchors
        sessionConfiguration.resolve = configuration.resolve
        sessionConfiguration.requestTimeout = configuration.timeout
        sessionConfiguration.connectTimeout = configuration.timeout
        sessionConfiguration.redirectPolicy = .disallow
        session = try Session(configuration: sessionConfiguration, trustManager: nil)
        state.withLock { $0.held = configuration.holdsReports }
    }

    deinit { session.shutdown() }

    /// Stops delivering; reports still queued are dropped. Idempotent.
    public func shutdown() {
        let (dropped, waiters) = state.withLock { state in
            state.shutDown = true
            defer { state.queue.removeAll(); state.idleWaiters.removeAll() }
            return (state.queue.count, state.idleWaiters)
        }
        for _ in 0..<dropped { counters.recordReportDropped() }
        session.shutdown()
        waiters.forEach { $0.resume() }
    }

    /// Queues `report` for `hostURIs` (the host policy's, `HostPolicy.reportURIs`), else for
    /// the default ones (``Configuration/reportURIs``). Never blocks.
    @discardableResult
    public func submit(_ report: TrustFailureReport, hostURIs: [URL] = []) -> Submission {
        submit(report, to: hostURIs.isEmpty ? configuration.reportURIs : hostURIs)
    }

    private func submit(_ report: TrustFailureReport, to uris: [URL]) -> Submission {
        guard !uris.isEmpty else { return .noReportURI }
        let now = configuration.clock()
        let interval = Self.seconds(configuration.deduplicationInterval)
        let key = report.deduplicationKey
        let (submission, startDraining) = state.withLock { state -> (Submission, Bool) in
            if state.shutDown { return (.dropped, false) }
            if let last = state.lastQueued[key], now.timeIntervalSince(last) < interval { return (.suppressed, false) }
            guard state.queue.count < configuration.maximumQueuedReports else { return (.dropped, false) }
            state.queue.append(Pending(report: report, uris: uris))
            if state.lastQueued.count >= Self.deduplicationMemory {
                state.lastQueued = state.lastQueued.filter { now.timeIntervalSince($0.value) < interval }
                if state.lastQueued.count >= Self.deduplicationMemory { state.lastQueued.removeAll() }
            }
            state.lastQueued[key] = now
            let start = !state.draining && !state.held
            if start { state.draining = true }
            return (.queued, start)
        }
        switch submission {
        case .suppressed: counters.recordReportSuppressed()
        case .dropped: counters.recordReportDropped()
        default: break
        }
        if startDraining { Task.detached { await self.drain() } }
        return submission
    }

    /// Returns once every queued report has been delivered or given up.
    public func flush() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                if state.shutDown || (!state.draining && (state.queue.isEmpty || state.held)) { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    /// Reports waiting to be sent.
    public var queuedReports: Int { state.withLock { $0.queue.count } }

    /// Testing hook: starts delivering the reports held since ``Configuration/holdsReports``.
    func releaseHeldReports() {
        let start = state.withLock { state -> Bool in
            state.held = false
            guard !state.draining, !state.queue.isEmpty, !state.shutDown else { return false }
            state.draining = true
            return true
        }
        if start { Task.detached { await self.drain() } }
    }

    private func drain() async {
        while true {
            // Going idle and waking the flush waiters happen under one lock, so a report
            // submitted meanwhile starts a new drain with its own waiters.
            let (next, waiters) = state.withLock { state -> (Pending?, [CheckedContinuation<Void, Never>]) in
                guard !state.shutDown, !state.queue.isEmpty else {
                    state.draining = false
                    defer { state.idleWaiters.removeAll() }
                    return (nil, state.idleWaiters)
                }
                return (state.queue.removeFirst(), [])
            }
            guard let next else {
                waiters.forEach { $0.resume() }
                return
            }
            await deliver(next)
        }
    }

    /// POSTs the report to each URI; a report no URI accepted is forgotten by deduplication,
    /// so the next identical failure tries again.
    private func deliver(_ pending: Pending) async {
        let body = Array(pending.report.jsonData())
        var delivered = false
        for uri in pending.uris {
            let request = Request(method: .post, url: uri, headers: [.contentType: "application/json"], body: body)
            if let response = try? await session.data(for: request), (200..<300).contains(response.status.code) {
                counters.recordReportSent()
                delivered = true
            } else {
                counters.recordReportDropped()
            }
        }
        if !delivered {
            let key = pending.report.deduplicationKey
            state.withLock { _ = $0.lastQueued.removeValue(forKey: key) }
        }
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
