/// Why a revocation source — an OCSP response or a CRL — could not establish a status, with the
/// sentence that explains this response or list.
///
/// Thrown (typed) between the verification steps of `OCSPVerifier` and `CRLVerifier` and
/// turned into `RevocationStatus.unknown(_:)` at the end: a step can only fail towards
/// `unknown`, never towards `good`.
struct RevocationFailure: Error {
    let reason: RevocationStatus.UnknownReason
    let explanation: String

    init(_ reason: RevocationStatus.UnknownReason, _ explanation: String) {
        self.reason = reason
        self.explanation = explanation
    }
}
