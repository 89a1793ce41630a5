
extension ServerTrust {
    /// What the most recent ``RevocationTrustEvaluator`` evaluation of this trust established,
    /// one result per checked certificate, leaf first; `nil` until one ran.
    ///
    /// Recorded whether the evaluation accepted or rejected the server, so a trust report can
    /// show a soft-fail "unknown" beside an accepted connection, or which certificate was
    /// revoked. When several revocation evaluators run on one trust (a composite), the last
    /// one's results are kept.
    public var revocationResults: [CertificateRevocationResult]? { revocationRecord.results }

    func recordRevocationResults(_ results: [CertificateRevocationResult]) {
        revocationRecord.record(results)
        // An acceptance built on these answers lasts no longer than the first of them.
        if let until = results.compactMap(\.validUntil).min() { relyOn(until: until) }
    }
}

/// The revocation results of one ``ServerTrust``: a ServerTrust is shared by the evaluators of
/// one handshake and read by the report afterwards, hence the lock.
final class RevocationRecord: Sendable {
    private let stored = Locked<[CertificateRevocationResult]?>(nil)

    var results: [CertificateRevocationResult]? { stored.withLock { $0 } }

    func record(_ results: [CertificateRevocationResult]) {
        stored.withLock { $0 = results }
    }
}
