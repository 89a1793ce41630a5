#if LifecycleService
import Foundation
import Logging
import ServerTrust
import ServerTrustHTTP
import ServerTrustTUF
import ServerTrustUpdates
import ServiceLifecycle
import ServiceLifecycleTestKit
import ServerTrustTestSupport
import Testing

/// `TrustUpdateClient` as a swift-service-lifecycle `Service` in a `ServiceGroup` beside a
/// second service, against the published repository of ``TrustUpdateTests/Fixture``: it
/// restores and refreshes; a graceful shutdown ends the sleep at once, starts no new refresh
/// and lets a refresh in flight finish whole; cancellation (the group's escalation) abandons
/// one, putting nothing of it in force. Every wait is on an event (a fetch held, the group
/// returned, a second refresh started), never on the wall clock.
@Suite struct TrustUpdateServiceTests {
    /// What the services, the fetcher and the client's log did, in order; the test waits on it.
    final class Events: Sendable {
        enum Event: Sendable, Equatable {
            /// A fetch started: the URL's last path component.
            case fetch(String)
            /// The fetch of this file (`snapshot.json` for `2.snapshot.json`) is held until
            /// ``HoldingFetcher/release()``.
            case held(String)
            /// The held fetch's task saw the graceful shutdown.
            case shutdownSeenWhileHeld
            /// The held fetch went on; whether its task was cancelled then.
            case released(cancelled: Bool)
            /// The client logged this (notice and above).
            case log(String)
            case appStopped
            case groupReturned
        }

        private struct State {
            var events: [Event] = []
            var waiter: (predicate: @Sendable ([Event]) -> Bool, continuation: CheckedContinuation<Void, Never>)?
        }
        private let state = Locked(State())

        var all: [Event] { state.withLock { $0.events } }

        func record(_ event: Event) {
            let ready = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.events.append(event)
                guard let waiter = state.waiter, waiter.predicate(state.events) else { return nil }
                state.waiter = nil
                return waiter.continuation
            }
            ready?.resume()
        }

        /// Returns once `predicate` holds of the events so far (one waiter at a time).
        func wait(until predicate: @escaping @Sendable ([Event]) -> Bool) async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if predicate(state.events) { return true }
                    state.waiter = (predicate, continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }

        /// The refreshes started: each begins with `timestamp.json` (after the root probe).
        static func refreshes(_ events: [Event]) -> Int { events.filter { $0 == .fetch("timestamp.json") }.count }

        /// A logger whose notice-and-above records land here.
        var logger: Logger {
            var logger = Logger(label: "servertrust") { _ in Handler(events: self) }
            logger.logLevel = .notice
            return logger
        }

        private struct Handler: LogHandler {
            let events: Events
            var metadata: Logger.Metadata = [:]
            var logLevel: Logger.Level = .notice
            subscript(metadataKey key: String) -> Logger.Metadata.Value? {
                get { metadata[key] }
                set { metadata[key] = newValue }
            }
            func log(event: LogEvent) { events.record(.log("\(event.message)")) }
        }
    }

    /// The real fetcher (over the update host's pinned session), holding the first fetch of
    /// one file until released — or until its task is cancelled, which it then reports as a
    /// failed download, as a cancelled transfer is.
    final class HoldingFetcher: TUFFetching {
        let inner: any TUFFetching
        let events: Events
        private struct Gate {
            var file: String?
            var open = false
            var waiter: CheckedContinuation<Void, Never>?
        }
        private let gate: Locked<Gate>

        init(_ inner: any TUFFetching, holding file: String?, events: Events) {
            (self.inner, self.events, gate) = (inner, events, Locked(Gate(file: file)))
        }

        func fetch(_ url: String, maximumLength: Int, deadline: ContinuousClock.Instant) async throws(TUFError) -> [UInt8] {
            let name = String(url.split(separator: "/").last ?? "")
            events.record(.fetch(name))
            let held = gate.withLock { gate -> String? in
                guard let file = gate.file, name == file || name.hasSuffix("." + file) else { return nil }
                gate.file = nil
                return file
            }
            if let held {
                await withTaskCancellationHandler {
                    await withGracefulShutdownHandler {
                        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                            let now = gate.withLock { gate -> Bool in
                                if gate.open { return true }
                                gate.waiter = continuation
                                return false
                            }
                            events.record(.held(held))
                            if now { continuation.resume() }
                        }
                    } onGracefulShutdown: { [events] in
                        events.record(.shutdownSeenWhileHeld)
                    }
                } onCancel: {
                    self.release()
                }
                events.record(.released(cancelled: Task.isCancelled))
                if Task.isCancelled { throw TUFError(.downloadFailed, "\(url): cancelled") }
            }
            return try await inner.fetch(url, maximumLength: maximumLength, deadline: deadline)
        }

        func release() {
            let waiter = gate.withLock { gate -> CheckedContinuation<Void, Never>? in
                gate.open = true
                defer { gate.waiter = nil }
                return gate.waiter
            }
            waiter?.resume()
        }
    }

    /// The application beside the update client: runs until the graceful shutdown.
    struct App: Service {
        let events: Events
        func run() async throws {
            try? await gracefulShutdown()
            events.record(.appStopped)
        }
    }

    /// A schedule that refreshes again at once: a second refresh after a shutdown would start
    /// (and be seen) at once rather than in an hour.
    static let immediately: TrustUpdateSchedule = {
        var schedule = TrustUpdateSchedule()
        (schedule.interval, schedule.jitter, schedule.retryAfterFailure, schedule.minimumDelay) = (0, 0, 0, 0)
        return schedule
    }()

    /// An hour between refreshes, however near an expiry.
    static let hourly: TrustUpdateSchedule = {
        var schedule = TrustUpdateSchedule()
        (schedule.interval, schedule.jitter, schedule.refreshBeforeExpiry) = (3_600, 0, 0)
        return schedule
    }()

    static let quiet = Logger(label: "group") { _ in SwiftLogNoOpLogHandler() }

    /// A client of the fixture's repository on `directory`, fetching through `fetcher`.
    static func client(
        _ fixture: TrustUpdateTests.Fixture, fetcher: any TUFFetching, directory: String, schedule: TrustUpdateSchedule = TrustUpdateSchedule(),
        logger: Logger = quiet
    ) throws -> TrustUpdateClient {
        var configuration = TrustUpdateClient.Configuration(
            metadataDirectory: directory,
            initialRoot: try InitialRoot(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: fixture.repository + "/root.json")))),
            repositoryURL: fixture.updates.url("", host: TrustUpdateTests.updateHost))
        configuration.updater.downloadTimeBudget = .seconds(600)
        configuration.schedule = schedule
        return try TrustUpdateClient(floor: try fixture.floor(), configuration: configuration, fetcher: fetcher, logger: logger)
    }

    /// A store holding state `state` of the repository, put there by an earlier run: the
    /// directory and the status of that run.
    static func storeHolding(_ state: Int, _ fixture: TrustUpdateTests.Fixture, _ session: Session) async throws -> (String, TrustUpdateStatus) {
        let directory = TUFTooling.temporaryDirectory("service")
        fixture.servedState = state
        let status = try await client(fixture, fetcher: SessionTUFFetcher(session: session), directory: directory).refresh()
        try #require(status.lastOutcome == .applied, "\(status)")
        return (directory, status)
    }

    /// Files a writer left half-done (`*.tmp-*`) in the store or its target cache.
    static func temporaryFiles(_ directory: String) -> [String] {
        [directory, directory + "/targets"].flatMap { dir in
            ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.contains(".tmp-") }.map { dir + "/" + $0 }
        }
    }

    /// Runs `group` in a task that records `.groupReturned` when `run()` returns.
    static func start(_ group: ServiceGroup, _ events: Events) -> Task<Void, Never> {
        Task {
            try? await group.run()
            events.record(.groupReturned)
        }
    }

    /// The group restores the stored state (state 0), refreshes (state 1 applied, a new
    /// generation), and a graceful shutdown while the client sleeps its hour ends the sleep:
    /// the group returns, having started one refresh, with `stopped` saying why. Were the sleep
    /// deaf to the shutdown, the group's escalation would cancel the client after 60 s, and
    /// `stopped` would say `cancelled`.
    @Test func aGracefulShutdownWhileAsleepEndsTheSleepAtOnce() async throws {
        let fixture = try TrustUpdateTests.Fixture()
        defer { fixture.stop() }
        let session = try fixture.updateSession()
        defer { session.shutdown() }
        let (directory, earlier) = try await Self.storeHolding(0, fixture, session)
        let events = Events()
        let updates = try Self.client(
            fixture, fetcher: HoldingFetcher(SessionTUFFetcher(session: session), holding: nil, events: events), directory: directory,
            schedule: Self.hourly, logger: events.logger)
        fixture.servedState = 1
        var configuration = ServiceGroupConfiguration(services: [updates, App(events: events)], logger: Self.quiet)
        configuration.maximumGracefulShutdownDuration = .seconds(60)
        let group = ServiceGroup(configuration: configuration)
        let running = Self.start(group, events)

        // The restore's "applied", then the refresh's.
        await events.wait { $0.filter { if case .log(let line) = $0 { line.hasPrefix("Trust update applied") } else { false } }.count == 2 }
        #expect(updates.status.lastOutcome == .applied)
        #expect(updates.status.generation == 3)
        #expect(updates.status.policySHA256 != earlier.policySHA256)
        await group.triggerGracefulShutdown()
        await running.value

        let all = events.all
        #expect(all.contains(.appStopped))
        #expect(Events.refreshes(all) == 1, "\(all)")
        #expect(updates.status.stopped == .gracefulShutdown)
        #expect(updates.status.nextRefresh == nil)
        #expect(all.contains(.log("Trust updates stopped (graceful shutdown): the policy in force stays")), "\(all)")
        #expect(updates.liveTrustManager.generation == 3)
    }

    /// A graceful shutdown while the first refresh's snapshot download is in flight: the
    /// download is not cancelled, the refresh finishes and is applied whole (state 1, a new
    /// generation), no refresh follows, and the store holds no temporary file. A new client on
    /// the same store restores the same state.
    @Test func aGracefulShutdownMidRefreshLetsTheRefreshFinishWhole() async throws {
        let fixture = try TrustUpdateTests.Fixture()
        defer { fixture.stop() }
        let session = try fixture.updateSession()
        defer { session.shutdown() }
        let (directory, earlier) = try await Self.storeHolding(0, fixture, session)
        let events = Events()
        let fetcher = HoldingFetcher(SessionTUFFetcher(session: session), holding: "snapshot.json", events: events)
        let updates = try Self.client(fixture, fetcher: fetcher, directory: directory, schedule: Self.immediately, logger: events.logger)
        fixture.servedState = 1
        let group = ServiceGroup(services: [updates, App(events: events)], logger: Self.quiet)
        let running = Self.start(group, events)

        await events.wait { $0.contains(.held("snapshot.json")) }
        #expect(updates.status.generation == 2, "the restored state 0")
        await group.triggerGracefulShutdown()
        // The app stops first, then the update client is told: only then is the fetch let go.
        await events.wait { $0.contains(.shutdownSeenWhileHeld) }
        fetcher.release()
        // A second refresh would start at once (the schedule's delay is zero): it must not.
        await events.wait { $0.contains(.groupReturned) || Events.refreshes($0) > 1 }
        if !events.all.contains(.groupReturned) {
            running.cancel()
            await running.value
        }

        let all = events.all
        #expect(all.contains(.released(cancelled: false)), "\(all)")
        #expect(Events.refreshes(all) == 1, "\(all)")
        let status = updates.status
        #expect(status.lastOutcome == .applied)
        #expect(status.inForce == .delivered)
        #expect(status.generation == 3)
        #expect(status.policySHA256 != earlier.policySHA256)
        #expect(status.stopped == .gracefulShutdown)
        #expect(updates.liveTrustManager.generation == 3)
        #expect(Self.temporaryFiles(directory).isEmpty, "\(Self.temporaryFiles(directory))")

        let restarted = try Self.client(fixture, fetcher: SessionTUFFetcher(session: session), directory: directory)
        let restored = await restarted.restore()
        #expect(restored.inForce == .delivered)
        #expect(restored.policySHA256 == status.policySHA256)
        #expect(restored.targetsVersion == status.targetsVersion)
    }

    /// SIGTERM, then the group's escalation: a graceful shutdown while the refresh's timestamp
    /// download hangs, and the group cancels the client when its (tiny) graceful-shutdown time
    /// is up. The download is cancelled, nothing of the new state is put in force (state 0's
    /// generation stays), no temporary file is left, and a new client on the store restores
    /// state 0.
    @Test func cancellationMidRefreshPutsNothingOfItInForce() async throws {
        let fixture = try TrustUpdateTests.Fixture()
        defer { fixture.stop() }
        let session = try fixture.updateSession()
        defer { session.shutdown() }
        let (directory, earlier) = try await Self.storeHolding(0, fixture, session)
        let events = Events()
        let fetcher = HoldingFetcher(SessionTUFFetcher(session: session), holding: "timestamp.json", events: events)
        let updates = try Self.client(fixture, fetcher: fetcher, directory: directory, schedule: Self.immediately, logger: events.logger)
        fixture.servedState = 1
        var configuration = ServiceGroupConfiguration(services: [updates, App(events: events)], logger: Self.quiet)
        configuration.maximumGracefulShutdownDuration = .milliseconds(1)
        let group = ServiceGroup(configuration: configuration)
        let running = Self.start(group, events)

        await events.wait { $0.contains(.held("timestamp.json")) }
        await group.triggerGracefulShutdown()
        await events.wait { $0.contains(.groupReturned) || Events.refreshes($0) > 1 }
        if !events.all.contains(.groupReturned) {
            running.cancel()
            await running.value
        }

        let all = events.all
        #expect(all.contains(.released(cancelled: true)), "\(all)")
        #expect(Events.refreshes(all) == 1, "\(all)")
        let status = updates.status
        #expect(status.stopped == .cancelled)
        #expect(status.lastOutcome == .failed)
        #expect(status.generation == 2)
        #expect(status.policySHA256 == earlier.policySHA256)
        #expect(updates.liveTrustManager.generation == 2)
        #expect(all.contains(.log("Trust updates stopped (cancelled): the policy in force stays")), "\(all)")
        #expect(Self.temporaryFiles(directory).isEmpty, "\(Self.temporaryFiles(directory))")

        let restarted = try Self.client(fixture, fetcher: SessionTUFFetcher(session: session), directory: directory)
        let restored = await restarted.restore()
        #expect(restored.inForce == .delivered)
        #expect(restored.policySHA256 == earlier.policySHA256)
    }

    /// A client started in a task already shutting down gracefully (ServiceLifecycleTestKit's
    /// trigger, pulled before `run()`): it restores the stored state, fetches nothing and
    /// returns. With a zero delay, a client deaf to the shutdown would fetch at once.
    @Test func aClientStartedWhileShuttingDownRestoresAndReturnsWithoutRefreshing() async throws {
        let fixture = try TrustUpdateTests.Fixture()
        defer { fixture.stop() }
        let session = try fixture.updateSession()
        defer { session.shutdown() }
        let (directory, earlier) = try await Self.storeHolding(0, fixture, session)
        let events = Events()
        let fetcher = HoldingFetcher(SessionTUFFetcher(session: session), holding: nil, events: events)
        let updates = try Self.client(fixture, fetcher: fetcher, directory: directory, schedule: Self.immediately, logger: events.logger)
        fixture.servedState = 1
        await testGracefulShutdown { trigger in
            trigger.triggerGracefulShutdown()
            // An unstructured task inherits the task-local shutdown state.
            let running = Task {
                await updates.run()
                events.record(.groupReturned)
            }
            await events.wait { $0.contains(.groupReturned) || $0.contains { if case .fetch = $0 { true } else { false } } }
            if !events.all.contains(.groupReturned) { running.cancel() }
            await running.value
        }

        let all = events.all
        #expect(!all.contains { if case .fetch = $0 { true } else { false } }, "\(all)")
        let status = updates.status
        #expect(status.stopped == .gracefulShutdown)
        #expect(status.lastAttempt == nil)
        #expect(status.inForce == .delivered, "the restore ran")
        #expect(status.policySHA256 == earlier.policySHA256)
    }
}
#endif
