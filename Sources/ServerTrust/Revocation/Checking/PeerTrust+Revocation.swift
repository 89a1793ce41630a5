import Synchronization

extension PeerTrust {
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

    /// Tells the trust that its TLS handshake has finished, so the server has proven it holds
    /// the leaf's private key: the stapled OCSP response this evaluation verified may now enter
    /// the shared ``RevocationCache``.
    ///
    /// Until then a staple is used for this evaluation only. The status callback of a TLS 1.2
    /// RSA key exchange (and the TLS 1.3 certificate callback) runs before the server has
    /// proven anything: a party replaying a genuine chain with an old "good" staple must not
    /// be able to plant that staple in the cache (second audit, finding 2). Idempotent; a
    /// trust whose handshake never completes never writes to the cache.
    public func handshakeCompleted() {
        revocationRecord.commitDeferredWrites()
    }
}

/// The revocation results of one ``PeerTrust``: a PeerTrust is shared by the evaluators of
/// one handshake and read by the report afterwards, hence the lock.
final class RevocationRecord: Sendable {
    private let stored = Locked<[CertificateRevocationResult]?>(nil)
    /// Cache writes that wait for ``PeerTrust/handshakeCompleted()``.
    private let deferredWrites = Locked<[@Sendable () -> Void]>([])
    /// Whether ``deferredWrites`` may hold writes: set under its lock when one is added,
    /// cleared under it when they are taken. ``PeerTrust/handshakeCompleted()`` runs before
    /// every request on a kept-alive connection (the connection guard), and after the first
    /// one there is nothing to commit: one atomic load then instead of a lock.
    private let mayHaveDeferredWrites = Atomic<Bool>(false)

    func deferUntilHandshakeCompletes(_ write: @escaping @Sendable () -> Void) {
        deferredWrites.withLock {
            $0.append(write)
            mayHaveDeferredWrites.store(true, ordering: .releasing)
        }
    }

    func commitDeferredWrites() {
        // A write deferred after this load is committed by the next call, as one deferred
        // after the lock below would be.
        guard mayHaveDeferredWrites.load(ordering: .acquiring) else { return }
        let writes = deferredWrites.withLock { writes in
            defer {
                writes.removeAll()
                mayHaveDeferredWrites.store(false, ordering: .relaxed)
            }
            return writes
        }
        for write in writes { write() }
    }

    var results: [CertificateRevocationResult]? { stored.withLock { $0 } }

    func record(_ results: [CertificateRevocationResult]) {
        stored.withLock { $0 = results }
    }
}
