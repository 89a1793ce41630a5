import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// Issue #16: a slow revocation responder for one host must not hold up transfers to other
/// hosts. A policy whose evaluator may fetch revocation data runs on a loop of its own
/// (`RevocationLoops`); these tests park one host's handshake in its OCSP fetch — the responder
/// holds the request until the test opens a gate, no timer — and check what still moves, and
/// that the extra loops end with their policy and with the session.
@Suite struct RevocationLoopTests {
    static let slowHost = "slow-ocsp.servertrust.test"
    static let otherHost = "other.servertrust.test"
    /// Hosts under the `*.rev.servertrust.test` revocation pattern, all served by the slow server.
    static func revocationHost(_ index: Int) -> String { "h\(index).rev.servertrust.test" }
    static let requestsToOtherHost = 20

    /// Holds every OCSP request until ``open()``; a request arriving after that is answered at once.
    final class Gate: Sendable {
        private struct State {
            var held = 0
            var opened = false
            var arrival: CheckedContinuation<Void, Never>?
        }
        private let state = Locked(State())
        private let released = DispatchSemaphore(value: 0)

        /// On the responder's connection thread: waits until the gate opens.
        func hold() {
            let wait = state.withLock { state -> Bool in
                guard !state.opened else { return false }
                state.held += 1
                state.arrival?.resume()
                state.arrival = nil
                return true
            }
            if wait { released.wait() }
        }

        /// Returns once a request is being held (or the gate is open).
        func firstArrival() async {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    guard state.held == 0, !state.opened else { return true }
                    state.arrival = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        }

        /// Whether the responder is holding a request right now.
        var isHolding: Bool { state.withLock { !$0.opened && $0.held > 0 } }

        /// Lets every held request go, and every later one through. Idempotent.
        func open() {
            let held = state.withLock { state -> Int in
                guard !state.opened else { return 0 }
                state.opened = true
                state.arrival?.resume()
                state.arrival = nil
                return state.held
            }
            for _ in 0..<held { released.signal() }
        }
    }

    struct Setup {
        let root: LabCA
        let intermediate: LabCA
        /// Its leaf names the responder; serves the slow host and the `*.rev` hosts.
        let slow: LocalTLSServer
        /// Its leaf names no responder; under a pinning policy, no revocation check.
        let other: LocalTLSServer
        let responder: LocalHTTPServer
        let gate: Gate
        let queries: Locked<Int>
        var url: String { "https://\(RevocationLoopTests.slowHost):\(slow.port)/status/200" }
        var otherURL: String { "https://\(RevocationLoopTests.otherHost):\(other.port)/status/200" }
    }

    private func setup(_ status: OCSPResponseBuilder.CertificateStatus = .good) throws -> Setup {
        let root = try LabPKI.makeRoot(commonName: "Revocation Loop Root")
        let intermediate = try root.issueIntermediate(commonName: "Revocation Loop Intermediate")
        let responder = try LocalHTTPServer()
        let slowLeaf = try intermediate.issueLeaf(dnsNames: [Self.slowHost, "*.rev.servertrust.test"], ocspURL: responder.url("/ocsp"))
        let otherLeaf = try intermediate.issueLeaf(dnsNames: [Self.otherHost])
        let answer = try OCSPResponseBuilder(signer: intermediate).adding(status, for: slowLeaf.certificate, issuedBy: intermediate).build()
        let gate = Gate()
        let queries = Locked(0)
        responder.setHandler { request in
            guard request.path.hasPrefix("/ocsp") else { return nil }
            queries.withLock { $0 += 1 }
            gate.hold()
            return LocalHTTPResponse(headers: [("Content-Type", "application/ocsp-response")], body: .bytes(answer))
        }
        return Setup(
            root: root, intermediate: intermediate,
            slow: try LocalTLSServer(.init(chain: slowLeaf.chain, privateKeyPEM: slowLeaf.key.pemPrivateKey)),
            other: try LocalTLSServer(.init(chain: otherLeaf.chain, privateKeyPEM: otherLeaf.key.pemPrivateKey)),
            responder: responder, gate: gate, queries: queries)
    }

    /// Live OCSP for the slow host and the `*.rev` hosts; pins only for the other host.
    private func session(
        _ setup: Setup, _ options: RevocationOptions, revocationHosts: Int = 0, configure: (inout Session.Configuration) -> Void = { _ in }
    ) throws -> Session {
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try setup.root.trustAnchors())
        configuration.resolve = [setup.slow.resolveEntry(host: Self.slowHost), setup.other.resolveEntry(host: Self.otherHost)]
            + (0..<revocationHosts).map { setup.slow.resolveEntry(host: Self.revocationHost($0)) }
        let pins = try PinnedKeyHashesTrustEvaluator(pins: [setup.intermediate.certificate.spkiPin])
        let revocation = try CompositeTrustEvaluator([pins, RevocationTrustEvaluator(options: options, cache: RevocationCache())])
        let manager = try ServerTrustManager(evaluators: [
            try HostPattern(Self.slowHost): revocation, try HostPattern("*.rev.servertrust.test"): revocation, try HostPattern(Self.otherHost): pins,
        ])
        configure(&configuration)
        return try Session(configuration: configuration, trustManager: manager)
    }

    /// A budget the test never reaches: the gate, not the budget, ends the fetch.
    private static func options(hard: Bool) -> RevocationOptions {
        RevocationOptions(methods: .ocsp, requirePositiveResponse: hard, timeBudget: .seconds(120))
    }

    enum Answer: String, CaseIterable, Sendable {
        case goodUnderHardFail
        case revokedUnderSoftFail
    }

    @Test(arguments: Answer.allCases)
    func aHeldRevocationFetchForOneHostDoesNotStallRequestsToAnother(_ answer: Answer) async throws {
        let setup = try setup(answer == .goodUnderHardFail ? .good : .revoked(reason: .keyCompromise, date: Date(timeIntervalSinceNow: -600)))
        let session = try session(setup, Self.options(hard: answer == .goodUnderHardFail))
        defer {
            setup.gate.open()
            session.shutdown()
        }
        let slowFinished = Locked(false)
        let slow = Task {
            let result = await outcome { try await session.get(setup.url) }
            slowFinished.withLock { $0 = true }
            return result
        }
        await setup.gate.firstArrival()
        // A bound, not a measurement: on a loop shared with the slow host, every request to the
        // other host would wait for the gate, and the test for them forever; the watchdog opens
        // it, and those requests then complete too late to count.
        let watchdog = Task {
            try? await Task.sleep(for: .seconds(30))
            setup.gate.open()
        }
        defer { watchdog.cancel() }

        var completedWhileHeld = 0
        for _ in 0..<Self.requestsToOtherHost {
            let response = try await session.get(setup.otherURL)
            #expect(response.status == 200)
            if setup.gate.isHolding && !slowFinished.withLock({ $0 }) { completedWhileHeld += 1 }
        }
        #expect(completedWhileHeld == Self.requestsToOtherHost, "requests to the other host completed while the slow host's responder held its query")
        #expect(setup.gate.isHolding)
        #expect(!slowFinished.withLock { $0 })
        #expect(session.probe.liveRevocationLoops == 1)
        #expect(session.probe.activeTransfers == 1, "the slow host's transfer, parked on its own loop")

        setup.gate.open()
        let result = await slow.value
        switch answer {
        case .goodUnderHardFail:
            let response = try result.get()
            #expect(response.status == 200)
            #expect(response.trust.revocation.first?.status == .good)
            #expect(response.trust.revocation.first?.source == .ocsp(setup.responder.url("/ocsp")))
        case .revokedUnderSoftFail:
            #expect(result.sessionError?.code == .trustEvaluationFailed)
            #expect(result.sessionError?.trustError?.code == .revoked)
            #expect(setup.slow.requestsServed == 0, "no request went out over the rejected connection")
        }
        #expect(setup.queries.withLock { $0 } == 1)
    }

    @Test func aPolicysLoopServesItsRequestsAndEndsWithTheSession() async throws {
        let setup = try setup()
        setup.gate.open()
        let session = try session(setup, Self.options(hard: true))
        defer { session.shutdown() }
        #expect(session.probe.liveRevocationLoops == 0, "made on the policy's first transfer")
        #expect(try await session.get(setup.url).status == 200)
        #expect(session.probe.liveRevocationLoops == 1)
        // The loop and its kept-alive connection stay while the cache holds the policy.
        #expect(try await session.get(setup.url).status == 200)
        #expect(setup.slow.acceptedConnections == 1)
        #expect(session.probe.easyHandlesMade == 1)
        #expect(try await session.get(setup.otherURL).status == 200)
        #expect(session.probe.liveRevocationLoops == 1, "the other host runs on the main loop")

        session.shutdown()
        #expect(session.probe.liveRevocationLoops == 0)
        let error = await outcome { try await session.get(setup.url) }.sessionError
        #expect(error?.code == .sessionShutDown)
    }

    @Test func aStreamedUploadToARevocationHostIsResumedOnItsOwnLoop() async throws {
        let setup = try setup()
        setup.gate.open()
        let session = try session(setup, Self.options(hard: true))
        defer { session.shutdown() }
        // More than the upload buffer (1 MiB), so curl pauses for the producer and the producer's
        // chunks must resume the transfer on the loop that runs it, not on the main loop.
        let chunks = GeneratedChunks(count: 48, chunkSize: 64 << 10)
        let request = Request(
            method: .put, url: URL(string: setup.url.replacingOccurrences(of: "/status/200", with: "/echo"))!,
            uploadBody: .stream(chunks), timeout: .seconds(120))
        let response = try await session.data(for: request)
        #expect(response.status == 200)
        #expect(response.body == chunks.allBytes)
        #expect(session.probe.liveRevocationLoops == 1)
        #expect(setup.queries.withLock { $0 } == 1)
    }

    @Test func anEvictedPolicysLoopStopsAndItsHostGetsANewOne() async throws {
        let setup = try setup()
        setup.gate.open()
        let session = try session(setup, Self.options(hard: true))
        defer { session.shutdown() }
        #expect(try await session.get(setup.url).status == 200)
        #expect(session.probe.liveRevocationLoops == 1)
        // Fill the policy cache (10,000 policies) until it is emptied.
        for index in 0..<10_000 {
            _ = try session.policy(forRawHost: "filler-\(index).servertrust.test", override: DefaultTrustEvaluator())
        }
        #expect(session.probe.cachedPolicies == 1, "the cache was emptied and refilled with one filler")
        session.probe.waitForStoppedRevocationLoops()
        #expect(session.probe.liveRevocationLoops == 0)

        let again = try await session.get(setup.url)
        #expect(again.status == 200)
        #expect(again.trust.revocation.first?.status == .good)
        #expect(session.probe.liveRevocationLoops == 1)
    }

    /// A stream's resume and cancel go to the loop that runs it: a paused transfer resumed on
    /// another loop would stay paused (and time out), an abandoned one would stay in its loop.
    @Test func aStreamFromARevocationHostIsResumedAndCancelledOnItsOwnLoop() async throws {
        let setup = try setup()
        setup.gate.open()
        // The limit turns a resume sent to the wrong loop into a failure instead of a hang. It
        // is generous: in the full suite on a loaded machine the consumer's task can wait
        // seconds for a thread (a 20 s limit was hit once with the routing right).
        let session = try session(setup, Self.options(hard: true)) { $0.requestTimeout = .seconds(120) }
        defer { session.shutdown() }
        let size = 3 << 20
        let url = URL(string: "https://\(Self.slowHost):\(setup.slow.port)/large/\(size)")!
        let response = try await session.stream(Request(url: url))
        #expect(response.trust.revocation.first?.status == .good)
        var received = 0
        var chunks = 0
        for try await chunk in response.body {
            received += chunk.count
            chunks += 1
            // A slow consumer, so the transfer pauses (1 MiB unread) and must be resumed.
            if chunks == 1 { try await Task.sleep(for: .milliseconds(300)) }
        }
        #expect(received == size)

        let abandoned = try await session.stream(Request(url: url))
        let error = await outcome { try await abandoned.body.collect(upTo: 1000) }.sessionError
        #expect(error?.code == .responseTooLarge)
        // The cancel was queued before this request on the same loop, so once it has completed
        // the abandoned transfer is gone — unless the cancel went to another loop.
        #expect(try await session.get(setup.url).status == 200)
        #expect(session.probe.activeTransfers == 0)
        #expect(session.probe.liveRevocationLoops == 1)
    }

    /// A value-type evaluator: the session cannot cache its policy, so each request has one.
    struct PerRequestRevocation: ServerTrustEvaluating {
        let revocation: RevocationTrustEvaluator
        func evaluate(_ trust: PeerTrust, forHost host: String) throws { try revocation.evaluate(trust, forHost: host) }
        var mayFetchRevocationData: Bool { true }
    }

    @Test func aPolicyTheCacheCannotHoldStopsItsLoopWithItsRequest() async throws {
        let setup = try setup()
        setup.gate.open()
        let session = try session(setup, Self.options(hard: true))
        defer { session.shutdown() }
        let evaluator = PerRequestRevocation(revocation: RevocationTrustEvaluator(options: Self.options(hard: true), cache: RevocationCache()))
        for _ in 0..<3 {
            let response = try await session.data(for: Request(url: URL(string: setup.url)!, trustEvaluator: evaluator))
            #expect(response.status == 200)
            #expect(response.trust.revocation.first?.status == .good)
            session.probe.waitForStoppedRevocationLoops()
            #expect(session.probe.liveRevocationLoops == 0)
        }
    }

    @Test func policiesBeyondTheLimitShareOneOverflowLoop() async throws {
        let setup = try setup()
        setup.gate.open()
        let hosts = RevocationLoops.dedicatedLimit + 3
        let session = try session(setup, Self.options(hard: true), revocationHosts: hosts)
        defer { session.shutdown() }
        for index in 0..<hosts {
            let response = try await session.get("https://\(Self.revocationHost(index)):\(setup.slow.port)/status/200")
            #expect(response.status == 200)
            #expect(response.trust.revocation.first?.status == .good)
        }
        #expect(session.probe.cachedPolicies == hosts)
        #expect(session.probe.liveRevocationLoops == RevocationLoops.dedicatedLimit + 1)
        session.shutdown()
        #expect(session.probe.liveRevocationLoops == 0)
    }

    /// docs/PERFORMANCE.md: how many requests to the other host complete while the slow host's
    /// responder holds its query for `SERVERTRUST_REVOCATION_HOLD_SECONDS`. A measurement, so
    /// it runs only when asked and asserts nothing about the count.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["SERVERTRUST_REVOCATION_HOLD_SECONDS"] != nil))
    func measureRequestsToAnotherHostDuringAHeldFetch() async throws {
        let seconds = Int(ProcessInfo.processInfo.environment["SERVERTRUST_REVOCATION_HOLD_SECONDS"] ?? "") ?? 2
        let setup = try setup()
        let session = try session(setup, Self.options(hard: true))
        defer {
            setup.gate.open()
            session.shutdown()
        }
        let slow = Task { try await session.get(setup.url) }
        await setup.gate.firstArrival()
        let timer = Task {
            try? await Task.sleep(for: .seconds(seconds))
            setup.gate.open()
        }
        var duringHold = 0
        var total = 0
        while setup.gate.isHolding {
            _ = try await session.get(setup.otherURL)
            total += 1
            if setup.gate.isHolding { duringHold += 1 }
        }
        _ = await timer.value
        #expect(try await slow.value.status == 200)
        print("RevocationLoopTests: \(duringHold) requests to the other host completed during a \(seconds) s hold of the slow host's OCSP query (\(total) started)")
    }
}
