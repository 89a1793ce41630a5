/// A trust failure that did not reject the connection: an informational evaluator's failure, a
/// canary disagreement, or an expired pin set that fell back to default validation.
///
/// Evaluators record findings on the ``PeerTrust`` they evaluate; a session turns them into
/// the response's trust result, failure reports and error-level logs.
public struct TrustFinding: Hashable, Sendable, CustomStringConvertible {
    /// What failed, attributed to its evaluator and host, with the evidence.
    public let error: TrustError
    /// The mode under which it was not enforced.
    public let mode: EnforcementMode
    /// Whether the evaluator that recorded it has logged it at error level already, so a
    /// session counts and reports it but does not log it a second time.
    public let isLogged: Bool

    /// - Parameters:
    ///   - error: what failed.
    ///   - mode: the mode under which it was not enforced.
    ///   - isLogged: whether the recording evaluator logged it at error level. Default `false`:
    ///     the session logs it.
    public init(error: TrustError, mode: EnforcementMode, isLogged: Bool = false) {
        self.error = error
        self.mode = mode
        self.isLogged = isLogged
    }

    public static func == (lhs: TrustFinding, rhs: TrustFinding) -> Bool {
        lhs.error.code == rhs.error.code && lhs.error.evaluator == rhs.error.evaluator && lhs.mode == rhs.mode
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(error.code)
        hasher.combine(error.evaluator)
        hasher.combine(mode)
    }

    public var description: String { "\(mode): \(error)" }
}
