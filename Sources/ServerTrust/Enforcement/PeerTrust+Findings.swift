extension PeerTrust {
    /// Records a failure that did not reject the connection (see ``TrustFinding``).
    public func record(_ finding: TrustFinding) {
        findingRecord.withLock { $0.append(finding) }
    }

    /// The findings recorded by the evaluators that ran on this trust, in order.
    public var findings: [TrustFinding] { findingRecord.withLock { $0 } }
}
