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

    /// A successful outcome travels from the transfer to its task inside a
    /// `Result<Transfer.Outcome, SessionError>`, moved at the size of its larger case: the
    /// error's details are boxed so that this stays the outcome's size (it was 306 bytes with
    /// the error's fields inline, copied at each step of every request), and every field still
    /// reads what the error was made with, in every copy.
    @Test func anOutcomeTravelsAtItsOwnSizeAndAnErrorKeepsWhatItWasMadeWith() {
        #expect(MemoryLayout<SessionError>.size <= MemoryLayout<Transfer.Outcome>.size, "SessionError is \(MemoryLayout<SessionError>.size) bytes")
        #expect(MemoryLayout<Result<Transfer.Outcome, SessionError>>.size == MemoryLayout<Transfer.Outcome>.size + 1)
        var error = SessionError(.transferFailed, "refused", curlCode: 7, curlMessage: "Failed to connect", url: "https://a.test/")
        error.attempts = 3
        let copy = error
        #expect(copy.code == .transferFailed && copy.reason == "refused" && copy.curlCode == 7)
        #expect(copy.curlMessage == "Failed to connect" && copy.url == "https://a.test/" && copy.attempts == 3)
        #expect(copy.trustError == nil && copy.signatureError == nil && copy.rejectedTrust == nil)
        #expect(copy.description == "refused [https://a.test/] (curl 7: Failed to connect)")
    }
}
