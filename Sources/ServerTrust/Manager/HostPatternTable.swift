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

    /// A table filled from configuration: the one loop that turns pattern texts into a table.
    ///
    /// Every text is parsed as a ``HostPattern``; two texts that are one pattern after
    /// normalisation (`API.example.com`, `api.example.com.`) are refused, since which value won
    /// would otherwise depend on dictionary order. Every problem is collected, in the order of
    /// `entries` (callers pass a sorted or file order, so errors read the same every run), and
    /// thrown together.
    ///
    /// - Throws: ``Problems`` listing each invalid text and each second spelling.
    package init(validating entries: [(key: String, value: Value)]) throws(Problems) {
        var problems: [Problem] = []
        var spellings: [HostPattern: String] = [:]
        for (text, value) in entries {
            let pattern: HostPattern
            do {
                pattern = try HostPattern(text)
            } catch let error as TrustError {
                problems.append(Problem(text: text, kind: .invalid(error)))
                continue
            } catch {
                let error = TrustError(.invalidHostPattern, "Host pattern \(text.debugDescription) is invalid: \(error)")
                problems.append(Problem(text: text, kind: .invalid(error)))
                continue
            }
            if let first = spellings[pattern] {
                problems.append(Problem(text: text, kind: .duplicate(of: first, pattern: pattern)))
                continue
            }
            spellings[pattern] = text
            insert(value, for: pattern)
        }
        guard problems.isEmpty else { throw Problems(problems: problems) }
    }

    /// A table of the same patterns, each value transformed: a per-host setting derived from
    /// a table of ``HostPolicy`` values resolves every host to the same pattern as the table.
    package func mapValues<T>(_ transform: (Value) throws -> T) rethrows -> HostPatternTable<T> {
        var table = HostPatternTable<T>()
        for entry in entries { table.insert(try transform(entry.value), for: entry.pattern) }
        return table
    }

    /// Every entry, in insertion order.
    package var entries: [Entry] {
        patterns.compactMap { pattern in
            switch pattern.kind {
            case .exact: exactHosts[pattern.suffix]
            case .ipAddress: addresses[pattern.suffix]
            case .singleLabelWildcard: singleLabelWildcards[pattern.suffix]
            case .anyDepthWildcard: anyDepthWildcards[pattern.suffix]
            }
        }
    }

    /// What ``init(validating:)`` refused.
    package struct Problems: Error {
        package let problems: [Problem]

        /// One `TrustError` `.invalidHostPattern` naming every problem; `subject` names what the
        /// patterns configure (`"Client identity"`), nil for the trust manager's own patterns.
        package func trustError(subject: String?) -> TrustError {
            let sentences = problems.map { $0.sentence(subject: subject) }
            let summary = sentences.count == 1 ? "" : "\(sentences.count) invalid host patterns: "
            return TrustError(.invalidHostPattern, summary + sentences.joined(separator: " "))
        }
    }

    /// One refused pattern text.
    package struct Problem {
        package enum Kind {
            /// Not a valid ``HostPattern``.
            case invalid(TrustError)
            /// The same pattern as an earlier text.
            case duplicate(of: String, pattern: HostPattern)
        }

        package let text: String
        package let kind: Kind

        /// What went wrong, in a sentence: `Client identity pattern "example.*": Host pattern …`.
        package func sentence(subject: String?) -> String {
            let noun = subject.map { "\($0) pattern" } ?? "Host pattern"
            switch kind {
            case .invalid(let error):
                return subject == nil ? error.reason : "\(noun) \(text.debugDescription): \(error.reason)"
            case .duplicate(let first, let pattern):
                return "\(noun)s \(first.debugDescription) and \(text.debugDescription) are both \"\(pattern)\" after normalisation; keep one."
            }
        }
    }

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

extension HostPatternTable where Value == Void {
    /// Validates pattern texts by the registry's rule without keeping a table (the policy
    /// file's check, reported at the file's own key): every text a valid ``HostPattern``, no
    /// two the same pattern after normalisation.
    ///
    /// - Throws: ``Problems`` listing each invalid text and each second spelling, in `texts` order.
    package static func validate(_ texts: some Sequence<String>) throws(Problems) {
        _ = try HostPatternTable(validating: texts.map { (key: $0, value: ()) })
    }
}

extension HostPatternTable: Sendable where Value: Sendable {}
extension HostPatternTable.Entry: Sendable where Value: Sendable {}
