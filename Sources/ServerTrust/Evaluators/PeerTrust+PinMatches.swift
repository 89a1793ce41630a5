extension PeerTrust {
    /// The certificates that satisfied the pins of each enforcing pinning evaluator whose pins
    /// matched (and whose host check passed), in the order they ran, each with its depth in
    /// the validated chain — whatever an evaluator after it decided. Empty when no pins
    /// matched or no pinning evaluator ran. A report-only evaluator's matches (informational,
    /// a canary's trial) are not recorded: they carried nothing.
    public var pinMatches: [PinMatch] { pinMatchRecord.withLock { $0 } }

    /// Records the matches of an evaluator that accepted this trust.
    func recordPinMatches(_ matches: [PinMatch]) {
        guard !isReportOnly, !matches.isEmpty else { return }
        pinMatchRecord.withLock { $0 += matches }
    }
}
