/// What a failing evaluator does to the connection.
///
/// Every evaluator enforces by default. Wrap one in ``InformationalTrustEvaluator``
/// (`.informational(…)`) to trial it without rejecting anyone, or pair a trial policy with the
/// enforced one in ``CanaryTrustEvaluator`` (`.canary(enforced:trial:)`) to be told wherever the
/// two disagree.
public struct EnforcementMode: Hashable, Sendable, CustomStringConvertible {
    private enum Base: String, Hashable, Sendable { case enforced, informational, canary }
    private let base: Base
    private init(base: Base) { self.base = base }

    /// A failure rejects the connection inside the handshake.
    public static let enforced = EnforcementMode(base: .enforced)
    /// A failure is recorded as a ``TrustFinding`` and reported; the connection is accepted and
    /// the response's trust result reads failed.
    /// - Warning: an informational policy protects nothing; it only tells you what enforcing
    ///   it would do.
    public static let informational = EnforcementMode(base: .informational)
    /// A trial policy run beside the enforced one; a different verdict is recorded and reported,
    /// the enforced verdict decides.
    public static let canary = EnforcementMode(base: .canary)

    /// `enforced`, `informational` or `canary`, as the policy file and the CLI spell them.
    public init?(rawValue: String) {
        guard let base = Base(rawValue: rawValue) else { return nil }
        self.base = base
    }

    public var description: String { base.rawValue }
}
