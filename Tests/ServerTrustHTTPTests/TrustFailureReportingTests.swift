import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// Failure reports: RFC 7469 JSON posted by a separate, default-validation session to a local
/// report collector, deduplicated over 24 hours of an injected clock, with a bounded queue.
@Suite struct TrustFailureReportingTests {
    static let host = SessionFixture.host
    static let reportHost = "reports.servertrust.test"
    static var otherPin: Pin { get throws { try Pin("sha256/" + Data(repeating: 9, count: 32).base64EncodedString()) } }

    // MARK: What a report says

    @Test func anEnforcedPinFailureIsReportedAsRFC7469JSONWithTheServedAndValidatedChains() async throws {
        let lab = try ReportLab()
        let session = try lab.session([Self.host: try .pinnedKeyHashes([SessionFixture.unrelatedPin, Self.otherPin])])
        defer { session.shutdown() }

        let result = await outcome { try await session.get(lab.fixture.url("/status/200").absoluteString) }
        #expect(result.sessionError?.code == .trustEvaluationFailed)
        #expect(result.sessionError?.rejectedTrust?.result == .failed(.pinMismatch))
        await lab.reporter.flush()

        let posts = lab.reports()
        try #require(posts.count == 1)
        #expect(lab.collector.recentRequests.last?.method == "POST")
        #expect(lab.collector.recentRequests.last?.header("Content-Type") == "application/json")
        let report = posts[0]
        #expect(Set(report.keys) == [
            "date-time", "hostname", "port", "effective-expiration-date", "include-subdomains", "noted-hostname",
            "served-certificate-chain", "validated-certificate-chain", "known-pins", "evaluator", "reason", "message", "mode",
        ])
        #expect(report["date-time"] as? String == "2026-11-23T09:00:00Z")
        #expect(report["hostname"] as? String == Self.host)
        #expect(report["port"] as? Int == lab.fixture.server.port)
        #expect(report["effective-expiration-date"] is NSNull)
        #expect(report["include-subdomains"] as? Bool == false)
        #expect(report["noted-hostname"] as? String == Self.host)
        #expect(report["served-certificate-chain"] as? [String] == lab.fixture.leaf.chain.map(\.pemEncoded))
        #expect(report["validated-certificate-chain"] as? [String]
            == [lab.fixture.leaf.certificate, lab.fixture.intermediate.certificate, lab.fixture.root.certificate].map(\.pemEncoded))
        #expect(try report["known-pins"] as? [String] == [SessionFixture.unrelatedPin, Self.otherPin].sorted().map { "pin-sha256=\"\($0.base64)\"" })
        #expect(report["evaluator"] as? String == "PinnedKeyHashesTrustEvaluator")
        #expect(report["reason"] as? String == "pinMismatch")
        #expect(report["mode"] as? String == "enforced")
        #expect(lab.reporter.counters.snapshot.reportsSent == 1)
        #expect(session.counters.snapshot.failuresByReason == ["pinMismatch": 1])
    }

    /// Third review, finding 4: neither the RFC 7469 report nor the event's description carries
    /// the URL's credentials or token; the event's `url` keeps them for the program.
    @Test func finding4AFailureReportAndItsEventCarryNoUserInfoOrQuery() async throws {
        let lab = try ReportLab()
        let session = try lab.session([Self.host: try .pinnedKeyHashes([SessionFixture.unrelatedPin, Self.otherPin])])
        defer { session.shutdown() }
        let url = "https://user:pw@\(Self.host):\(lab.fixture.server.port)/p?access_token=SECRET"

        let error = await outcome { try await session.get(url) }.sessionError
        #expect(error?.code == .trustEvaluationFailed)
        await lab.reporter.flush()

        let bodies = lab.collector.recentRequests.filter { $0.path == "/report" }.map { String(decoding: $0.body, as: UTF8.self) }
        try #require(bodies.count == 1)
        #expect(bodies[0].contains("\"hostname\":\"\(Self.host)\""), "\(bodies[0])")
        // "user:pw", not "pw": the chains' base64 may hold those two letters.
        #expect(!bodies[0].contains("user:pw"), "\(bodies[0])")
        #expect(!bodies[0].contains("SECRET"), "\(bodies[0])")
        let event = try #require(lab.events.all.first)
        #expect(event.description.contains("https://\(Self.host):\(lab.fixture.server.port)/p: pinMismatch"), "\(event)")
        #expect(!event.description.contains("user:pw"), "\(event)")
        #expect(!event.description.contains("SECRET"), "\(event)")
        #expect(event.url.absoluteString == url)
    }

    @Test func anInformationalFailureReturnsTheResponseMarkedFailedAndIsReported() async throws {
        let lab = try ReportLab()
        let expiration = lab.clock.now.addingTimeInterval(90 * 86_400)
        let pins = try PinSet(
            [.init(SessionFixture.unrelatedPin, label: "next key"), .init(Self.otherPin, label: "backup")], expiration: expiration)
        let session = try lab.session(["*.servertrust.test": .informational(try .pinSet(pins))])
        defer { session.shutdown() }

        let response = try await session.get(lab.fixture.url("/status/200").absoluteString)
        #expect(response.status == 200)
        #expect(response.trustResult == .failed(.pinMismatch))
        #expect(response.trust.findings.map(\.mode) == [.informational])
        await lab.reporter.flush()

        let report = try #require(lab.reports().first)
        #expect(report["mode"] as? String == "informational")
        #expect(report["reason"] as? String == "pinMismatch")
        #expect(report["evaluator"] as? String == "PinSetTrustEvaluator")
        #expect(report["include-subdomains"] as? Bool == true)
        #expect(report["noted-hostname"] as? String == "servertrust.test")
        #expect(report["effective-expiration-date"] as? String == PinSet.format(expiration))
    }

    @Test func aTrustedResponseIsVerifiedAndPlainHTTPIsNotRequestedAndNeitherIsReported() async throws {
        let lab = try ReportLab()
        let session = try lab.session([
            Self.host: try .pinnedKeyHashes([lab.fixture.intermediatePin, Self.otherPin]), "127.0.0.1": DefaultTrustEvaluator(),
        ]) {
            $0.allowsPlainHTTP = true
        }
        defer { session.shutdown() }
        let plain = try LocalHTTPServer()
        defer { plain.stop() }

        #expect(try await session.get(lab.fixture.url("/status/200").absoluteString).trustResult == .verified)
        #expect(try await session.get(plain.url("/status/200")).trustResult == .notRequested)
        await lab.reporter.flush()
        #expect(lab.reports().isEmpty)
        #expect(lab.events.all.isEmpty)
    }

    // MARK: Delivery

    @Test func anIdenticalReportIsSentOncePer24HoursOfTheInjectedClock() async throws {
        let lab = try ReportLab()
        let session = try lab.session([Self.host: .informational(try .pinnedKeyHashes([SessionFixture.unrelatedPin]))])
        defer { session.shutdown() }
        let url = lab.fixture.url("/status/200").absoluteString

        _ = try await session.get(url)
        _ = try await session.get(url)
        lab.clock.advance(by: 86_399)
        _ = try await session.get(url)
        lab.clock.advance(by: 1)
        _ = try await session.get(url)
        await lab.reporter.flush()

        #expect(lab.events.all.map(\.submission) == [.queued, .suppressed, .suppressed, .queued])
        #expect(lab.reports().count == 2)
        #expect(lab.reports().map { $0["date-time"] as? String } == ["2026-11-23T09:00:00Z", "2026-11-24T09:00:00Z"])
        let counts = lab.reporter.counters.snapshot
        #expect(counts.reportsSent == 2)
        #expect(counts.reportsSuppressed == 2)
        #expect(counts.reportsDropped == 0)
    }

    @Test func theQueueIsBoundedAndDropsAreCounted() async throws {
        let lab = try ReportLab { $0.maximumQueuedReports = 2; $0.holdsReports = true }
        let submissions = try ["a", "b", "c"].map { name in
            lab.reporter.submit(try lab.report(hostname: "\(name).servertrust.test"))
        }
        #expect(submissions == [.queued, .queued, .dropped])
        #expect(lab.reporter.queuedReports == 2)
        #expect(lab.reporter.counters.snapshot.reportsDropped == 1)

        lab.reporter.releaseHeldReports()
        await lab.reporter.flush()
        #expect(lab.reports().map { $0["hostname"] as? String } == ["a.servertrust.test", "b.servertrust.test"])
        #expect(lab.reporter.counters.snapshot.reportsSent == 2)
        #expect(lab.reporter.counters.snapshot.reportsDropped == 1)
    }

    @Test func aReportTheCollectorRefusesIsCountedAsDroppedAndMayBeSentAgain() async throws {
        let lab = try ReportLab(collectorStatus: 503)
        let report = try lab.report(hostname: Self.host)
        #expect(lab.reporter.submit(report) == .queued)
        await lab.reporter.flush()
        #expect(lab.reporter.counters.snapshot.reportsDropped == 1)
        #expect(lab.reporter.counters.snapshot.reportsSent == 0)
        #expect(lab.reporter.submit(report) == .queued)
        await lab.reporter.flush()
        #expect(lab.collector.recentRequests.count == 2)
    }

    @Test func reportsGoThroughDefaultValidationEvenWhenTheFailingPolicyCoversTheReportURI() async throws {
        let lab = try ReportLab()
        // The pattern covers the collector's host too: through this policy its TLS would fail.
        let session = try lab.session(["**.servertrust.test": try .pinnedKeyHashes([SessionFixture.unrelatedPin, Self.otherPin])]) {
            $0.resolve.append(lab.collector.resolveEntry(host: Self.reportHost))
        }
        defer { session.shutdown() }

        let direct = await outcome { try await session.post(lab.reportURI.absoluteString, body: []) }
        #expect(direct.sessionError?.trustError?.code == .pinMismatch)
        let failed = await outcome { try await session.get(lab.fixture.url("/status/200").absoluteString) }
        #expect(failed.sessionError?.code == .trustEvaluationFailed)
        await lab.reporter.flush()

        #expect(lab.reports().map { $0["hostname"] as? String } == [Self.reportHost, Self.host])
        #expect(lab.reporter.counters.snapshot.reportsSent == 2)
    }

    @Test func aPolicyFileSendsEachHostsReportsToItsOwnReportURI() async throws {
        let lab = try ReportLab()
        let policy = try TrustPolicyFile(data: Array("""
            { "version": 1, "reportURIs": ["https://unused.servertrust.test/"], "hosts": {
                "\(Self.host)": { "mode": "informational", "reportURIs": ["\(lab.reportURI.absoluteString)?host=api"],
                                   "pins": [{ "pin": "\(SessionFixture.unrelatedPin)" }, { "pin": "\(Self.otherPin)" }] } } }
            """.utf8))
        var configuration = lab.reporter.configuration
        configuration.apply(policy)
        let reporter = try TrustFailureReporter(configuration)
        let session = try Session(configuration: try lab.fixture.configuration().with { $0.failureReporter = reporter }, trustManager: policy.manager)
        defer { session.shutdown() }

        #expect(try await session.get(lab.fixture.url("/status/200").absoluteString).trustResult == .failed(.pinMismatch))
        await reporter.flush()
        #expect(lab.collector.recentRequests.map(\.target) == ["/report?host=api"])
        #expect(reporter.counters.snapshot.reportsSent == 1)
    }

    @Test func aReportURIMustBeHTTPS() throws {
        var configuration = TrustFailureReporter.Configuration()
        configuration.reportURIs = [URL(string: "http://reports.servertrust.test/pins")!]
        #expect(throws: SessionError.invalidRequest) { try TrustFailureReporter(configuration) }
    }

    // MARK: Logs and counters

    @Test func everyEvaluationIsLoggedAtDebugAndEveryFailureAtErrorWithItsMetadata() async throws {
        let fixture = try SessionFixture()
        let wrong = try PinnedKeyHashesTrustEvaluator(pins: [SessionFixture.unrelatedPin])
        for (evaluator, mode) in [(wrong as any ServerTrustEvaluating, "enforced"), (InformationalTrustEvaluator(wrong), "informational")] {
            let logs = CapturedLogs()
            let session = try fixture.session([Self.host: evaluator]) { $0.logger = logs.logger }
            defer { session.shutdown() }
            _ = await outcome { try await session.get(fixture.url("/status/200").absoluteString) }

            #expect(logs.at(.debug).count == 1)
            #expect(logs.at(.debug).first?.metadata["host"] == Self.host)
            #expect(logs.at(.debug).first?.metadata["result"]?.hasPrefix("failed (pinMismatch)") == true)
            let errors = logs.at(.error)
            #expect(errors.count == 1)
            #expect(errors.first?.metadata == [
                "host": Self.host, "evaluator": "PinnedKeyHashesTrustEvaluator", "reason": "pinMismatch", "mode": mode,
            ])
            #expect(session.counters.snapshot.evaluations == 1)
            #expect(session.counters.snapshot.failuresByReason == ["pinMismatch": 1])
        }
    }

    // MARK: An expired pin set

    /// A set whose expiration date is a day before the session evaluates it: expired without
    /// waiting. `pins` decides whether the live chain would match.
    private static func expiredSet(_ pins: [Pin], _ behaviour: PinSet.ExpiryBehaviour) throws -> PinSet {
        try PinSet(
            [.init(pins[0], label: "retired"), .init(pins[1], label: "backup")],
            expiration: Date().addingTimeInterval(-86_400), expiryBehaviour: behaviour)
    }

    @Test func anExpiredSetThatFallsBackIsAcceptedMarkedFailedReportedAndLoggedOnceAtError() async throws {
        let lab = try ReportLab()
        let logs = CapturedLogs()
        // Neither pin matches the server: only default validation admits it.
        let pins = try Self.expiredSet([SessionFixture.unrelatedPin, Self.otherPin], .fallBackToDefaultValidation)
        let session = try lab.session([Self.host: try .pinSet(pins, logger: logs.logger)]) { $0.logger = logs.logger }
        defer { session.shutdown() }

        let response = try await session.get(lab.fixture.url("/status/200").absoluteString)
        #expect(response.status == 200)
        #expect(response.trustResult == .failed(.pinSetExpired))
        #expect(response.trust.findings.map(\.mode) == [.informational])
        #expect(lab.events.all.map(\.submission) == [.queued])
        await lab.reporter.flush()

        let reports = lab.reports()
        try #require(reports.count == 1)
        #expect(reports[0]["mode"] as? String == "informational")
        #expect(reports[0]["reason"] as? String == "pinSetExpired")
        #expect(reports[0]["evaluator"] as? String == "PinSetTrustEvaluator")
        #expect(try reports[0]["known-pins"] as? [String]
            == [SessionFixture.unrelatedPin, Self.otherPin].sorted().map { "pin-sha256=\"\($0.base64)\"" })

        // One error line, from the evaluator, with the session's metadata keys; the session
        // counts the failure without logging it again.
        let errors = logs.at(.error)
        #expect(errors.count == 1, "\(errors)")
        #expect(errors.first?.metadata == [
            "host": Self.host, "evaluator": "PinSetTrustEvaluator", "reason": "pinSetExpired", "mode": "informational",
        ])
        #expect(errors.first?.message.contains("NOT enforced") == true)
        #expect(logs.at(.debug).count == 1)
        #expect(session.counters.snapshot.failuresByReason == ["pinSetExpired": 1])
    }

    @Test func anExpiredSetThatFailsClosedIsRejectedEvenWhenAPinMatches() async throws {
        let lab = try ReportLab()
        let logs = CapturedLogs()
        let pins = try Self.expiredSet([lab.fixture.intermediatePin, Self.otherPin], .failClosed)
        let session = try lab.session([Self.host: try .pinSet(pins, logger: logs.logger)]) { $0.logger = logs.logger }
        defer { session.shutdown() }

        let result = await outcome { try await session.get(lab.fixture.url("/status/200").absoluteString) }
        #expect(result.sessionError?.code == .trustEvaluationFailed)
        #expect(result.sessionError?.trustError?.code == .pinSetExpired)
        #expect(result.sessionError?.rejectedTrust?.result == .failed(.pinSetExpired))
        await lab.reporter.flush()

        #expect(lab.reports().map { $0["mode"] as? String } == ["enforced"])
        #expect(lab.reports().map { $0["reason"] as? String } == ["pinSetExpired"])
        let errors = logs.at(.error)
        #expect(errors.count == 1, "\(errors)")
        #expect(errors.first?.metadata == [
            "host": Self.host, "evaluator": "PinSetTrustEvaluator", "reason": "pinSetExpired", "mode": "enforced",
        ])
    }

    // MARK: The hook

    @Test func theHookSeesEnforcedInformationalAndCanaryFailuresWithOrWithoutAReporter() async throws {
        let fixture = try SessionFixture()
        let events = EventLog()
        let genuine = try PinnedKeyHashesTrustEvaluator(pins: [fixture.intermediatePin, Self.otherPin])
        let wrong = try PinnedKeyHashesTrustEvaluator(pins: [SessionFixture.unrelatedPin, Self.otherPin])
        for (evaluator, mode, throwsError) in [
            (wrong as any ServerTrustEvaluating, EnforcementMode.enforced, true),
            (InformationalTrustEvaluator(wrong), .informational, false),
            (CanaryTrustEvaluator(enforced: genuine, trial: wrong), .canary, false),
        ] {
            let session = try fixture.session([Self.host: evaluator]) { configuration in
                configuration.onTrustFailure = { events.append($0) }
            }
            defer { session.shutdown() }
            let result = await outcome { try await session.get(fixture.url("/status/200").absoluteString) }
            #expect((result.sessionError != nil) == throwsError)
            let event = try #require(events.all.last)
            #expect(event.report.mode == mode)
            #expect(event.submission == .noReportURI)
            #expect(event.url.host == Self.host)
            if mode == .canary {
                #expect(event.report.reason == .canaryDisagreement)
                #expect(try result.get().trustResult == .verified)
                #expect(try event.report.knownPins == [SessionFixture.unrelatedPin, Self.otherPin].sorted())
            } else {
                #expect(event.report.reason == .pinMismatch)
            }
        }
        #expect(events.all.count == 3)
    }
}

/// A fixture server, a report collector for `reports.servertrust.test` issued by the same root,
/// a reporter that trusts that root, and a clock that moves only when told.
private struct ReportLab {
    let fixture: SessionFixture
    let collector: LocalTLSServer
    let reporter: TrustFailureReporter
    let clock = TestClock(start: Date(timeIntervalSince1970: 1_795_424_400))  // 2026-11-23T09:00:00Z
    let events = EventLog()
    var reportURI: URL { URL(string: collector.url("/report", host: TrustFailureReportingTests.reportHost))! }

    init(collectorStatus: Int = 204, configure: (inout TrustFailureReporter.Configuration) -> Void = { _ in }) throws {
        fixture = try SessionFixture()
        let leaf = try fixture.intermediate.issueLeaf(dnsNames: [TrustFailureReportingTests.reportHost])
        collector = try LocalTLSServer(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey) { request in
            request.path == "/report" ? LocalHTTPResponse(status: collectorStatus) : nil
        }
        var configuration = TrustFailureReporter.Configuration()
        configuration.reportURIs = [URL(string: collector.url("/report", host: TrustFailureReportingTests.reportHost))!]
        configuration.anchors = .bundle(try fixture.root.trustAnchors())
        configuration.resolve = [collector.resolveEntry(host: TrustFailureReportingTests.reportHost)]
        configuration.clock = { [clock] in clock.now }
        configure(&configuration)
        reporter = try TrustFailureReporter(configuration)
    }

    func session(
        _ evaluators: [String: any ServerTrustEvaluating], configure: (inout Session.Configuration) -> Void = { _ in }
    ) throws -> Session {
        try fixture.session(evaluators) { [reporter, events] configuration in
            configuration.failureReporter = reporter
            configuration.onTrustFailure = { events.append($0) }
            configure(&configuration)
        }
    }

    /// The JSON objects the collector received, oldest first.
    func reports() -> [[String: Any]] {
        collector.recentRequests.filter { $0.path == "/report" }.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.body))) as? [String: Any]
        }
    }

    func report(hostname: String) throws -> TrustFailureReport {
        TrustFailureReport(
            failure: TrustError(.pinMismatch, "No pin matched.", evaluator: "PinnedKeyHashesTrustEvaluator"), mode: .enforced,
            policy: .custom(try PinnedKeyHashesTrustEvaluator(pins: [SessionFixture.unrelatedPin])), hostname: hostname, port: 443, pattern: nil,
            servedChain: fixture.leaf.chain, validatedChain: [], date: clock.now)
    }
}

final class TestClock: Sendable {
    private let time: Locked<Date>
    init(start: Date) { time = Locked(start) }
    var now: Date { time.withLock { $0 } }
    func advance(by seconds: TimeInterval) { time.withLock { $0 += seconds } }
}

final class EventLog: Sendable {
    private let events = Locked<[TrustFailureEvent]>([])
    func append(_ event: TrustFailureEvent) { events.withLock { $0.append(event) } }
    var all: [TrustFailureEvent] { events.withLock { $0 } }
}

extension Session.Configuration {
    func with(_ change: (inout Session.Configuration) -> Void) -> Session.Configuration {
        var copy = self
        change(&copy)
        return copy
    }
}

/// Second audit, finding 1, for report URIs: a report goes to the URIs of the host's policy,
/// chosen by the manager's rule (the deepest base), whatever the spelling of the pattern.
@Suite struct ReportURIPatternTests {
    private let shallow = URL(string: "https://reports.example.net/shallow")!
    private let deep = URL(string: "https://reports.example.net/deep")!

    @Test func finding1ReportURIsFollowTheDeepestPattern() throws {
        let manager = try ServerTrustManager(
            policies: [
                try HostPattern("*.example.com"): HostPolicy(reportURIs: [shallow]),
                try HostPattern("**.API.example.com."): HostPolicy(reportURIs: [deep]),
            ],
            allHostsMustBeEvaluated: false)
        #expect(try manager.resolve(host: "api.example.com").policy.reportURIs == [deep])
        #expect(try manager.resolve(host: "x.api.example.com").policy.reportURIs == [deep])
        #expect(try manager.resolve(host: "www.example.com").policy.reportURIs == [shallow])
        #expect(try manager.resolve(host: "elsewhere.test").policy.reportURIs.isEmpty)
    }

    @Test func aReportURIThatIsNotHTTPSIsRefusedNamingItsPattern() {
        let error = #expect(throws: TrustError.invalidConfiguration) {
            try ServerTrustManager(policies: [try HostPattern("*.example.com"): HostPolicy(reportURIs: [URL(string: "http://reports.example.net/")!])])
        }
        #expect(error?.reason.contains("of host pattern *.example.com is not an https: URL with a host") == true)
    }
}
