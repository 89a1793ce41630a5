public import Foundation

/// What a failure report says about the policy that failed: its pins (RFC 7469's `known-pins`)
/// and the earliest date its pins stop applying (`effective-expiration-date`).
///
/// Walks the evaluator tree: pinning evaluators contribute their pins, composite and
/// informational wrappers their children. For a canary finding only the trial policy is
/// described, since that is the policy whose verdict differed.
struct ReportedPolicy {
    var pins: [Pin] = []
    var expiration: Date?

    init(_ evaluator: any ServerTrustEvaluating, mode: EnforcementMode) {
        if mode == .canary, let trial = Self.firstCanary(in: evaluator)?.trial {
            collect(trial)
        } else {
            collect(evaluator)
        }
        var seen: Set<Pin> = []
        pins = pins.filter { seen.insert($0).inserted }
    }

    private mutating func collect(_ evaluator: any ServerTrustEvaluating) {
        switch evaluator {
        case let pinSet as PinSetTrustEvaluator:
            pins += pinSet.core.configuredPins
            if let date = pinSet.pinSet.effectiveExpiration { expiration = min(expiration ?? date, date) }
        case let pinned as PinnedKeyHashesTrustEvaluator: pins += pinned.core.configuredPins
        case let pinned as PinnedCertificatesTrustEvaluator: pins += pinned.core.configuredPins
        case let pinned as PublicKeysTrustEvaluator: pins += pinned.core.configuredPins
        case let composite as CompositeTrustEvaluator: composite.evaluators.forEach { collect($0) }
        case let informational as InformationalTrustEvaluator: collect(informational.evaluator)
        case let canary as CanaryTrustEvaluator: collect(canary.enforced)
        default: break
        }
    }

    private static func firstCanary(in evaluator: any ServerTrustEvaluating) -> CanaryTrustEvaluator? {
        switch evaluator {
        case let canary as CanaryTrustEvaluator: canary
        case let composite as CompositeTrustEvaluator: composite.evaluators.lazy.compactMap(firstCanary).first
        case let informational as InformationalTrustEvaluator: firstCanary(in: informational.evaluator)
        default: nil
        }
    }
}

extension TrustFailureReport {
    /// The report for one failure of `policy`, the evaluator a host was configured with.
    ///
    /// - Parameters:
    ///   - failure: the rejection, or the finding's error.
    ///   - mode: ``EnforcementMode/enforced`` for a rejection, else the finding's mode.
    ///   - policy: the host's whole evaluator; its pins become `known-pins`.
    ///   - hostname: the host that was connected to.
    ///   - port: the port that was connected to.
    ///   - pattern: the ``ServerTrustManager`` pattern that matched (`*.example.com`), or nil when
    ///     the host was not configured by pattern; sets `noted-hostname` and `include-subdomains`.
    ///   - servedChain: the chain as the server sent it.
    ///   - validatedChain: the chain as validation built it, empty when validation failed or did
    ///     not run.
    ///   - date: when the failure happened: the report's `date-time`.
    public init(
        failure: TrustError, mode: EnforcementMode, policy: any ServerTrustEvaluating, hostname: String, port: Int,
        pattern: String?, servedChain: [Certificate], validatedChain: [Certificate], date: Date
    ) {
        let described = ReportedPolicy(policy, mode: mode)
        var noted = pattern ?? hostname
        var includeSubdomains = false
        for prefix in ["**.", "*."] where noted.hasPrefix(prefix) {
            noted.removeFirst(prefix.count)
            includeSubdomains = true
            break
        }
        self.init(
            dateTime: date, hostname: hostname, port: port, effectiveExpirationDate: described.expiration,
            includeSubdomains: includeSubdomains, notedHostname: noted, servedCertificateChain: servedChain,
            validatedCertificateChain: validatedChain, knownPins: described.pins,
            evaluator: failure.evaluator ?? policy.name, reason: failure.code, message: failure.reason, mode: mode)
    }
}
