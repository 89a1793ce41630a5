package import Foundation

/// What `OCSPVerifier` concluded about one certificate from one response, with the evidence.
package struct OCSPVerificationResult: Hashable, Sendable, CustomStringConvertible {
    /// The status. `good` only for a verified, fresh response about the certificate.
    package let status: RevocationStatus
    /// One or two sentences on why, naming the dates, signer or extension involved.
    package let explanation: String
    /// The subject of the certificate that signed the response, once the signature verified.
    package let signer: String?
    /// producedAt of the response, when it was parsed.
    package let producedAt: Date?
    /// thisUpdate of the single response the status comes from.
    package let thisUpdate: Date?
    /// nextUpdate of that single response, if it had one.
    package let nextUpdate: Date?
    /// Until when a cache may reuse this result: the earlier of nextUpdate and thisUpdate plus
    /// the maximum age. `nil` for an unknown status, which is never worth caching as an answer.
    package let freshUntil: Date?

    init(
        status: RevocationStatus, explanation: String, signer: String? = nil, producedAt: Date? = nil,
        thisUpdate: Date? = nil, nextUpdate: Date? = nil, freshUntil: Date? = nil
    ) {
        self.status = status
        self.explanation = explanation
        self.signer = signer
        self.producedAt = producedAt
        self.thisUpdate = thisUpdate
        self.nextUpdate = nextUpdate
        self.freshUntil = freshUntil
    }

    package var description: String { "\(status): \(explanation)" }
}
