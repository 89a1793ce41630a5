import Testing
@testable import ServerTrust

/// The compiled-in Public Suffix List: the byte parser gives the same rule sets as the
/// `String`-splitting parser it replaced, and the lookups answer as the list's algorithm says.
@Suite struct PublicSuffixListTests {
    /// The parser as it was before it worked on bytes, kept as the reference.
    private static func referenceRules(parsing text: String) -> PublicSuffixList.Rules {
        var rules = PublicSuffixList.Rules()
        func insertAncestors(of name: some StringProtocol, includingItself: Bool) {
            let labels = name.split(separator: ".")
            for start in labels.indices.dropFirst(includingItself ? 0 : 1) {
                rules.parentsOfSuffixes.insert(labels[start...].joined(separator: "."))
            }
        }
        for line in text.split(separator: "\n") {
            if line.hasPrefix("!") {
                rules.exceptions.insert(String(line.dropFirst()))
            } else if line.hasPrefix("*.") {
                let parent = String(line.dropFirst(2))
                rules.wildcardParents.insert(parent)
                insertAncestors(of: parent, includingItself: true)
            } else {
                rules.suffixes.insert(String(line))
                insertAncestors(of: line, includingItself: false)
            }
        }
        return rules
    }

    @Test func theByteParserGivesTheReferenceSetsForTheCompiledInList() {
        let parsed = PublicSuffixList.Rules(parsing: PublicSuffixList.icannRules)
        let reference = Self.referenceRules(parsing: PublicSuffixList.icannRules)
        #expect(parsed.suffixes == reference.suffixes)
        #expect(parsed.wildcardParents == reference.wildcardParents)
        #expect(parsed.exceptions == reference.exceptions)
        #expect(parsed.parentsOfSuffixes == reference.parentsOfSuffixes)
        // The list is what the generator says it is: 7,380 rules, none lost.
        #expect(parsed.suffixes.count + parsed.wildcardParents.count + parsed.exceptions.count == 7380)
    }

    @Test func theByteParserHandlesEachKindOfRule() {
        let rules = PublicSuffixList.Rules(parsing: "com\nco.uk\n*.ck\n!www.ck\n*.kawasaki.jp\n!city.kawasaki.jp\n\nos.hedmark.no")
        #expect(rules == Self.referenceRules(parsing: "com\nco.uk\n*.ck\n!www.ck\n*.kawasaki.jp\n!city.kawasaki.jp\n\nos.hedmark.no"))
        #expect(rules.suffixes == ["com", "co.uk", "os.hedmark.no"])
        #expect(rules.wildcardParents == ["ck", "kawasaki.jp"])
        #expect(rules.exceptions == ["www.ck", "city.kawasaki.jp"])
        #expect(rules.parentsOfSuffixes == ["uk", "ck", "kawasaki.jp", "jp", "hedmark.no", "no"])
    }

    @Test(arguments: [
        ("com", true), ("co.uk", true), ("uk", true), ("anything.ck", true), ("www.ck", false),
        ("foo.kawasaki.jp", true), ("city.kawasaki.jp", false), ("example.com", false), ("localhost", true),
        ("github.io", false),  // private section: not used
    ])
    func isPublicSuffix(_ name: String, _ expected: Bool) {
        #expect(PublicSuffixList.isPublicSuffix(name) == expected, "\(name)")
    }

    @Test(arguments: [("kawasaki.jp", true), ("hedmark.no", true), ("uk", true), ("example.com", false), ("co.uk", false)])
    func hasPublicSuffixBelow(_ name: String, _ expected: Bool) {
        #expect(PublicSuffixList.hasPublicSuffix(below: name) == expected, "\(name)")
    }

    @Test func unlistedTopLevelDomains() {
        #expect(PublicSuffixList.isUnlistedTopLevelDomain("localhost"))
        #expect(PublicSuffixList.isUnlistedTopLevelDomain("corp"))
        #expect(!PublicSuffixList.isUnlistedTopLevelDomain("com"))
        #expect(!PublicSuffixList.isUnlistedTopLevelDomain("uk"))
        #expect(!PublicSuffixList.isUnlistedTopLevelDomain("example.com"))
    }
}
