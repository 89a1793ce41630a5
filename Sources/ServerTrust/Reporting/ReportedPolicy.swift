public import Foundation

/// What a failure report says about the policy that failed: its pins (RFC 7469's `known-pins`)
/// and the earliest date its pins stop applying (`effective-expiration-date`).
///
/// Read from the host's declaration: its pin set, or its canary set for a canary finding (the
/// policy whose verdict differed). A host checked by an evaluator of its own (`custom`) reports
/// what that evaluator says (``PinReporting``); one that says nothing reports no pins.
struct ReportedPolicy {
    var pins: [Pin] = []
    var expiration: Date?

    init(_ policy: HostPolicy, mode: EnforcementMode) {
        if let custom = policy.custom {
            let reporting = custom as? any PinReporting
            let reported = reporting?.reportedPins(for: mode) ?? (mode == .canary ? reporting?.reportedPins(for: .enforced) : nil)
            pins = reported?.pins ?? []
            expiration = reported?.expiration
        } else {
            let set = mode == .canary ? policy.canary ?? policy.pins : policy.pins
            pins = set?.entries.map(\.pin).sorted() ?? []
            expiration = set?.effectiveExpiration
        }
        var seen: Set<Pin> = []
        pins = pins.filter { seen.insert($0).inserted }
    }
}

/// An evaluator that says which pins its verdict comes from, for failure reports of a host that
/// uses it as its `custom` evaluator. Each of ServerTrust's evaluators answers for itself; a
/// wrapper answers with its children's pins.
package protocol PinReporting {
    /// The pins behind a finding of `mode` and when they stop applying, or nil when this
    /// evaluator makes no such finding (no canary below it, for ``EnforcementMode/canary``).
    func reportedPins(for mode: EnforcementMode) -> (pins: [Pin], expiration: Date?)?
}

extension PinSetTrustEvaluator: PinReporting {
    package func reportedPins(for mode: EnforcementMode) -> (pins: [Pin], expiration: Date?)? {
        mode == .canary ? nil : (core.configuredPins, pinSet.effectiveExpiration)
    }
}

extension PinnedKeyHashesTrustEvaluator: PinReporting {
    package func reportedPins(for mode: EnforcementMode) -> (pins: [Pin], expiration: Date?)? {
        mode == .canary ? nil : (core.configuredPins, nil)
    }
}

extension PinnedCertificatesTrustEvaluator: PinReporting {
    package func reportedPins(for mode: EnforcementMode) -> (pins: [Pin], expiration: Date?)? {
        mode == .canary ? nil : (core.configuredPins, nil)
    }
}

extension PublicKeysTrustEvaluator: PinReporting {
    package func reportedPins(for mode: EnforcementMode) -> (pins: [Pin], expiration: Date?)? {
        mode == .canary ? nil : (core.configuredPins, nil)
    }
}

extension CompositeTrustEvaluator: PinReporting {
    /// Every part's pins and the earliest expiration; for a canary finding, the first canary's.
    package func reportedPins(for mode: EnforcementMode) -> (pins: [Pin], expiration: Date?)? {
        let parts = evaluators.compactMap { ($0 as? any PinReporting)?.reportedPins(for: mode) }
        if mode == .canary { return parts.first }
        return (parts.flatMap(\.pins), parts.compactMap(\.expiration).min())
    }
}

extension InformationalTrustEvaluator: PinReporting {
    package func reportedPins(for mode: EnforcementMode) -> (pins: [Pin], expiration: Date?)? {
        (evaluator as? any PinReporting)?.reportedPins(for: mode)
    }
}

extension CanaryTrustEvaluator: PinReporting {
    /// The trial's pins for a canary finding, else the enforced evaluator's.
    package func reportedPins(for mode: EnforcementMode) -> (pins: [Pin], expiration: Date?)? {
        let reporting = (mode == .canary ? trial : enforced) as? any PinReporting
        return reporting?.reportedPins(for: mode == .canary ? .enforced : mode)
    }
}

extension TrustFailureReport {
    /// The report for one failure of a host's `policy`.
    ///
    /// - Parameters:
    ///   - failure: the rejection, or the finding's error.
    ///   - mode: ``EnforcementMode/enforced`` for a rejection, else the finding's mode.
    ///   - policy: the host's policy; its pins (its canary's, for a canary finding) become
    ///     `known-pins`.
    ///   - hostname: the host that was connected to.
    ///   - port: the port that was connected to.
    ///   - pattern: the ``ServerTrustManager`` pattern that matched (`*.example.com`), or nil when
    ///     the host was not configured by pattern; sets `noted-hostname` and `include-subdomains`.
    ///   - servedChain: the chain as the server sent it.
    ///   - validatedChain: the chain as validation built it, empty when validation failed or did
    ///     not run.
    ///   - date: when the failure happened: the report's `date-time`.
    public init(
        failure: TrustError, mode: EnforcementMode, policy: HostPolicy, hostname: String, port: Int,
        pattern: HostPattern?, servedChain: [Certificate], validatedChain: [Certificate], date: Date
    ) {
        let described = ReportedPolicy(policy, mode: mode)
        var noted = pattern?.description ?? hostname
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
            evaluator: failure.evaluator ?? policy.custom?.name ?? "HostPolicy", reason: failure.code, message: failure.reason, mode: mode)
    }
}
