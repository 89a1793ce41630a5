/// A validated host pattern: the key under which ``ServerTrustManager`` files an evaluator.
///
/// Four forms, as in OkHttp's `CertificatePinner`:
/// - `api.example.com` matches that host only;
/// - `*.example.com` matches exactly one label under `example.com` (`api.example.com`, not
///   `a.b.example.com`, not `example.com`);
/// - `**.example.com` matches `example.com` itself and any name under it, at any depth;
/// - an IP address (`192.0.2.1`, `2001:db8::1`, `[2001:db8::1]`) matches that address only.
///   Wildcards never match an address.
///
/// Patterns are compared after ``HostName/normalize(_:)``: case-insensitive, one trailing dot
/// ignored, IPv6 in canonical form. They must be ASCII: write internationalised names as
/// A-labels (`xn--bcher-kva.example`). Labels use letters, digits, `-` and `_`: underscores
/// occur in real internal host names and cannot widen what a pattern matches.
///
/// A pattern is refused when it could pin, or silently leave unpinned, more than its author can
/// mean: anything that is not a whole-label wildcard on the left (`example.*`, `*example.com`,
/// `a.*.example.com`, `***.example.com`, a bare `*` or `**`), malformed names, and any pattern
/// that covers a public suffix from the ICANN section of the Public Suffix List: `com`,
/// `*.com`, `**.co.uk`, `*.ck` (by the rule `*.ck`), `**.kawasaki.jp` (its children are public
/// suffixes), and wildcards over any top-level domain, listed or not (`*.corp`). Private-section
/// suffixes are allowed, so `**.github.io` is valid, and so is an exact single-label name the
/// list does not know (`localhost`), which names one machine, not a namespace.
public struct HostPattern: Hashable, Sendable, CustomStringConvertible {
    /// Which names a pattern matches.
    public enum Kind: Hashable, Sendable {
        /// One host name.
        case exact
        /// `*.suffix`: one label, any value, directly under `suffix`.
        case singleLabelWildcard
        /// `**.suffix`: `suffix` itself and every name under it.
        case anyDepthWildcard
        /// One IPv4 or IPv6 address.
        case ipAddress
    }

    public let kind: Kind
    /// The normalised name: the host or address itself for `.exact` and `.ipAddress`, else the
    /// part after `*.` or `**.`.
    public let suffix: String

    /// Parses and validates a pattern.
    ///
    /// - Parameter pattern: `api.example.com`, `*.example.com`, `**.example.com` or an IP address.
    /// - Throws: `TrustError` with code `.invalidHostPattern` and a reason that quotes the
    ///   pattern and says what is wrong with it.
    public init(_ pattern: String) throws {
        let name = HostName.normalize(pattern)
        if let address = HostName.canonicalIPAddress(name) {
            self.kind = .ipAddress
            self.suffix = address
            return
        }
        let (kind, suffix): (Kind, String) =
            if name.hasPrefix("**.") { (.anyDepthWildcard, String(name.dropFirst(3))) }
            else if name.hasPrefix("*.") { (.singleLabelWildcard, String(name.dropFirst(2))) }
            else { (.exact, name) }
        if let problem = Self.problem(kind: kind, suffix: suffix) {
            throw TrustError(.invalidHostPattern, "Host pattern \(pattern.debugDescription) \(problem).")
        }
        self.kind = kind
        self.suffix = suffix
    }

    /// Whether `host` is one of the names this pattern covers. A malformed host matches nothing.
    public func matches(_ host: String) -> Bool {
        let name = HostName.normalize(host)
        switch kind {
        case .exact, .ipAddress:
            // `suffix` was validated, so equality also proves `name` well formed.
            return name == suffix
        case .singleLabelWildcard:
            guard HostName.dnsNameProblem(name) == nil, let dot = name.firstIndex(of: ".") else { return false }
            return name[name.index(after: dot)...] == suffix
        case .anyDepthWildcard:
            guard HostName.dnsNameProblem(name) == nil else { return false }
            return name == suffix || name.hasSuffix("." + suffix)
        }
    }

    public var description: String {
        switch kind {
        case .exact, .ipAddress: suffix
        case .singleLabelWildcard: "*." + suffix
        case .anyDepthWildcard: "**." + suffix
        }
    }

    /// Why `suffix` cannot be used with `kind`, phrased to follow "Host pattern "…" ", or nil.
    private static func problem(kind: Kind, suffix: String) -> String? {
        if let problem = HostName.encodingProblem(suffix) { return problem }
        if kind == .exact, suffix == "*" || suffix == "**" {
            return "matches every host; list the hosts to pin instead"
        }
        if suffix.contains("*") {
            return "uses \"*\" inside a label or to the right; a wildcard must be the whole leftmost label, "
                + "as in \"*.example.com\" (one label) or \"**.example.com\" (any depth)"
        }
        if kind != .exact, HostName.canonicalIPAddress(suffix) != nil {
            return "puts a wildcard on an IP address; wildcards never match addresses, list each address"
        }
        if let problem = HostName.dnsNameProblem(suffix) { return problem }
        if kind == .exact {
            if PublicSuffixList.isPublicSuffix(suffix), !PublicSuffixList.isUnlistedTopLevelDomain(suffix) {
                return "is a public suffix (Public Suffix List, ICANN section), not a host; name a host under it"
            }
        } else if PublicSuffixList.isPublicSuffix(suffix) {
            return "covers every name under \"\(suffix)\", a public suffix (a top-level domain or a "
                + "Public Suffix List entry); put the wildcard under a registrable domain, as in \"*.example.com\""
        } else if PublicSuffixList.hasPublicSuffix(below: suffix) {
            return "covers public suffixes under \"\(suffix)\" (Public Suffix List, ICANN section); "
                + "put the wildcard under a registrable domain"
        }
        return nil
    }
}
