import Foundation

/// Round 1, the application's CRLs (``RevocationTrustEvaluator``'s `revocationLists`), checked
/// by `CRLVerifier` whatever the methods say.
extension RevocationChecker {
    /// Every decisive answer of the application's own CRLs for `certificate`. CRLs are matched to
    /// the issuer by DER name and, where both carry one, by authority key identifier.
    func checkLocalCRLs(certificate: Certificate, issuer: Certificate, attempts: inout Attempts) -> [Answer] {
        let ofIssuer = localCRLs.filter { $0.crl.isIssued(by: issuer) }
        let complete = ofIssuer.filter { $0.deltaBase == nil }
        let delta = ofIssuer.first { $0.deltaBase != nil }
        var answers: [Answer] = []
        for crl in complete {
            let verified = crlVerifier.verify(crl, delta: delta, for: certificate, issuedBy: issuer, at: time)
            if verified.status.isDecisive {
                answers.append(Answer(
                    status: verified.status, source: .localCRL, fromCache: false, explanation: verified.explanation,
                    validUntil: acceptedUntil(verified.nextUpdate), thisUpdate: verified.thisUpdate, nextUpdate: verified.nextUpdate))
            } else {
                attempts.failed(verified.status.unknownReason ?? .malformed, "Local CRL: \(verified.explanation)")
            }
        }
        return answers
    }
}
