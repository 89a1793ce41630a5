import Testing
@testable import ServerTrustHTTP

/// `OneShot` delivers one result to one waiting task, whichever of the two comes first, and
/// ignores any later result.
@Suite struct OneShotTests {
    private func awaitResult(_ shot: OneShot, resumingWith late: Result<Transfer.Outcome, SessionError>? = nil) async -> SessionError? {
        do {
            _ = try await withCheckedThrowingContinuation { continuation in
                shot.attach(continuation)
                if let late { shot.resume(with: late) }
            }
            return nil
        } catch {
            return error as? SessionError
        }
    }

    @Test func aResultThatComesFirstIsDeliveredWhenTheTaskAttaches() async {
        let shot = OneShot()
        shot.resume(with: .failure(SessionError(.timedOut, "first")))
        shot.resume(with: .failure(SessionError(.cancelled, "second")))  // ignored
        let error = await awaitResult(shot)
        #expect(error?.code == .timedOut)
        #expect(error?.reason == "first")
    }

    @Test func aTaskThatAttachesFirstIsResumedByTheResultAndOnlyOnce() async {
        let shot = OneShot()
        let error = await awaitResult(shot, resumingWith: .failure(SessionError(.transferFailed, "only")))
        #expect(error?.code == .transferFailed)
        #expect(error?.reason == "only")
        shot.resume(with: .failure(SessionError(.cancelled, "late")))  // ignored: a second resume would trap
    }
}
