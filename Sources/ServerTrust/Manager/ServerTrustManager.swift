import Foundation
public import Logging

/// Files a ``HostPolicy`` under each ``HostPattern`` and resolves each host to one of them.
///
/// ```swift
/// let manager = try ServerTrustManager(policies: [
///     try HostPattern("api.example.com"): HostPolicy(pins: try PinSet([.init("sha256/…", label: "current"), .init("sha256/…", label: "backup")])),
///     try HostPattern("**.cdn.example.com"): HostPolicy(),
/// ])
/// ```
///
/// Every pattern is validated when it is made (see ``HostPattern`` for the rules) and every
/// host's evaluator compiled when the manager is, so a typo fails at start-up instead of leaving
/// a host unpinned. For a host, the most specific
/// pattern wins, by depth: the exact host or address first; otherwise the matching wildcard whose
/// base (the part after `*.` or `**.`) has the most labels; between `*.base` and `**.base`,
/// `*.base`. So with `*.example.com` and `**.api.example.com`, the host `api.example.com` gets
/// `**.api.example.com`. `**.example.com` matches `example.com` too, as in OkHttp's
/// `CertificatePinner`; an exact `example.com` entry, if present, still wins for it.
///
/// One lookup, ``resolve(host:)``, gives a host everything configured for it: every per-host
/// setting of every client path is read from that resolution. A lookup probes a few dictionaries per label of the host: its cost depends on the
/// host, never on how many patterns are configured.
///
/// Immutable after `init`, hence `Sendable`.
public final class ServerTrustManager: Sendable {
    /// Whether a host that no pattern matches is refused (`true`, the default) or left to the
    /// caller's default validation (`false`).
    ///
    /// - Warning: With `false`, a typo in a pattern or a host added later silently gets default
    ///   validation only: any CA the machine trusts, including an intercepting proxy's, is accepted.
    public let allHostsMustBeEvaluated: Bool

    /// Every configured pattern, sorted by ``HostPattern/description``.
    public let patterns: [HostPattern]

    /// Keys and certificates no host may present, whatever its policy (``KeyDenyList``):
    /// every resolution carries it into the evaluation. Default empty.
    public let denyList: KeyDenyList

    /// The Certificate Transparency log list every host requiring CT
    /// (``HostPolicy/certificateTransparency``) is checked against; nil for none, which is an
    /// error when a policy requires CT. Replaceable at run time (``CertificateTransparencyLogs/replace(with:)``).
    public let certificateTransparencyLogs: CertificateTransparencyLogs?

    /// A host policy with the evaluator compiled from it once, when the manager was made.
    package struct Entry: Sendable {
        package let policy: HostPolicy
        package let evaluator: any ServerTrustEvaluating
    }

    /// The one table of host policies; every per-host setting of every client path is read
    /// from a resolution in it (``resolve(host:)``).
    package let table: HostPatternTable<Entry>

    /// Compiles each host's evaluator and indexes the patterns for lookup.
    ///
    /// - Parameters:
    ///   - policies: the policy for each host pattern (see ``HostPattern``).
    ///   - allHostsMustBeEvaluated: whether a host no pattern matches is refused; default `true`.
    ///   - denyList: keys and certificates refused for every host, whatever its policy; default none.
    ///   - certificateTransparencyLogs: the CT log list; default none.
    ///   - logger: where pin-set evaluators log expiry warnings.
    /// - Throws: `TrustError` `.invalidConfiguration` when there are no patterns and
    ///   `allHostsMustBeEvaluated` is `true`, since such a manager refuses every host; for a policy
    ///   whose evaluator cannot be compiled (``HostPolicy/makeEvaluator(logger:)``), for a report
    ///   URI that is not `https:`, for a policy requiring post-quantum key exchange on an OpenSSL
    ///   older than 3.5, or for a policy requiring Certificate Transparency without
    ///   `certificateTransparencyLogs` — each naming the pattern.
    public init(
        policies: [HostPattern: HostPolicy], allHostsMustBeEvaluated: Bool = true, denyList: KeyDenyList = KeyDenyList(),
        certificateTransparencyLogs: CertificateTransparencyLogs? = nil, logger: Logger = TrustLogging.defaultLogger
    ) throws(TrustError) {
        if policies.isEmpty, allHostsMustBeEvaluated {
            throw TrustError(
                .invalidConfiguration,
                "No host patterns are configured and allHostsMustBeEvaluated is true, so every host would be "
                    + "refused; add patterns for the hosts to pin.")
        }
        var table = HostPatternTable<Entry>()
        // Sorted, so the first problem reported is the same every run.
        for (pattern, policy) in policies.sorted(by: { $0.key.description < $1.key.description }) {
            if let problem = policy.keyExchange.unavailability {
                throw TrustError(.invalidConfiguration, "Host pattern \(pattern) \(problem).")
            }
            if let requirement = policy.certificateTransparency, certificateTransparencyLogs == nil {
                throw TrustError(
                    .invalidConfiguration,
                    "Host pattern \(pattern) requires Certificate Transparency (\(requirement.mode)), and the manager has no CT log "
                        + "list; pass certificateTransparencyLogs (the application's own list, or one delivered by trust updates).")
            }
            for uri in policy.reportURIs where uri.scheme?.lowercased() != "https" || (uri.host ?? "").isEmpty {
                throw TrustError(
                    .invalidConfiguration,
                    "The report URI \(URLRedaction.redacted(uri)) of host pattern \(pattern) is not an https: URL with a host.")
            }
            let evaluator: any ServerTrustEvaluating
            do {
                evaluator = try policy.makeEvaluator(logger: logger)
            } catch {
                throw TrustError(.invalidConfiguration, "Host pattern \(pattern): \(error.reason)")
            }
            table.insert(Entry(policy: policy, evaluator: evaluator), for: pattern)
        }
        self.table = table
        self.allHostsMustBeEvaluated = allHostsMustBeEvaluated
        self.patterns = table.patterns.sorted { $0.description < $1.description }
        self.denyList = denyList
        self.certificateTransparencyLogs = certificateTransparencyLogs
    }

    /// A manager whose policies are evaluators of your own (``HostPolicy/custom(_:minimumTLSVersion:clientIdentity:signedResponses:reportURIs:keyExchange:certificateTransparency:)``),
    /// every other setting at its default.
    ///
    /// - Parameters:
    ///   - evaluators: the evaluator for each host pattern (see ``HostPattern``).
    ///   - allHostsMustBeEvaluated: whether a host no pattern matches is refused; default `true`.
    ///   - denyList: keys and certificates refused for every host, whatever its policy; default none.
    /// - Throws: as ``init(policies:allHostsMustBeEvaluated:denyList:certificateTransparencyLogs:logger:)``.
    public convenience init(
        evaluators: [HostPattern: any ServerTrustEvaluating], allHostsMustBeEvaluated: Bool = true, denyList: KeyDenyList = KeyDenyList()
    ) throws(TrustError) {
        try self.init(
            policies: evaluators.mapValues { HostPolicy.custom($0) }, allHostsMustBeEvaluated: allHostsMustBeEvaluated, denyList: denyList)
    }

    /// Every pattern with its policy, sorted by pattern: what a trust update starts from.
    public var policies: [(pattern: HostPattern, policy: HostPolicy)] {
        table.entries.map { (pattern: $0.pattern, policy: $0.value.policy) }.sorted { $0.pattern.description < $1.pattern.description }
    }

    /// This manager's policies with another deny-list.
    /// - Parameter denyList: the deny-list of the new manager.
    public func replacing(denyList: KeyDenyList) throws(TrustError) -> ServerTrustManager {
        try ServerTrustManager(
            policies: Dictionary(uniqueKeysWithValues: policies.map { ($0.pattern, $0.policy) }),
            allHostsMustBeEvaluated: allHostsMustBeEvaluated, denyList: denyList, certificateTransparencyLogs: certificateTransparencyLogs)
    }

    /// The host's policy, resolved once for every client path: the one lookup of a host.
    ///
    /// The most specific pattern's ``HostPolicy`` and its compiled evaluator (the pattern that
    /// matched is ``ResolvedHostPolicy/pattern``), or ``HostPolicy/defaultValidation`` with no
    /// pattern when none matches and ``allHostsMustBeEvaluated`` is `false`. Every per-host
    /// setting is read from this one resolution, so no two settings of a host can come from
    /// different patterns.
    ///
    /// - Parameter host: a DNS name or IP address as it appears in a URL (`API.example.com.`,
    ///   `[2001:db8::1]`); compared after ``HostName/normalize(_:)``.
    /// - Throws: `TrustError` `.noEvaluatorForHost` when nothing matches and
    ///   ``allHostsMustBeEvaluated`` is `true` (the reason lists the configured patterns), and
    ///   always for a malformed host (empty, whitespace, NUL, empty labels, non-ASCII…), which
    ///   never matches.
    public func resolve(host: String) throws(TrustError) -> ResolvedHostPolicy {
        try resolve(NormalizedHost(host), spelled: host)
    }

    /// ``resolve(host:)`` for a host already normalised.
    package func resolve(_ name: NormalizedHost, spelled host: String) throws(TrustError) -> ResolvedHostPolicy {
        if let entry = table.entry(for: name) {
            return ResolvedHostPolicy(
                host: name, pattern: entry.pattern, policy: entry.value.policy, evaluator: entry.value.evaluator, denyList: denyList,
                certificateTransparencyLogs: certificateTransparencyLogs)
        }
        if !name.isIPAddress, let problem = HostName.dnsNameProblem(name.name) {
            throw TrustError(
                .noEvaluatorForHost, "Host name \(host.debugDescription) is malformed: it \(problem); it matches no pattern.",
                host: host)
        }
        guard allHostsMustBeEvaluated else {
            return .defaultValidation(for: name, denyList: denyList, certificateTransparencyLogs: certificateTransparencyLogs)
        }
        let shown = patterns.prefix(20).map(\.description).joined(separator: ", ")
        let more = patterns.count > 20 ? " and \(patterns.count - 20) more" : ""
        throw TrustError(
            .noEvaluatorForHost,
            "No host pattern matches \(host.debugDescription) and allHostsMustBeEvaluated is true; "
                + "configured patterns: \(shown)\(more). Add a pattern that covers this host.",
            host: host)
    }
}
