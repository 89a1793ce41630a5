public import Foundation

extension PeerTrust {
    /// The first instant at which something this evaluation relied on stops holding: the
    /// earliest notAfter of the validated chain (of the leaf, when no chain was validated), a
    /// pin set's expiration or the last date of the pins that matched, the nextUpdate of the
    /// OCSP responses and CRLs that gave a revocation status. `nil` when nothing dated was
    /// relied on.
    ///
    /// An acceptance is a statement about this instant only; a client that keeps using what it
    /// accepted (a kept-alive connection, a resumed TLS session) must evaluate again no later
    /// than this. ServerTrustHTTP's `Session` does: a connection past it is not reused
    /// (ServerTrustHTTP's ConnectionGuard article).
    public var reliedOnUntil: Date? {
        let chain = validatedChainIfComputed ?? Array(presentedChain.prefix(1))
        let dates = chain.map(\.notValidAfter) + [relianceRecord.withLock { $0 }].compactMap { $0 }
        return dates.min()
    }

    /// Records that the evaluation relied on something that stops holding at `date`; evaluators
    /// call it for dated data they accept a server on (pins with dates, revocation answers).
    /// Only the earliest date is kept.
    public func relyOn(until date: Date) {
        relianceRecord.withLock { current in
            if current.map({ date < $0 }) ?? true { current = date }
        }
    }
}
