/// The ICANN section of the Public Suffix List, compiled in, answering the questions
/// ``HostPattern`` asks to refuse patterns that would cover names anyone can register.
///
/// Only the ICANN section is used: the private section lists hosting platforms, and
/// `**.github.io` is a legitimate way to pin every site one owns there. The rules come from
/// `scripts/generate-public-suffix-list.py` (see `PublicSuffixList+Data.swift`), so nothing
/// reads `/usr/share/publicsuffix` at run time. Every lookup is O(labels) in set probes.
///
/// Names passed in are normalised: lowercase ASCII, no trailing dot, non-empty labels.
enum PublicSuffixList {
    /// Whether `name` is a public suffix, following the list's algorithm: exception rules
    /// (`!www.ck`) win, then explicit rules (`co.uk`) and wildcard rules (`*.ck`), and every
    /// top-level domain is a public suffix even when unlisted (the list's implicit `*` rule).
    static func isPublicSuffix(_ name: String) -> Bool {
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        let isException = labels.indices.contains { rules.exceptions.contains(labels[$0...].joined(separator: ".")) }
        if isException { return false }
        if labels.count == 1 || rules.suffixes.contains(name) { return true }
        return rules.wildcardParents.contains(labels.dropFirst().joined(separator: "."))
    }

    /// Whether some public suffix lies strictly below `name`: true for `kawasaki.jp`
    /// (`*.kawasaki.jp`), `hedmark.no` (`os.hedmark.no`) and `uk`; false for `example.com`.
    static func hasPublicSuffix(below name: String) -> Bool {
        rules.parentsOfSuffixes.contains(name)
    }

    /// Whether `name` is a single label the list never mentions (`localhost`, `corp`): a public
    /// suffix only by the implicit `*` rule, which a local machine's own name falls under too.
    static func isUnlistedTopLevelDomain(_ name: String) -> Bool {
        !name.contains(".") && !rules.suffixes.contains(name) && !rules.parentsOfSuffixes.contains(name)
    }

    private static let rules = Rules(parsing: icannRules)

    /// The rules indexed for set lookups.
    private struct Rules {
        /// Explicit rules: `com`, `co.uk`.
        var suffixes: Set<String> = []
        /// `ck` for `*.ck`: every child of these is a public suffix.
        var wildcardParents: Set<String> = []
        /// `www.ck` for `!www.ck`: not a public suffix despite a wildcard rule.
        var exceptions: Set<String> = []
        /// Every proper ancestor of a public suffix that a rule names (`uk`, `kawasaki.jp`).
        var parentsOfSuffixes: Set<String> = []

        init(parsing text: String) {
            for line in text.split(separator: "\n") {
                if line.hasPrefix("!") {
                    exceptions.insert(String(line.dropFirst()))
                } else if line.hasPrefix("*.") {
                    let parent = String(line.dropFirst(2))
                    wildcardParents.insert(parent)
                    insertAncestors(of: parent, includingItself: true)
                } else {
                    suffixes.insert(String(line))
                    insertAncestors(of: line, includingItself: false)
                }
            }
        }

        private mutating func insertAncestors(of name: some StringProtocol, includingItself: Bool) {
            let labels = name.split(separator: ".")
            for start in labels.indices.dropFirst(includingItself ? 0 : 1) {
                parentsOfSuffixes.insert(labels[start...].joined(separator: "."))
            }
        }
    }
}
