#if NIOAdapter
/// What ``ServerTrustNIOVerifier`` does with an evaluator that reads OCSP staples, which
/// swift-nio-ssl cannot deliver.
///
/// swift-nio-ssl (2.37) neither asks the server for a staple nor exposes one: the verification
/// callback receives the certificates only. So every evaluation through this adapter sees
/// `PeerTrust.stapledOCSPResponse` as `nil`. Evaluators whose
/// `ServerTrustEvaluating.usesStapledOCSPResponse` is `true` fall into two groups:
///
/// - those that may also fetch (`mayFetchRevocationData` is `true`: `RevocationTrustEvaluator`
///   with `RevocationOptions.softFail` or `RevocationOptions.hardFail`):
///   they are always evaluated, as "no staple", and check revocation live through the
///   `RevocationFetcher` given to the verifier or their own;
/// - staple-only ones (`mayFetchRevocationData` is `false`: `RevocationOptions.ocspStapled`,
///   `RevocationOptions.stapleRequired`): they could never learn a revocation
///   status here, and this setting decides.
///
/// Defaults to ``failClosed``.
public struct StapledOCSPHandling: Hashable, Sendable, CustomStringConvertible {
    private enum Base: Hashable, Sendable {
        case failClosed
        case evaluateWithoutStaple
    }

    private let base: Base

    /// A staple-only evaluator refuses every connection with `TrustError.Code.invalidConfiguration`,
    /// when the verifier for its host is made, naming the evaluator and the fix (live revocation
    /// with a fetcher). The default: a policy that says "check revocation by staple" never
    /// silently becomes "never check revocation".
    public static let failClosed = StapledOCSPHandling(base: .failClosed)

    /// A staple-only evaluator is evaluated as if the server had stapled nothing: a soft-fail
    /// one (`RevocationOptions.ocspStapled`) accepts with the status recorded as
    /// unknown, a hard-fail one (`RevocationOptions.stapleRequired`) and any
    /// must-staple leaf are refused with `TrustError.Code.revocationStatusUnknown`.
    ///
    /// - Warning: With a soft-fail staple-only policy, revocation is then never checked over
    ///   swift-nio-ssl: a revoked certificate is accepted. Prefer live revocation.
    public static let evaluateWithoutStaple = StapledOCSPHandling(base: .evaluateWithoutStaple)

    /// Whether staple-only evaluators are refused.
    var refusesStapleOnlyEvaluators: Bool { base == .failClosed }

    /// `failClosed` or `evaluateWithoutStaple`.
    public var description: String { base == .failClosed ? "failClosed" : "evaluateWithoutStaple" }
}
#endif
