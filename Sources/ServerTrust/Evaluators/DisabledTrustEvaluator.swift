/// Accepts every server without any check. For debugging against a local server only.
///
/// There is deliberately no static factory: spell the type out so it stands out in review.
/// In a release build (compiled without `DEBUG`) it refuses every server with
/// ``TrustError/Code/disabledEvaluatorInRelease`` unless created with
/// ``init(unsafeAcceptAnyCertificateInReleaseBuilds:)`` set to `true`.
///
/// - Warning: Anyone on the network path can read and change the traffic of a host evaluated
///   by this evaluator.
public final class DisabledTrustEvaluator: ServerTrustEvaluating {
    private let allowedInRelease: Bool

    /// - Parameter unsafeAcceptAnyCertificateInReleaseBuilds: accept any certificate in
    ///   release builds too. Default `false`.
    ///   - Warning: Never ship `true`.
    public init(unsafeAcceptAnyCertificateInReleaseBuilds: Bool = false) {
        allowedInRelease = unsafeAcceptAnyCertificateInReleaseBuilds
    }

    /// Whether this build of ServerTrust was compiled for debugging.
    static var isDebugBuild: Bool {
        #if DEBUG
            return true
        #else
            return false
        #endif
    }

    /// Whether this evaluator accepts servers in this build.
    public var isActive: Bool { Self.isDebugBuild || allowedInRelease }

    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        guard isActive else {
            throw TrustError(
                .disabledEvaluatorInRelease,
                "DisabledTrustEvaluator refuses to run in a release build; remove it, or pass unsafeAcceptAnyCertificateInReleaseBuilds: true if you really mean it.",
                evaluator: name, host: host)
        }
    }
}
