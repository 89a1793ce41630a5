extension Session {
    /// Books a loop for one transfer of `policy`, before it is made: the policy's own
    /// (``RevocationLoops``) when its evaluator may fetch revocation data in the handshake, else
    /// the main loop. Returns what the transfer runs when it ends, before it resumes its task
    /// (`Transfer`'s `onCompletion`): giving the booking back, so a loop outliving its policy
    /// stops only after its last transfer; nil when the main loop was booked.
    func bookLoop(
        for policy: TrustPolicy, cacheable: Bool
    ) throws(SessionError) -> (@Sendable (Result<Transfer.Outcome, SessionError>) -> Void)? {
        // After shutdown no loop is booked: the transfer goes to the stopped main loop, which
        // refuses it with `.sessionShutDown`.
        guard policy.mayFetchRevocationData, try revocationLoops.acquire(policy, cacheable: cacheable) != nil else { return nil }
        return { [revocationLoops] _ in
            // Before the caller resumes: a loop that stops here is already stopping when the
            // request returns.
            revocationLoops.release(policy)
        }
    }

    /// The loop that runs `transfer`: the one ``bookLoop(for:cacheable:)`` booked for it.
    /// Once the transfer has ended that may be no loop (the main one is returned, where a
    /// cancel or resume of a finished transfer does nothing) or a new one of the same policy
    /// (likewise).
    func loop(running transfer: Transfer) -> MultiLoop {
        guard transfer.policy.mayFetchRevocationData else { return loop }
        return revocationLoops.loop(for: transfer.policy) ?? loop
    }

    /// Every loop whose thread is running: the main one and the revocation loops (tests).
    var loops: [MultiLoop] { [loop] + revocationLoops.liveLoops }

    /// Revocation loops whose thread has not exited yet (tests).
    var liveRevocationLoops: Int { revocationLoops.liveLoops.count }

    /// Waits until every revocation loop stopped so far has exited (tests).
    func waitForStoppedRevocationLoops() { revocationLoops.waitForStoppedLoops() }
}
