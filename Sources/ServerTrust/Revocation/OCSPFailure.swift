/// Why a response could not establish a status, with the sentence that explains this response.
///
/// Thrown (typed) between the verification steps and turned into
/// ``RevocationStatus/unknown(_:)`` at the end: a step can only fail towards `unknown`.
struct OCSPFailure: Error {
    let reason: RevocationStatus.UnknownReason
    let explanation: String

    init(_ reason: RevocationStatus.UnknownReason, _ explanation: String) {
        self.reason = reason
        self.explanation = explanation
    }
}
