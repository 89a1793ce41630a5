/// The ICANN section of the Public Suffix List, compiled in, answering the questions
/// ``HostPattern`` asks to refuse patterns that would cover names anyone can register.
///
/// Only the ICANN section is used: the private section lists hosting platforms, and
/// `**.github.io` is a legitimate way to pin every site one owns there. The rules come from
/// `scripts/generate-public-suffix-list.py` (see `Generated/PublicSuffixList+Data.swift`, whose
/// freshness CI checks with `scripts/check-generated.sh`), so nothing reads
/// `/usr/share/publicsuffix` at run time. Every lookup is O(labels) in set probes.
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
    struct Rules: Equatable {
        /// Explicit rules: `com`, `co.uk`.
        var suffixes: Set<String> = []
        /// `ck` for `*.ck`: every child of these is a public suffix.
        var wildcardParents: Set<String> = []
        /// `www.ck` for `!www.ck`: not a public suffix despite a wildcard rule.
        var exceptions: Set<String> = []
        /// Every proper ancestor of a public suffix that a rule names (`uk`, `kawasaki.jp`).
        var parentsOfSuffixes: Set<String> = []

        /// No rules.
        init() {}

        /// Parses rules one per line. Works on the UTF-8 bytes: the list is ASCII (A-labels), and
        /// splitting `String`s by `Character` is far slower, paid by the first host pattern or
        /// wildcard certificate a process checks. `RulesParsingTests` check that both give the
        /// same sets.
        // Fast path: docs/PERFORMANCE.md#fast-paths, "Public Suffix List parsed on bytes".
        init(parsing text: String) {
            let bytes = Array(text.utf8)
            var lineStart = 0
            while lineStart < bytes.count {
                var lineEnd = lineStart
                while lineEnd < bytes.count, bytes[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
                let line = bytes[lineStart..<lineEnd]
                lineStart = lineEnd + 1
                if line.isEmpty { continue }
                if line.first == UInt8(ascii: "!") {
                    exceptions.insert(String(decoding: line.dropFirst(), as: UTF8.self))
                } else if line.starts(with: [UInt8(ascii: "*"), UInt8(ascii: ".")]) {
                    let parent = line.dropFirst(2)
                    wildcardParents.insert(String(decoding: parent, as: UTF8.self))
                    insertAncestors(of: parent, includingItself: true)
                } else {
                    suffixes.insert(String(decoding: line, as: UTF8.self))
                    insertAncestors(of: line, includingItself: false)
                }
            }
        }

        /// Inserts every suffix of `name` that starts at a label: `b.c` and `c` for `a.b.c`, and
        /// `a.b.c` itself when `includingItself`. The generated list has no empty labels.
        private mutating func insertAncestors(of name: ArraySlice<UInt8>, includingItself: Bool) {
            if includingItself { parentsOfSuffixes.insert(String(decoding: name, as: UTF8.self)) }
            for index in name.indices where name[index] == UInt8(ascii: ".") {
                parentsOfSuffixes.insert(String(decoding: name[(index + 1)...], as: UTF8.self))
            }
        }
    }
}
