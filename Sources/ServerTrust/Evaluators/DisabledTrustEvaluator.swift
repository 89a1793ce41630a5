public import Logging

/// Accepts every server without any check. For debugging against a local server only.
///
/// There is deliberately no static factory: spell the type out so it stands out in review.
/// It accepts nothing unless asked in so many words, in every build:
///
/// - `DisabledTrustEvaluator(unsafeAcceptAnyCertificate: true)` accepts any server in a debug
///   build of ServerTrust and refuses every server in a release build;
/// - `DisabledTrustEvaluator(unsafeAcceptAnyCertificateInReleaseBuilds: true)` accepts any
///   server in every build;
/// - `DisabledTrustEvaluator()` refuses every server (`TrustError.Code.invalidConfiguration`).
///
/// The opt-in is required in debug builds too, because "debug" is the library's own `DEBUG`
/// flag: a server image built with a plain `swift build` is a debug build, and it used to
/// accept any certificate without a word in the code that said so (second audit, finding 7).
/// Every acceptance is logged at error level, so a forgotten evaluator shows in the logs.
///
/// - Warning: Anyone on the network path can read and change the traffic of a host evaluated
///   by this evaluator.
public final class DisabledTrustEvaluator: ServerTrustEvaluating {
    private let optedIn: Bool
    private let allowedInRelease: Bool
    private let logger: Logger

    /// - Parameters:
    ///   - unsafeAcceptAnyCertificate: accept any certificate in debug builds. Default `false`:
    ///     the evaluator refuses every server.
    ///     - Warning: Only for a local debugging session; never commit `true` to shipping code.
    ///   - unsafeAcceptAnyCertificateInReleaseBuilds: accept any certificate in release builds
    ///     too (implies `unsafeAcceptAnyCertificate`). Default `false`.
    ///     - Warning: Never ship `true`.
    ///   - logger: where each acceptance is logged, at error level. Default the ServerTrust logger.
    public init(
        unsafeAcceptAnyCertificate: Bool = false,
        unsafeAcceptAnyCertificateInReleaseBuilds: Bool = false,
        logger: Logger = TrustLogging.defaultLogger
    ) {
        optedIn = unsafeAcceptAnyCertificate || unsafeAcceptAnyCertificateInReleaseBuilds
        allowedInRelease = unsafeAcceptAnyCertificateInReleaseBuilds
        self.logger = logger
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
    public var isActive: Bool { allowedInRelease || (optedIn && Self.isDebugBuild) }

    public func evaluate(_ trust: PeerTrust, forHost host: String) throws {
        guard optedIn else {
            throw TrustError(
                .invalidConfiguration,
                "DisabledTrustEvaluator accepts nothing unless created with unsafeAcceptAnyCertificate: true (debug builds) "
                    + "or unsafeAcceptAnyCertificateInReleaseBuilds: true; evaluate this host with a real evaluator instead.",
                evaluator: name, host: host)
        }
        guard isActive else {
            throw TrustError(
                .disabledEvaluatorInRelease,
                "DisabledTrustEvaluator refuses to run in a release build; remove it, or pass unsafeAcceptAnyCertificateInReleaseBuilds: true if you really mean it.",
                evaluator: name, host: host)
        }
        logger.error(
            "DisabledTrustEvaluator accepted \(host) without any check: anyone on the network path can read and change this traffic",
            metadata: [
                "host": .string(host), "evaluator": .string(name),
                "leaf": .string(trust.presentedChain.first.map { "\($0.spkiPin): \($0.subject)" } ?? "none"),
            ])
    }
}
