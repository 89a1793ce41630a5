/// One per-host setting configured by pattern beside a manager's host policies — ServerTrustHTTP's
/// deprecated `Session.Configuration.signedResponses` and `.clientIdentities` and
/// `TrustFailureReporter.Configuration.reportURIsByPattern` — looked up by the registry's rule
/// (``HostPatternTable``) and folded into a host's resolution once, when the host is resolved:
/// a request then reads the setting from its resolved host, never from here.
///
/// Built here, beside the registry, so that no client module builds a table of patterns of
/// its own (`scripts/check-host-tables.sh`). Goes when those dictionaries go. Immutable.
package struct LegacyPatternSettings<Value: Sendable>: Sendable {
    private let table: HostPatternTable<Value>

    /// No setting by pattern.
    package init() { table = HostPatternTable() }

    /// The settings of a deprecated dictionary, validated.
    ///
    /// - Parameters:
    ///   - byPattern: the dictionary, by pattern text.
    ///   - subject: what the patterns configure, for the error (`"Client identity"`).
    /// - Throws: `TrustError` `.invalidHostPattern` naming every invalid pattern and every pair
    ///   of texts that are one pattern after normalisation (which value won would otherwise
    ///   depend on dictionary order).
    package init(_ byPattern: [String: Value], subject: String) throws(TrustError) {
        do {
            table = try HostPatternTable(validating: byPattern.sorted { $0.key < $1.key })
        } catch {
            throw error.trustError(subject: subject)
        }
    }

    /// Whether no pattern is configured.
    package var isEmpty: Bool { table.patterns.isEmpty }

    /// Every pattern with its value, in pattern-text order.
    package var entries: [(pattern: HostPattern, value: Value)] { table.entries.map { (pattern: $0.pattern, value: $0.value) } }

    /// The most specific pattern's value for a host, with the pattern, or nil.
    package func match(_ host: NormalizedHost) -> (pattern: HostPattern, value: Value)? {
        guard !table.patterns.isEmpty, let entry = table.entry(for: host) else { return nil }
        return (pattern: entry.pattern, value: entry.value)
    }

    /// The value filed under exactly `pattern` (in any spelling), or nil.
    package func value(for pattern: HostPattern) -> Value? {
        table.entries.first { $0.pattern == pattern }?.value
    }
}
