import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// The loop thread is woken once per batch of queued commands, and never left asleep with one
/// waiting.
@Suite struct MultiLoopWakeUpTests {
    @Test func sequentialRequestsEachWakeTheLoopOnce() async throws {
        // Each request is submitted after the previous one completed, so the loop has taken
        // every earlier command: the queue is empty at every submission and each one must wake.
        let fixture = try SessionFixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        for _ in 0..<40 {
            #expect(try await session.get(fixture.url("/status/200").absoluteString).status == 200)
        }
        #expect(session.probe.loopWakeUps == 40)
    }

    @Test func burstsOfConcurrentSubmissionsAllCompleteWithAtMostOneWakeUpEach() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session { $0.httpVersion = .http1_1 }
        defer { session.shutdown() }
        let rounds = 5, width = 64
        for round in 0..<rounds {
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<width {
                    group.addTask { try await session.get(fixture.url("/status/\(200 + (round + index) % 3)").absoluteString).status.code }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.count == width)
            #expect(Set(statuses) == [200, 201, 202])
        }
        #expect(session.probe.activeTransfers == 0)
        #expect(session.probe.loopWakeUps >= 1)
        #expect(session.probe.loopWakeUps <= rounds * width)
    }

    @Test func submissionsRacingShutdownEitherCompleteOrFailAsShutDown() async throws {
        // Wake-ups are written under the queue's lock, so none can reach the multi handle the
        // loop frees after taking the shutdown; every request ends one way or the other.
        let fixture = try SessionFixture()
        for _ in 0..<20 {
            let session = try fixture.session { $0.httpVersion = .http1_1 }
            let codes = await withTaskGroup(of: SessionError.Code?.self) { group in
                for index in 0..<16 {
                    group.addTask {
                        if index == 8 { session.shutdown() }
                        do {
                            _ = try await session.get(fixture.url("/status/200").absoluteString)
                            return nil
                        } catch let error as SessionError {
                            return error.code
                        } catch {
                            return .transferFailed
                        }
                    }
                }
                return await group.reduce(into: [SessionError.Code?]()) { $0.append($1) }
            }
            #expect(codes.count == 16)
            #expect(codes.allSatisfy { $0 == nil || $0 == .sessionShutDown }, "\(codes)")
            #expect(session.probe.activeTransfers == 0)
        }
    }
}
