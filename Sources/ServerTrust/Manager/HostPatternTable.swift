/// Values filed under ``HostPattern``s, with the one lookup rule every part of ServerTrust uses:
/// the trust manager, a session's signed-response policies, the policy file and the report URIs
/// of a pattern all find "the most specific pattern" here, so they can never disagree.
///
/// **The rule.** For a host, in this order:
/// 1. the exact host or address;
/// 2. else the matching wildcard whose *base* (the part after `*.` or `**.`) has the most labels;
/// 3. between `*.base` and `**.base` on the same base, `*.base`.
///
/// Specificity is the depth of the base, not the kind of wildcard: with `*.example.com` and
/// `**.api.example.com` configured, `api.example.com` and `x.api.example.com` both get
/// `**.api.example.com`. Ranking single-label wildcards above any-depth ones regardless of depth
/// would hand `api.example.com` to `*.example.com` — a weaker policy for a host the configuration
/// pins more strictly, which an intercepting proxy then passes (second audit, finding 1).
///
/// A lookup probes one dictionary per label of the host: its cost depends on the host, never on
/// how many patterns are configured. Immutable after `init`.
package struct HostPatternTable<Value> {
    package struct Entry {
        package let pattern: HostPattern
        package let value: Value
    }

    private var exactHosts: [String: Entry] = [:]
    private var addresses: [String: Entry] = [:]
    /// Keyed by the base: `example.com` for `*.example.com`.
    private var singleLabelWildcards: [String: Entry] = [:]
    /// Keyed by the base: `example.com` for `**.example.com`.
    private var anyDepthWildcards: [String: Entry] = [:]

    /// Every pattern in the table, in insertion order.
    package private(set) var patterns: [HostPattern] = []

    package init() {}

    /// Files `value` under `pattern`, returning the value already filed under it, if any (the
    /// table keeps the first one).
    @discardableResult
    package mutating func insert(_ value: Value, for pattern: HostPattern) -> Value? {
        let entry = Entry(pattern: pattern, value: value)
        func file(_ table: inout [String: Entry]) -> Value? {
            if let existing = table[pattern.suffix] { return existing.value }
            table[pattern.suffix] = entry
            patterns.append(pattern)
            return nil
        }
        switch pattern.kind {
        case .exact: return file(&exactHosts)
        case .ipAddress: return file(&addresses)
        case .singleLabelWildcard: return file(&singleLabelWildcards)
        case .anyDepthWildcard: return file(&anyDepthWildcards)
        }
    }

    /// The most specific entry for a normalised host, or nil. A malformed name matches nothing
    /// but an exact entry spelled the same way, and exact entries are validated names, so it
    /// matches nothing.
    package func entry(for host: NormalizedHost) -> Entry? {
        let name = host.name
        if HostName.canonicalIPAddress(name) != nil { return addresses[name] }
        guard HostName.dnsNameProblem(name) == nil else { return nil }
        if let entry = exactHosts[name] { return entry }
        // Deepest base first: the name itself (only `**.name` covers its own apex), then each
        // parent, where `*.parent` outranks `**.parent` because it names fewer hosts.
        var base = name[...]
        var depth = 0  // labels dropped from the left of the host
        while true {
            if depth == 1, let entry = singleLabelWildcards[String(base)] { return entry }
            if let entry = anyDepthWildcards[String(base)] { return entry }
            guard let dot = base.firstIndex(of: ".") else { return nil }
            base = base[base.index(after: dot)...]
            depth += 1
        }
    }

    /// ``entry(for:)`` for a host in any spelling (`API.example.com.`, `[::1]`).
    package func entry(forHost host: String) -> Entry? {
        entry(for: NormalizedHost(host))
    }
}

extension HostPatternTable: Sendable where Value: Sendable {}
extension HostPatternTable.Entry: Sendable where Value: Sendable {}
