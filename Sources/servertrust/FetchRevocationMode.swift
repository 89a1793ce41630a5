import ArgumentParser
import ServerTrust

/// `fetch --revocation`: whether and how the URL's host is checked for revocation.
enum FetchRevocationMode: String, ExpressibleByArgument, CaseIterable {
    /// No revocation check.
    case off
    /// Stapled OCSP, then live OCSP, then CRL; a revoked certificate rejects, unknown is accepted.
    case soft
    /// As `soft`, but only a verified "good" passes (`requirePositiveResponse`).
    case hard

    /// The revocation options of the mode, nil for `off`.
    var options: RevocationOptions? {
        switch self {
        case .off: nil
        case .soft: .softFail
        case .hard: .hardFail
        }
    }
}
