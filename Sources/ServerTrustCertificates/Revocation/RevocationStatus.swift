public import Foundation

/// The revocation status of one certificate, as a revocation check established it.
///
/// ``good`` means a response was verified end to end: signed by the certificate's issuer or a
/// responder the issuer authorised, about this very certificate, fresh at the validation time.
/// The verifiers in this module produce it in exactly one place, after every check has passed;
/// everything that stops short of that is ``unknown(_:)`` with the reason, never `good`.
///
/// What to do with ``unknown(_:)`` is a policy decision: a hard-failing policy rejects it, a
/// soft-failing one accepts it (with a warning). ``revoked(reason:date:)`` is always a rejection.
public enum RevocationStatus: Hashable, Sendable, CustomStringConvertible {
    /// A verified, fresh response says the certificate is not revoked.
    case good
    /// A verified, fresh response says the certificate was revoked at `date`, for `reason` when
    /// the responder gave one it is allowed to give.
    case revoked(reason: RevocationReason?, date: Date)
    /// The status could not be established; the reason says why.
    case unknown(UnknownReason)

    /// `good`, `revoked` or `unknown`: stable, for logs and JSON.
    public var name: String {
        switch self {
        case .good: "good"
        case .revoked: "revoked"
        case .unknown: "unknown"
        }
    }

    public var description: String {
        switch self {
        case .good:
            return "good"
        case .revoked(let reason, let date):
            return "revoked (\(reason?.description ?? "no reason given")) at \(date.formatted(.iso8601))"
        case .unknown(let reason):
            return "unknown (\(reason))"
        }
    }
}
