import Foundation
import HTTPTypes
import Synchronization
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// Finished easy handles are reused by later requests of the same policy, and nothing of an
/// earlier request — method, body, header fields, trust — carries over to the next one.
@Suite struct EasyHandleReuseTests {
    @Test func sequentialRequestsOfOnePolicyRunOnOneHandle() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        for index in 0..<20 {
            let response = try await session.get(fixture.url("/status/\(200 + index % 3)").absoluteString)
            #expect(response.status.code == 200 + index % 3)
            #expect(response.trust.evaluator == "DefaultTrustEvaluator")
        }
        #expect(session.probe.easyHandlesMade == 1)
    }

    @Test func methodBodyAndHeaderFieldsOfOneRequestNeverReachTheNext() async throws {
        // curl's options are sticky: without resetting the method, a DELETE after a POST would
        // go out as a "DELETE" carrying the POST's body, and a GET after it as another DELETE.
        let fixture = try SessionFixture()
        let session = try fixture.session { $0.httpVersion = .http1_1 }
        defer { session.shutdown() }
        let echo = fixture.url("/echo")
        let steps: [(request: Request, method: String, bodyLength: Int, header: String?)] = [
            (Request(method: .post, url: echo, headers: [HTTPField.Name("X-First")!: "one"], body: Array("posted".utf8)), "POST", 6, "X-First"),
            (Request(url: echo), "GET", 0, nil),
            (Request(method: .head, url: echo, headers: [HTTPField.Name("X-Second")!: "two"]), "HEAD", 0, "X-Second"),
            (Request(url: echo), "GET", 0, nil),
            (Request(method: .post, url: echo, body: Array("again".utf8)), "POST", 5, nil),
            (Request(method: .delete, url: echo), "DELETE", 0, nil),
            (Request(url: echo), "GET", 0, nil),
            (Request(method: .put, url: echo, headers: [HTTPField.Name("X-Third")!: "three"], body: Array("xy".utf8)), "PUT", 2, "X-Third"),
            (Request(method: .post, url: echo), "POST", 0, nil),
            (Request(url: echo), "GET", 0, nil),
        ]
        for (index, step) in steps.enumerated() {
            let response = try await session.data(for: step.request)
            #expect(response.status == 200, "step \(index)")
            #expect(response.header("X-Echo-Method") == step.method, "step \(index)")
            let summary = try #require(response.header("X-Echo-Request"), "step \(index)")
            #expect(summary.contains("\"bodyLength\":\(step.bodyLength)}"), "step \(index): \(summary)")
            for name in ["X-First", "X-Second", "X-Third"] {
                #expect(summary.contains("[\"\(name)\"") == (name == step.header), "step \(index) \(name): \(summary)")
            }
            #expect(summary.contains("[\"Expect\"") == false, "step \(index): \(summary)")
            if step.method != "HEAD" { #expect(response.body.count == step.bodyLength, "step \(index)") }
        }
        #expect(session.probe.easyHandlesMade == 1)
    }

    @Test func policiesNeverShareAHandleAndAFailedTransferGivesItsHandleUp() async throws {
        // Same server, two names, two policies: the name's pin matches, the address's does not.
        let fixture = try SessionFixture()
        let session = try fixture.session([
            SessionFixture.host: try .pinnedKeyHashes([fixture.leafPin]),
            "127.0.0.1": try .pinnedKeyHashes([SessionFixture.unrelatedPin]),
        ])
        defer { session.shutdown() }
        for round in 0..<3 {
            let accepted = try await session.get(fixture.url("/status/200").absoluteString)
            #expect(accepted.trust.evaluator == "PinnedKeyHashesTrustEvaluator", "round \(round)")
            #expect(accepted.trust.host == SessionFixture.host, "round \(round)")

            let rejected = await outcome { try await session.get(fixture.url("/status/200", host: "127.0.0.1").absoluteString) }.sessionError
            #expect(rejected?.code == .trustEvaluationFailed, "round \(round)")
            #expect(rejected?.trustError?.code == .pinMismatch, "round \(round)")
            #expect(try rejected?.trustError?.evidence.configuredPins == [SessionFixture.unrelatedPin], "round \(round)")
        }
        // One handle for the accepted name, reused; a new one for each rejected request, since
        // only a handle whose transfer ended cleanly is kept.
        #expect(session.probe.easyHandlesMade == 1 + 3)
    }

    @Test func idleHandlesStayWithTheirPolicyWithinTheSessionsCapacity() throws {
        let pool = PolicyHandles.Pool(idleCapacity: 2)
        let seven = PolicyHandles(pool: pool), eight = PolicyHandles(pool: pool)
        let first = try EasyHandle(policyID: 7), second = try EasyHandle(policyID: 7), third = try EasyHandle(policyID: 7)
        let other = try EasyHandle(policyID: 8)
        seven.checkIn(first)
        seven.checkIn(second)
        seven.checkIn(third)  // over the session's capacity: freed, not kept
        eight.checkIn(other)  // also over capacity
        #expect(pool.idleHandles == 2)
        #expect(eight.checkOut(makingShare: false).idle == nil)
        let taken = [seven.checkOut(makingShare: false).idle, seven.checkOut(makingShare: false).idle].compactMap { $0 }
        #expect(Set(taken.map(ObjectIdentifier.init)) == [ObjectIdentifier(first), ObjectIdentifier(second)])
        #expect(seven.checkOut(makingShare: false).idle == nil)
        #expect(pool.idleHandles == 0)

        eight.checkIn(other)
        #expect(seven.checkOut(makingShare: false).idle == nil)
        #expect(eight.checkOut(makingShare: false).idle === other)
    }

    /// A burst of concurrent requests leaves one handle per request, not one per connection.
    /// The session keeps them all for the next burst: with the idle handles capped at the
    /// connection cache's size (here 16), 24 of the 40 were freed after every burst and made
    /// again in the next (64 in flight over one HTTP/2 connection, with 32 kept, paid about 6 k
    /// instructions per request for it; docs/PERFORMANCE-HISTORY.md).
    @Test func aBurstLeavesAHandlePerRequestAndTheNextBurstReusesEveryOne() async throws {
        let burst = 40
        let (fixture, session) = try gatedSession(burst: burst) { $0.maximumCachedConnections = 16 }
        defer { session.shutdown() }
        #expect(MultiLoop.idleHandleCapacity(session.configuration) == 128)
        for round in 1...2 {
            try await sendBurst(burst, to: fixture.url("/gate"), on: session, round: round)
            #expect(session.probe.easyHandlesMade == burst, "round \(round): made")
            #expect(session.probe.idleEasyHandles == burst, "round \(round): kept")
        }
    }

    @Test func theIdleHandlesKeptFollowMaximumIdleHandles() async throws {
        let burst = 12
        let (fixture, session) = try gatedSession(burst: burst) { $0.maximumIdleHandles = 5 }
        defer { session.shutdown() }
        try await sendBurst(burst, to: fixture.url("/gate"), on: session, round: 1)
        #expect(session.probe.easyHandlesMade == burst)
        #expect(session.probe.idleEasyHandles == 5)
        try await sendBurst(burst, to: fixture.url("/gate"), on: session, round: 2)
        #expect(session.probe.easyHandlesMade == burst + (burst - 5), "5 reused, 7 made again")
        #expect(session.probe.idleEasyHandles == 5)

        var none = try fixture.configuration()
        none.maximumIdleHandles = 0
        let keepsNone = try Session(configuration: none)
        defer { keepsNone.shutdown() }
        for _ in 0..<3 { #expect(try await keepsNone.get(fixture.url("/status/200").absoluteString).status == 200) }
        #expect(keepsNone.probe.easyHandlesMade == 3)
        #expect(keepsNone.probe.idleEasyHandles == 0)
    }

    @Test func aNegativeMaximumIdleHandlesIsRefusedWhenTheSessionIsMade() throws {
        var configuration = Session.Configuration()
        configuration.maximumIdleHandles = -1
        let error = #expect(throws: SessionError.self) { try Session(configuration: configuration) }
        #expect(error?.code == .invalidRequest)
        #expect(error?.description.contains("maximumIdleHandles is -1") == true)
    }

    /// A fixture whose `/gate` holds each request until `burst` have arrived, and an HTTP/1.1
    /// session with a connection per request of the burst (so every one reaches the gate).
    private func gatedSession(
        burst: Int, configure: (inout Session.Configuration) -> Void
    ) throws -> (SessionFixture, Session) {
        let fixture = try SessionFixture()
        let gate = ArrivalGate(count: burst)
        fixture.server.setHandler { $0.path == "/gate" ? gate.pass() : nil }
        let session = try fixture.session { configuration in
            configuration.httpVersion = .http1_1
            configuration.maximumConnectionsPerHost = burst
            configure(&configuration)
        }
        return (fixture, session)
    }

    /// `count` concurrent GETs of `url`, each expected to answer 200.
    private func sendBurst(_ count: Int, to url: URL, on session: Session, round: Int) async throws {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<count { group.addTask { try await session.get(url.absoluteString).status.code } }
            for try await status in group { #expect(status == 200, "round \(round)") }
        }
    }

    /// A policy can be deinitialised inside curl (OpenSSL freeing a closed connection's
    /// SSL_CTX), where curl must not be re-entered: its handles wait for a loop's next turn.
    @Test func aGonePolicysShareAndIdleHandlesAreFreedByTheLoopNotWhereItWasDropped() throws {
        let pool = PolicyHandles.Pool(idleCapacity: 4)
        var policy: PolicyHandles? = PolicyHandles(pool: pool)
        weak var share = policy?.checkOut(makingShare: true).share
        #expect(share != nil)
        #expect(policy?.checkOut(makingShare: true).share === share, "one share per policy")
        #expect(pool.liveShares == 1)
        weak var idle: EasyHandle?
        do {
            let easy = try EasyHandle(policyID: 1)
            try easy.setShare(share)
            policy?.checkIn(easy)
            idle = easy
        }
        #expect(pool.idleHandles == 1)

        policy = nil
        #expect(share != nil && idle != nil, "retired, not freed where the policy went")
        #expect(pool.idleHandles == 0)
        #expect(pool.liveShares == 1)
        pool.drain()
        #expect(share == nil && idle == nil)
        #expect(pool.liveShares == 0)
    }

    @Test func afterTheSessionClosedItsPoolAGonePolicysHandlesAreFreedAtOnce() throws {
        let pool = PolicyHandles.Pool(idleCapacity: 4)
        var policy: PolicyHandles? = PolicyHandles(pool: pool)
        weak var share = policy?.checkOut(makingShare: true).share
        pool.close()
        policy = nil
        #expect(share == nil)
        #expect(pool.liveShares == 0)
    }

    @Test func aHandleOfAnotherPolicyIsRefused() throws {
        let fixture = try SessionFixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        let easy = try EasyHandle(policyID: 0)
        let transfer = Transfer(
            url: fixture.url("/").absoluteString, method: "GET", headers: [:], body: nil,
            policy: try session.policy(forRawHost: SessionFixture.host, override: nil), isTLS: true, bodyLimit: nil, stream: nil,
            onCompletion: { _ in })
        let error = #expect(throws: SessionError.self) { try EasyHandleConfigurator.prepare(easy, for: transfer) }
        #expect(error?.code == .transferFailed)
        #expect(error?.description.contains("another policy") == true)
    }

    /// A handle's callbacks reach their transfer through the handle (their data pointers are
    /// set once, to the handle): a handle given back for reuse, or given up after a failure or
    /// for a retry, must no longer reach the transfer it ran, or a later callback on it would
    /// act for a finished request instead of aborting.
    @Test func aHandleGivenBackOrGivenUpNoLongerReachesItsTransfer() throws {
        let fixture = try SessionFixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        let policy = try session.policy(forRawHost: SessionFixture.host, override: nil)
        let transfer = Transfer(
            url: fixture.url("/").absoluteString, method: "GET", headers: [:], body: nil, policy: policy, isTLS: true,
            bodyLimit: nil, stream: nil, onCompletion: { _ in })

        let returned = try EasyHandleConfigurator.makeHandle(for: policy, share: nil, configuration: Session.Configuration())
        transfer.easy = returned
        try EasyHandleConfigurator.prepare(returned, for: transfer)
        #expect(returned.transfer === transfer)
        PolicyHandles(pool: PolicyHandles.Pool(idleCapacity: 1)).checkIn(returned)  // given back
        #expect(returned.transfer == nil)

        let dropped = try EasyHandleConfigurator.makeHandle(for: policy, share: nil, configuration: Session.Configuration())
        transfer.easy = dropped
        try EasyHandleConfigurator.prepare(dropped, for: transfer)
        #expect(dropped.transfer === transfer)
        transfer.easy = nil  // given up, as the loop does after a failure or before a retry
        #expect(dropped.transfer == nil)
    }
}

/// The session's user agent goes out as a request header line (cheaper in libcurl 7.88 than
/// CURLOPT_USERAGENT alone): still exactly one `User-Agent` field per request, the request's
/// own when it names one, none when the session's is empty — on a reused handle whose header
/// list is kept while the lines stay the same.
@Suite struct UserAgentTests {
    /// The `User-Agent` values the echo route saw, in order.
    private func userAgents(_ response: Response) throws -> [String] {
        let summary = try #require(response.header("X-Echo-Request"))
        let data = try #require(summary.data(using: .utf8))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let headers = try #require(object["headers"] as? [[String]])
        return headers.filter { $0.first?.lowercased() == "user-agent" }.compactMap { $0.last }
    }

    @Test func oneUserAgentPerRequestTheRequestsOwnWhenItNamesOne() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session { $0.httpVersion = .http1_1 }
        defer { session.shutdown() }
        let echo = fixture.url("/echo")
        let standard = Session.Configuration().userAgent
        let steps: [(headers: HTTPFields, expected: [String])] = [
            ([:], [standard]),
            ([:], [standard]),
            ([.userAgent: "Mine/2"], ["Mine/2"]),
            ([HTTPField.Name("X-Other")!: "1"], [standard]),
            ([.userAgent: "Mine/3"], ["Mine/3"]),
            ([:], [standard]),
        ]
        for (index, step) in steps.enumerated() {
            let response = try await session.data(for: Request(url: echo, headers: step.headers))
            #expect(try userAgents(response) == step.expected, "step \(index)")
        }
        #expect(session.probe.easyHandlesMade == 1)
    }

    @Test func aUserAgentWithALineBreakIsRefusedWhenTheSessionIsMade() throws {
        for agent in ["A\r\nX-Injected: 1", "A\nB", "A\u{0}B"] {
            var configuration = Session.Configuration()
            configuration.userAgent = agent
            let error = #expect(throws: SessionError.self) { try Session(configuration: configuration) }
            #expect(error?.code == .invalidRequest, "\(agent.debugDescription)")
            #expect(error?.reason.contains("userAgent") == true, "\(agent.debugDescription)")
        }
    }

    @Test func anEmptyUserAgentSendsNone() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session { $0.userAgent = "" }
        defer { session.shutdown() }
        let echo = fixture.url("/echo")
        #expect(try userAgents(try await session.data(for: Request(url: echo))) == [])
        #expect(try userAgents(try await session.data(for: Request(url: echo, headers: [.userAgent: "Mine/4"]))) == ["Mine/4"])
    }
}

/// The loop's table of active transfers finds a finished transfer from its `CURL*` alone
/// (`CURLINFO_PRIVATE` names the handle, the handle its transfer) and keeps every slot right
/// when a removal moves the last transfer into the hole: a transfer the table lost would never
/// finish, and one it found for the wrong `CURL*` would be finished with another's result.
@Suite struct ActiveTransfersTests {
    @Test func aFinishedHandleNamesItsTransferAndOnlyATransferTheTableHolds() throws {
        let fixture = try SessionFixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        let policy = try session.policy(forRawHost: SessionFixture.host, override: nil)
        func running() throws -> Transfer {
            let transfer = Transfer(
                url: fixture.url("/").absoluteString, method: "GET", headers: [:], body: nil, policy: policy, isTLS: true,
                bodyLimit: nil, stream: nil)
            let easy = try EasyHandleConfigurator.makeHandle(for: policy, share: nil, configuration: Session.Configuration())
            transfer.easy = easy
            try EasyHandleConfigurator.prepare(easy, for: transfer)
            return transfer
        }
        let (a, b, c) = (try running(), try running(), try running())
        var table = ActiveTransfers()
        table.insert(a)
        table.insert(b)
        table.insert(c)
        let count = table.count
        #expect(count == 3)
        let slots: [Int] = [a.activeSlot, b.activeSlot, c.activeSlot]
        #expect(slots == [0, 1, 2])

        // Removing the middle one moves the last into its slot.
        let removedB = table.remove(b)
        #expect(removedB)
        #expect(c.activeSlot == 1)
        #expect(b.activeSlot == -1)
        let held = (table.contains(a), table.contains(c), table.contains(b))
        #expect(held == (true, true, false))
        let removedTwice = table.remove(b)
        #expect(!removedTwice, "removed twice")
        let bPointer = try #require(b.easy?.pointer)
        let foundB = table.remove(runningOn: bPointer)
        #expect(foundB == nil, "a handle whose transfer the table no longer holds")

        // Found from the `CURL*` alone, the moved one included.
        let cPointer = try #require(c.easy?.pointer)
        let foundC = table.remove(runningOn: cPointer)
        #expect(foundC === c)
        let foundCAgain = table.remove(runningOn: cPointer)
        #expect(foundCAgain == nil)
        let (countAfter, holdsA) = (table.count, table.contains(a))
        #expect(countAfter == 1 && holdsA && a.activeSlot == 0)

        // A handle with no transfer, and a `CURL*` no session handle owns, name nothing.
        let idle = try EasyHandleConfigurator.makeHandle(for: policy, share: nil, configuration: Session.Configuration())
        let foundIdle = table.remove(runningOn: idle.pointer)
        #expect(foundIdle == nil)
        let foreign = try EasyHandle(policyID: policy.id)
        #expect(EasyHandle.owner(of: foreign.pointer) == nil)
        let foundForeign = table.remove(runningOn: foreign.pointer)
        #expect(foundForeign == nil)
        let countLeft = table.count
        #expect(countLeft == 1)

        // Shutdown empties it and frees every slot, so a transfer could be added again.
        table.insert(b)
        let all = table.removeAll()
        #expect(all.count == 2 && all.contains { $0 === a } && all.contains { $0 === b })
        let countEmpty = table.count
        #expect(countEmpty == 0 && a.activeSlot == -1 && b.activeSlot == -1)
        table.insert(a)
        let aPointer = try #require(a.easy?.pointer)
        let foundA = table.remove(runningOn: aPointer)
        #expect(foundA === a)
        // Given up, as the loop gives up a finished transfer's handle: a handle and the
        // transfer it runs hold each other until then.
        for transfer in [a, b, c] { transfer.easy = nil }
    }
}

/// Holds each request until `count` have arrived, then lets them all through: `count` transfers
/// in flight at once, each on a handle of its own. Bursts follow one another. Runs on the
/// server's connection threads (one per connection).
private final class ArrivalGate: Sendable {
    private let arrived = Mutex(0)
    private let opened = DispatchSemaphore(value: 0)
    private let count: Int

    init(count: Int) { self.count = count }

    func pass() -> LocalHTTPResponse {
        let arrival = arrived.withLock { arrived in
            arrived += 1
            return arrived
        }
        if arrival % count == 0 {
            for _ in 1..<count { opened.signal() }
            return .text("through\n")
        }
        // Bounded, so a session that never sends the whole burst fails the test, not hangs it.
        return opened.wait(timeout: .now() + 120) == .success ? .text("through\n") : .text("the burst never came\n", status: 504)
    }
}
