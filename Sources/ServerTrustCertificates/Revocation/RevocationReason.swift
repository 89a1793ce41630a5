/// Why a certificate was revoked: the CRLReason of RFC 5280 §5.3.1, as OCSP and CRLs carry it.
///
/// A closed enum because the set is fixed by the RFC; value 7 is unassigned. A reason code
/// outside this set is reported as no reason (`nil`), never as a guess.
public enum RevocationReason: Int, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case unspecified = 0
    case keyCompromise = 1
    case caCompromise = 2
    case affiliationChanged = 3
    case superseded = 4
    case cessationOfOperation = 5
    case certificateHold = 6
    case removeFromCRL = 8
    case privilegeWithdrawn = 9
    case aaCompromise = 10

    /// The RFC 5280 name, e.g. `keyCompromise`.
    public var description: String {
        switch self {
        case .unspecified: "unspecified"
        case .keyCompromise: "keyCompromise"
        case .caCompromise: "cACompromise"
        case .affiliationChanged: "affiliationChanged"
        case .superseded: "superseded"
        case .cessationOfOperation: "cessationOfOperation"
        case .certificateHold: "certificateHold"
        case .removeFromCRL: "removeFromCRL"
        case .privilegeWithdrawn: "privilegeWithdrawn"
        case .aaCompromise: "aACompromise"
        }
    }
}
