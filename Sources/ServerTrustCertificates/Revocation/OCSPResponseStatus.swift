/// The `responseStatus` of an OCSP response (RFC 6960 §4.2.1): whether the responder answered
/// at all. Only ``successful`` carries certificate statuses; the others are error messages,
/// which are not signed and so prove nothing. Value 4 is unassigned.
public enum OCSPResponseStatus: Int, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case successful = 0
    case malformedRequest = 1
    case internalError = 2
    case tryLater = 3
    case signatureRequired = 5
    case unauthorized = 6

    /// The RFC 6960 name, e.g. `tryLater`.
    public var description: String {
        switch self {
        case .successful: "successful"
        case .malformedRequest: "malformedRequest"
        case .internalError: "internalError"
        case .tryLater: "tryLater"
        case .signatureRequired: "sigRequired"
        case .unauthorized: "unauthorized"
        }
    }
}
