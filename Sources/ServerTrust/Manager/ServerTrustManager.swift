import Foundation

/// Chooses the trust evaluator for each host from patterns configured in code.
///
/// ```swift
/// let manager = try ServerTrustManager(evaluators: [
///     "api.example.com": .pinnedKeyHashes(["sha256/…", "sha256/…backup"]),
///     "**.cdn.example.com": .default(),
/// ])
/// ```
///
/// Every pattern is validated when the manager is created (see ``HostPattern`` for the rules),
/// so a typo fails at start-up instead of leaving a host unpinned. For a host, the most specific
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
    /// The pattern a host matched, with its policy (what the deprecated ``match(forHost:)``
    /// returns; ``resolve(host:)`` gives a ``ResolvedHostPolicy``).
    public struct Match: Sendable {
        public let pattern: HostPattern
        /// Everything configured for the pattern.
        public let policy: HostPolicy
        /// The policy's evaluator.
        public var evaluator: any ServerTrustEvaluating { policy.evaluator }
    }

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

    /// The one table of host policies; every per-host setting of every client path is read
    /// from a resolution in it (``resolve(host:)``) or from a table of the same patterns
    /// derived from it (`HostPatternTable.mapValues`).
    package let table: HostPatternTable<HostPolicy>

    /// Validates the patterns and indexes them for lookup.
    ///
    /// - Parameters:
    ///   - policies: the policy for each host pattern (see ``HostPattern``).
    ///   - allHostsMustBeEvaluated: whether a host no pattern matches is refused; default `true`.
    ///   - denyList: keys and certificates refused for every host, whatever its policy; default none.
    ///   - certificateTransparencyLogs: the CT log list; default none.
    /// - Throws: `TrustError` `.invalidHostPattern` naming every invalid pattern and every pair
    ///   of patterns that are the same after normalisation (`API.example.com`, `api.example.com.`);
    ///   `.invalidConfiguration` when there are no patterns and `allHostsMustBeEvaluated` is `true`,
    ///   since such a manager refuses every host, for a report URI that is not `https:`, for a
    ///   policy requiring post-quantum key exchange on an OpenSSL older than 3.5 (naming it), or
    ///   for a policy requiring Certificate Transparency without `certificateTransparencyLogs`.
    public init(
        policies: [String: HostPolicy], allHostsMustBeEvaluated: Bool = true, denyList: KeyDenyList = KeyDenyList(),
        certificateTransparencyLogs: CertificateTransparencyLogs? = nil
    ) throws {
        if policies.isEmpty, allHostsMustBeEvaluated {
            throw TrustError(
                .invalidConfiguration,
                "No host patterns are configured and allHostsMustBeEvaluated is true, so every host would be "
                    + "refused; add patterns for the hosts to pin.")
        }
        do {
            // Sorted, so the reason lists problems in the same order every run.
            table = try HostPatternTable(validating: policies.sorted { $0.key < $1.key })
        } catch {
            throw error.trustError(subject: nil)
        }
        for entry in table.entries {
            if let problem = entry.value.keyExchange.unavailability {
                throw TrustError(.invalidConfiguration, "Host pattern \(entry.pattern) \(problem).")
            }
            if let requirement = entry.value.certificateTransparency, certificateTransparencyLogs == nil {
                throw TrustError(
                    .invalidConfiguration,
                    "Host pattern \(entry.pattern) requires Certificate Transparency (\(requirement.mode)), and the manager has no CT log "
                        + "list; pass certificateTransparencyLogs (the application's own list, or one delivered by trust updates).")
            }
            for uri in entry.value.reportURIs where uri.scheme?.lowercased() != "https" || (uri.host ?? "").isEmpty {
                throw TrustError(
                    .invalidConfiguration,
                    "The report URI \(URLRedaction.redacted(uri)) of host pattern \(entry.pattern) is not an https: URL with a host.")
            }
        }
        self.allHostsMustBeEvaluated = allHostsMustBeEvaluated
        self.patterns = table.patterns.sorted { $0.description < $1.description }
        self.denyList = denyList
        self.certificateTransparencyLogs = certificateTransparencyLogs
    }

    /// Every pattern with its policy, sorted by pattern: what a trust update starts from.
    public var policies: [(pattern: HostPattern, policy: HostPolicy)] {
        table.entries.map { (pattern: $0.pattern, policy: $0.value) }.sorted { $0.pattern.description < $1.pattern.description }
    }

    /// This manager's policies with another deny-list.
    /// - Parameter denyList: the deny-list of the new manager.
    public func replacing(denyList: KeyDenyList) throws -> ServerTrustManager {
        try ServerTrustManager(
            policies: Dictionary(uniqueKeysWithValues: policies.map { ($0.pattern.description, $0.policy) }),
            allHostsMustBeEvaluated: allHostsMustBeEvaluated, denyList: denyList, certificateTransparencyLogs: certificateTransparencyLogs)
    }

    /// A manager whose policies are evaluators only (every other setting at its default).
    ///
    /// - Parameters:
    ///   - evaluators: the evaluator for each host pattern (see ``HostPattern``).
    ///   - allHostsMustBeEvaluated: whether a host no pattern matches is refused; default `true`.
    ///   - denyList: keys and certificates refused for every host, whatever its policy; default none.
    /// - Throws: as ``init(policies:allHostsMustBeEvaluated:denyList:certificateTransparencyLogs:)``.
    public convenience init(
        evaluators: [String: any ServerTrustEvaluating], allHostsMustBeEvaluated: Bool = true, denyList: KeyDenyList = KeyDenyList()
    ) throws {
        try self.init(
            policies: evaluators.mapValues { HostPolicy(evaluator: $0) }, allHostsMustBeEvaluated: allHostsMustBeEvaluated, denyList: denyList)
    }

    /// The host's policy, resolved once for every client path: the one lookup of a host.
    ///
    /// The most specific pattern's ``HostPolicy`` (the pattern that matched is
    /// ``ResolvedHostPolicy/pattern``), or ``HostPolicy/defaultValidation`` with no pattern when
    /// none matches and ``allHostsMustBeEvaluated`` is `false`. Every per-host setting — the
    /// evaluator, the TLS floor, the client identity, the signed-response policy, the report
    /// URIs, the Certificate Transparency requirement and its log list — is read from this one
    /// resolution, so no two settings of a host can come from different patterns.
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
        let match = try match(for: name, spelled: host)
        return ResolvedHostPolicy(
            host: name, pattern: match?.pattern, policy: match?.policy ?? .defaultValidation, denyList: denyList,
            certificateTransparencyLogs: certificateTransparencyLogs)
    }

    /// The most specific pattern matching `host`, with its policy; nil when nothing matches and
    /// ``allHostsMustBeEvaluated`` is `false`. Errors as ``resolve(host:)``.
    @available(*, deprecated, message: "use resolve(host:): its pattern is nil where this returned nil")
    public func match(forHost host: String) throws -> Match? {
        try match(for: NormalizedHost(host), spelled: host)
    }

    private func match(for name: NormalizedHost, spelled host: String) throws(TrustError) -> Match? {
        if let entry = table.entry(for: name) { return Match(pattern: entry.pattern, policy: entry.value) }
        if !name.isIPAddress, let problem = HostName.dnsNameProblem(name.name) {
            throw TrustError(
                .noEvaluatorForHost, "Host name \(host.debugDescription) is malformed: it \(problem); it matches no pattern.",
                host: host)
        }
        return try unmatched(host)
    }

    /// The evaluator for `host`, or nil for default validation. Errors as ``resolve(host:)``.
    @available(*, deprecated, message: "use resolve(host:).evaluator (DefaultTrustEvaluator where this returned nil)")
    public func serverTrustEvaluator(forHost host: String) throws -> (any ServerTrustEvaluating)? {
        try match(for: NormalizedHost(host), spelled: host)?.evaluator
    }

    /// nil when unmatched hosts are allowed, else the error that names the host and the patterns.
    private func unmatched(_ host: String) throws(TrustError) -> Match? {
        guard allHostsMustBeEvaluated else { return nil }
        let shown = patterns.prefix(20).map(\.description).joined(separator: ", ")
        let more = patterns.count > 20 ? " and \(patterns.count - 20) more" : ""
        throw TrustError(
            .noEvaluatorForHost,
            "No host pattern matches \(host.debugDescription) and allHostsMustBeEvaluated is true; "
                + "configured patterns: \(shown)\(more). Add a pattern that covers this host.",
            host: host)
    }
}
