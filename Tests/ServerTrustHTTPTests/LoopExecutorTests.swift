import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// `Session.taskExecutor`: a task that prefers it runs on the loop thread, submits and resumes
/// there without waking anything, and is held to exactly the same trust as any other caller.
@Suite(.timeLimit(.minutes(5))) struct LoopExecutorTests {
    @Test func sequentialRequestsFromTheSessionsExecutorNeverWakeTheLoop() async throws {
        // From another executor every one of these requests wakes the loop
        // (MultiLoopWakeUpTests: 40 requests, 40 wake-ups). From the loop's own executor only
        // the hop onto it may: submissions and completions stay on the loop thread.
        let fixture = try SessionFixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        let url = fixture.url("/status/200").absoluteString
        let onLoopThread = try await withTaskExecutorPreference(session.taskExecutor) { () async throws -> Int in
            var onLoopThread = 0
            for _ in 0..<40 {
                #expect(try await session.get(url).status == 200)
                if session.loop.isCurrentThread { onLoopThread += 1 }
            }
            return onLoopThread
        }
        #expect(onLoopThread == 40)
        #expect(session.probe.loopWakeUps <= 1, "wake-ups: \(session.probe.loopWakeUps)")
        #expect(session.probe.activeTransfers == 0)
    }

    @Test func aTaskGroupOnTheSessionsExecutorCompletesEveryRequest() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session { $0.httpVersion = .http1_1 }
        defer { session.shutdown() }
        let statuses = try await withTaskExecutorPreference(session.taskExecutor) { () async throws -> [Int] in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<64 {
                    group.addTask { try await session.get(fixture.url("/status/\(200 + index % 3)").absoluteString).status.code }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
        }
        #expect(statuses.count == 64)
        #expect(Set(statuses) == [200, 201, 202])
        #expect(session.probe.activeTransfers == 0)
    }

    @Test func anImpostorFromATrustedCAIsStillRejectedByItsPinFromTheSessionsExecutor() async throws {
        // The session trusts both roots (a proxy CA installed on the machine); only the pin on
        // the genuine intermediate tells the impostor apart, from whichever executor.
        let genuine = try SessionFixture()
        let impostor = try SessionFixture()
        var configuration = try genuine.configuration()
        configuration.anchors = .bundle(try TrustAnchors([genuine.root.certificate, impostor.root.certificate]))
        configuration.resolve = [impostor.server.resolveEntry(host: SessionFixture.host)]
        let manager = try ServerTrustManager(evaluators: [try HostPattern(SessionFixture.host): try PinnedKeyHashesTrustEvaluator(pins: [genuine.intermediatePin])])
        let session = try Session(configuration: configuration, trustManager: manager)
        defer { session.shutdown() }
        let result = await withTaskExecutorPreference(session.taskExecutor) {
            await outcome { try await session.get(impostor.url("/status/200").absoluteString) }
        }
        let error = try #require(result.sessionError)
        #expect(error.code == .trustEvaluationFailed)
        #expect(error.trustError?.code == .pinMismatch)
        #expect(error.trustError?.evidence.configuredPins == [genuine.intermediatePin])
        #expect(genuine.server.acceptedConnections == 0)
    }

    @Test func shutdownFromTheSessionsExecutorReturnsAndReleasesEverythingOnceTheLoopHasExited() async throws {
        // shutdown() waits for the loop thread to exit; on the loop thread that would wait for
        // itself forever. It stops the loop and returns; the handles go once the loop is gone.
        let fixture = try SessionFixture()
        let session = try fixture.session()
        let url = fixture.url("/status/200").absoluteString
        let shutdownReturned = Locked(false)
        let task = Task(executorPreference: session.taskExecutor) { () async -> (Bool, Result<Response, any Error>) in
            let first = await outcome { try await session.get(url) }
            let onLoopThread = session.loop.isCurrentThread
            session.shutdown()
            shutdownReturned.withLock { $0 = true }
            _ = try? first.get()
            return (onLoopThread, await outcome { try await session.get(url) })
        }
        // Waited for without awaiting the task: were shutdown() to wait for its own thread, the
        // task would never end, and this test must fail rather than hang.
        for _ in 0..<6000 where !shutdownReturned.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        try #require(shutdownReturned.withLock { $0 }, "shutdown() on the loop thread did not return")
        let (ranOnLoopThread, after) = await task.value
        #expect(ranOnLoopThread)
        #expect(after.sessionError?.code == .sessionShutDown)
        for _ in 0..<3000 where !(session.loop.hasExited && session.probe.liveShareHandles == 0) {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(session.loop.hasExited)
        #expect(session.probe.liveShareHandles == 0)
        #expect(session.probe.idleEasyHandles == 0)
    }

    @Test func aTaskPreferringTheExecutorOfAShutDownSessionStillRunsAndSeesTheShutdown() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session()
        session.shutdown()
        let url = fixture.url("/status/200").absoluteString
        let ran = Locked(false)
        let task = Task(executorPreference: session.taskExecutor) {
            ran.withLock { $0 = true }
            return await outcome { try await session.get(url) }
        }
        // Polled, not awaited: a job the stopped loop dropped would leave the task unstarted
        // forever, and this test must fail rather than hang.
        for _ in 0..<6000 where !ran.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        try #require(ran.withLock { $0 }, "the task never ran")
        #expect(await task.value.sessionError?.code == .sessionShutDown)
    }

    @Test func cancellingATaskOnTheSessionsExecutorCancelsItsTransfer() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        // The server holds the response; the task is cancelled while its transfer waits.
        let url = fixture.url("/slow/30000").absoluteString
        let task = Task(executorPreference: session.taskExecutor) {
            await outcome { try await session.get(url) }
        }
        for _ in 0..<3000 where session.probe.activeTransfers == 0 { try await Task.sleep(for: .milliseconds(10)) }
        task.cancel()
        let result = await task.value
        #expect(result.sessionError?.code == .cancelled)
        #expect(session.probe.activeTransfers == 0)
    }
}
