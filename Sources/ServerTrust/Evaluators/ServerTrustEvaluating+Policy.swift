extension ServerTrustEvaluating {
    /// Evaluates `trust` as a client's trust policy for `host`: this evaluator, then the host
    /// name or IP address against the leaf.
    ///
    /// Every client path runs this, not ``evaluate(_:forHost:)`` alone: `Session` (and the
    /// URLSession and OpenAPI adapters over it), ServerTrustNIO's verification callback (and
    /// grpc-swift through it), and the `servertrust` commands that judge a host. The host check
    /// belongs to the policy, never to whichever evaluator was picked: an evaluator that checks
    /// no host — ``RevocationTrustEvaluator`` on its own, a ``CanaryTrustEvaluator`` around one,
    /// a custom evaluator — would
    /// otherwise accept a certificate a trusted CA issued for another domain (the attacker's
    /// own), and the request with its credentials would go to the attacker (third review,
    /// finding 1). An evaluator's own host check, where it has one, runs first and its error
    /// is the one thrown; this one runs only once the evaluator has accepted.
    ///
    /// The leaf checked is the presented one, the certificate whose key the TLS handshake
    /// proved the server holds; a validated chain starts with it.
    ///
    /// The one exception is an active ``DisabledTrustEvaluator`` (see
    /// ``DisabledTrustEvaluator/isActive``), which checks nothing by design.
    ///
    /// - Throws: the evaluator's `TrustError`; else `TrustError.Code.hostMismatch` when the
    ///   leaf is not valid for `host` (the code the evaluators' own host check uses), or
    ///   `TrustError.Code.noCertificates` when there is no leaf.
    public func evaluateAsPolicy(_ trust: PeerTrust, forHost host: String) throws {
        try evaluate(trust, forHost: host)
        if let disabled = self as? DisabledTrustEvaluator, disabled.isActive { return }
        try attributing(host: host) {
            guard let leaf = trust.presentedChain.first else {
                throw TrustError(.noCertificates, "The server for \(host) presented no certificate.", host: host)
            }
            try HostNameVerifier.verify(leaf, host: host)
        }
    }
}
