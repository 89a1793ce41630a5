public import Foundation
public import ServerTrust

/// The outcome of signed-response verification for one response.
public enum ResponseVerification: Hashable, Sendable, CustomStringConvertible {
    /// No signed-response policy applies to the host (or its mode is disabled).
    case notRequested
    /// The response was signed by a key chained to a configured root, for this request, and
    /// the body is the signed one.
    case verified
    /// Verification failed (informational mode; enforced mode throws instead).
    case failed(ResponseSignatureError)

    /// Whether the response is proven to come from the server.
    public var isVerified: Bool { self == .verified }

    public var description: String {
        switch self {
        case .notRequested: "not requested"
        case .verified: "verified"
        case .failed(let error): "failed (\(error.code)): \(error.reason)"
        }
    }
}

/// A response that failed signature verification, as reported to
/// ``Session/Configuration/onVerificationFailure``.
public struct ResponseVerificationFailure: Sendable, CustomStringConvertible {
    /// The URL of the hop whose response failed (a redirect hop, or the final one), whole;
    /// ``description`` shows it without user-info, query or fragment.
    public let url: URL
    /// The mode of the matching policy: informational (the response is returned) or enforced
    /// (the session throws).
    public let mode: SignedResponsePolicy.Mode
    /// Why it failed; `ResponseSignatureError.status` is the response status.
    public let error: ResponseSignatureError

    /// The mode, the URL without user-info, query or fragment, and the error.
    public var description: String { "\(mode) signed-response check failed for \(URLRedaction.redacted(url)): \(error)" }
}
