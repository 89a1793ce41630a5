import Foundation

extension ResolvedHostPolicy {
    /// Checks the host's Certificate Transparency requirement once the evaluator has accepted
    /// the chain: the SCTs embedded in the validated leaf (with its issuer), sent in the TLS
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
        guard let reason = outcome.reason else { return (outcome, nil) }
        let error = TrustError(
            .certificateTransparency,
            "Certificate Transparency (\(reason.rawValue)) for \(host.name): \(outcome.detail)"
                + (outcome.observations.isEmpty ? "" : " SCTs seen: " + outcome.observations.map(\.description).joined(separator: "; ") + "."),
            evaluator: "CertificateTransparency", host: host.name)
        if requirement.mode == .enforced, outcome.isEnforceable { return (outcome, error) }
        trust.record(TrustFinding(error: error, mode: .informational))
        return (outcome, nil)
    }

    private func certificateTransparencyOutcome(_ trust: PeerTrust, requirement: CertificateTransparencyRequirement) -> CertificateTransparencyOutcome {
        let chain = trust.validatedChainIfComputed ?? trust.presentedChain
        guard let store = certificateTransparencyLogs?.current else {
            return CertificateTransparencyOutcome(
                reason: .noLogList, detail: "The trust manager has no CT log list.", observations: [])
        }
        guard let leaf = chain.first else {
            return CertificateTransparencyOutcome(reason: .notEnoughSCTs, detail: "The server presented no certificate.", observations: [])
        }
        var scts: [SignedCertificateTimestamp] = []
        var unreadable: [String] = []
        do { scts += try SignedCertificateTimestamp.embedded(in: leaf) } catch { unreadable.append("embedded: \((error as? TrustError)?.reason ?? "\(error)")") }
        for encoded in trust.handshake.signedCertificateTimestamps {
            do { scts.append(try SignedCertificateTimestamp(tlsEncoded: encoded, source: .tlsExtension)) } catch {
                unreadable.append("TLS extension: \((error as? TrustError)?.reason ?? "\(error)")")
            }
        }
        if let staple = trust.handshake.stapledOCSPResponse {
            do { scts += try SignedCertificateTimestamp.stapled(inOCSPResponse: staple) } catch {
                unreadable.append("OCSP staple: \((error as? TrustError)?.reason ?? "\(error)")")
            }
        }
        let observations = store.verify(scts, leaf: leaf, issuer: chain.count > 1 ? chain[1] : nil, at: trust.validationTime)
        let outcome = CertificateTransparencyPolicy.evaluate(
            observations, notValidBefore: leaf.notValidBefore, notValidAfter: leaf.notValidAfter, list: store.list, requirement: requirement,
            at: trust.validationTime)
        guard !unreadable.isEmpty, let reason = outcome.reason else { return outcome }
        // An SCT that does not parse is never counted; say so beside the shortfall.
        return CertificateTransparencyOutcome(
            reason: reason, detail: outcome.detail + " Unreadable SCTs: " + unreadable.joined(separator: "; ") + ".",
            observations: observations, isEnforceable: outcome.isEnforceable)
    }
}
