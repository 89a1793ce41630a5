public import Foundation

extension ResolvedHostPolicy {
    /// Checks the host's Certificate Transparency requirement once the evaluator has accepted
    /// the chain: the SCTs embedded in the validated leaf (with its issuer, as
    /// `PeerTrust.certificateTransparencyChain` finds it), sent in the TLS
    /// extension, and stapled in the OCSP response, verified against the manager's log list and
    /// judged by ``CertificateTransparencyPolicy``.
    ///
    /// An enforced failure is returned as the refusal (`TrustError.Code.certificateTransparency`);
    /// a report-only failure, or a stale list under fail-open, is recorded on `trust` as an
    /// informational finding (counted and logged by the evaluation's record, never refused).
    ///
    /// - Returns: the outcome and the refusal, or nil when the host has no requirement.
    func checkCertificateTransparency(_ trust: PeerTrust) -> (outcome: CertificateTransparencyOutcome, refusal: TrustError?)? {
        guard let requirement = policy.certificateTransparency else { return nil }
        let outcome = certificateTransparencyOutcome(trust, requirement: requirement)
        guard let error = outcome.error(host: host.name) else { return (outcome, nil) }
        if requirement.mode == .enforced, outcome.isEnforceable { return (outcome, error) }
        trust.record(TrustFinding(error: error, mode: .informational))
        return (outcome, nil)
    }

    /// Whether `chain`'s leaf needs SCTs from the handshake (TLS extension or staple) to meet
    /// the host's Certificate Transparency requirement: its embedded SCTs alone, verified with
    /// the chain's issuer (or the presented one that issued the leaf), fall short. For a
    /// connection guard deciding whether a connection that cannot carry the handshake's SCTs
    /// (a resumed session) is worth judging, or needs a full handshake; never a decision to trust.
    ///
    /// A stale or missing list is no shortfall more SCTs would cure: false. Without a
    /// requirement (the host's evaluator reads SCTs itself), whether the leaf embeds none.
    package func certificateTransparencyNeedsHandshakeSCTs(_ chain: [Certificate], at time: Date) -> Bool {
        guard let leaf = chain.first else { return false }
        guard let requirement = policy.certificateTransparency else {
            return (try? SignedCertificateTimestamp.embedded(in: leaf))?.isEmpty ?? true
        }
        guard let store = certificateTransparencyLogs?.current else { return false }
        let outcome = store.evaluate(PeerTrust.certificateTransparencyChain(validated: nil, presented: chain), requirement: requirement, at: time)
        return outcome.reason.map { ![.staleLogList, .noLogList].contains($0) } ?? false
    }

    private func certificateTransparencyOutcome(_ trust: PeerTrust, requirement: CertificateTransparencyRequirement) -> CertificateTransparencyOutcome {
        guard let store = certificateTransparencyLogs?.current else {
            return CertificateTransparencyOutcome(reason: .noLogList, detail: "The trust manager has no CT log list.", observations: [])
        }
        return store.evaluate(trust.certificateTransparencyChain, handshake: trust.handshake, requirement: requirement, at: trust.validationTime)
    }
}

extension CTLogStore {
    /// Checks a chain's SCTs against this list: those embedded in the leaf (verified with the
    /// chain's second certificate as the issuer), those in `handshake`'s TLS extension and
    /// stapled OCSP response, judged by ``CertificateTransparencyPolicy``.
    ///
    /// What a host's evaluation runs once its chain is validated, and what `servertrust verify
    /// --ct-log-list` runs offline (embedded SCTs need only the leaf and its issuer).
    ///
    /// - Parameters:
    ///   - chain: the validated chain, leaf first.
    ///   - handshake: the handshake's SCTs and staple; default none.
    ///   - requirement: the list's maximum age and stale-list behaviour.
    ///   - time: the evaluation time, in milliseconds for OpenSSL (an SCT after it is refused).
    ///   - timeIsTheClock: false for a time the caller chose (see
    ///     ``CertificateTransparencyPolicy/evaluate(_:notValidBefore:notValidAfter:list:requirement:at:timeIsTheClock:)``).
    public func evaluate(
        _ chain: [Certificate], handshake: HandshakeEvidence = HandshakeEvidence(), requirement: CertificateTransparencyRequirement, at time: Date,
        timeIsTheClock: Bool = true
    ) -> CertificateTransparencyOutcome {
        guard let leaf = chain.first else {
            return CertificateTransparencyOutcome(reason: .notEnoughSCTs, detail: "The server presented no certificate.", observations: [])
        }
        var scts: [SignedCertificateTimestamp] = []
        var unreadable: [String] = []
        func read(_ what: String, _ body: () throws -> [SignedCertificateTimestamp]) {
            do { scts += try body() } catch { unreadable.append("\(what): \((error as? TrustError)?.reason ?? "\(error)")") }
        }
        read("embedded") { try SignedCertificateTimestamp.embedded(in: leaf) }
        for encoded in handshake.signedCertificateTimestamps {
            read("TLS extension") { [try SignedCertificateTimestamp(tlsEncoded: encoded, source: .tlsExtension)] }
        }
        if let staple = handshake.stapledOCSPResponse {
            read("OCSP staple") { try SignedCertificateTimestamp.stapled(inOCSPResponse: staple) }
        }
        let observations = verify(scts, leaf: leaf, issuer: chain.count > 1 ? chain[1] : nil, at: time)
        let outcome = CertificateTransparencyPolicy.evaluate(
            observations, notValidBefore: leaf.notValidBefore, notValidAfter: leaf.notValidAfter, list: list, requirement: requirement, at: time,
            timeIsTheClock: timeIsTheClock)
        guard !unreadable.isEmpty, let reason = outcome.reason else { return outcome }
        // An SCT that does not parse is never counted; say so beside the shortfall.
        return CertificateTransparencyOutcome(
            reason: reason, detail: outcome.detail + " Unreadable SCTs: " + unreadable.joined(separator: "; ") + ".",
            observations: observations, isEnforceable: outcome.isEnforceable)
    }
}
