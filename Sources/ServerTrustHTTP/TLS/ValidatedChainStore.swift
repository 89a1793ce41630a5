internal import ServerTrust

/// The chains our own path validation built at full handshakes, by leaf: what the connection
/// guard evaluates when a TLS session is resumed.
///
/// A resumed session brings no chain of its own. libcurl 8.10 and later keep sessions in their
/// cache serialised (`i2d_SSL_SESSION`, curl commit a2bcec0, "fix the data race when sharing an
/// SSL session between threads") and restore them with `d2i_SSL_SESSION`, whose encoding holds
/// the peer's leaf but not the rest of its chain, so `SSL_get_peer_cert_chain` is NULL on a
/// resumed connection (Debian 13's libcurl 8.14.1). libcurl 7.88 keeps the `SSL_SESSION` object,
/// chain included; but that chain is only what the peer sent once, and on every libcurl the
/// guard evaluates a resumed session on what our validation made of it instead: the validated
/// chain of the full handshake whose session is being resumed, leaf to anchor. The guard runs the
/// policy on it again (path validation against the anchors at the current time, the host, the
/// pins, revocation), so a resumed session is held to the same rules as a new one, and nothing
/// the peer sent goes unvalidated into an evaluation.
///
/// Keyed by the leaf: the one certificate a resumed session carries (`SSL_get0_peer_certificate`,
/// from the client's own session cache) and the first of every validated chain. One store per
/// session cache (``ShareHandle``): a session is resumed only from the cache its handshake filled,
/// so its chain is found in the same place. A chain is stored only when an evaluation accepted the
/// server and validated a chain; a resumed session whose leaf has none here is refused and its
/// request sent again on a new connection with a full handshake
/// (``ConnectionGuard/RetryReason/resumedWithoutValidatedChain``).
///
/// Thread-safe: written by OpenSSL callbacks and read by the guard, on whichever loop runs the
/// share's transfers; a lock orders them.
final class ValidatedChainStore: Sendable {
    /// The most leaves remembered; the oldest goes first. A host has one leaf per key type
    /// and rotation, a few more behind a load balancer: far fewer than this.
    static let capacity = 64

    private struct Entries {
        var chains: [Certificate: [Certificate]] = [:]
        /// Leaves, oldest first.
        var order: [Certificate] = []
    }

    private let entries = Locked(Entries())

    /// Remembers `validatedChain` (leaf first, as path validation returned it) for its leaf.
    func remember(_ validatedChain: [Certificate]) {
        guard let leaf = validatedChain.first else { return }
        entries.withLock { entries in
            if entries.chains.updateValue(validatedChain, forKey: leaf) != nil {
                entries.order.removeAll { $0 == leaf }
            } else if entries.order.count >= Self.capacity {
                entries.chains[entries.order.removeFirst()] = nil
            }
            entries.order.append(leaf)
        }
    }

    /// The validated chain remembered for `leaf`, or nil.
    func chain(forLeaf leaf: Certificate) -> [Certificate]? {
        entries.withLock { $0.chains[leaf] }
    }

    /// Leaves remembered (tests).
    var count: Int { entries.withLock { $0.order.count } }
}
