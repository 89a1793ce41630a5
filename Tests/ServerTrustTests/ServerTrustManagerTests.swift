import ServerTrust
import Testing

/// An evaluator that accepts everything and says which configuration entry it came from.
private struct Tagged: ServerTrustEvaluating {
    let tag: String
    func evaluate(_: PeerTrust, forHost: String) throws {}
}

private func makeManager(_ tags: [String: String], allHostsMustBeEvaluated: Bool = true) throws -> ServerTrustManager {
    try ServerTrustManager(
        evaluators: Dictionary(uniqueKeysWithValues: try tags.map { (try HostPattern($0.key), Tagged(tag: $0.value)) }),
        allHostsMustBeEvaluated: allHostsMustBeEvaluated)
}

/// The tag of the evaluator `host` resolves to, nil when it resolves to none.
private func resolvedTag(_ manager: ServerTrustManager, _ host: String) throws -> String? {
    try (manager.resolve(host: host).evaluator as? Tagged)?.tag
}

@Suite struct ServerTrustManagerTests {
    let layered: ServerTrustManager

    init() throws {
        layered = try makeManager([
            "api.example.com": "exact",
            "*.example.com": "one label",
            "**.example.com": "any depth",
            "**.eu.example.com": "any depth under eu",
            "*.eu.example.com": "one label under eu",
            "**.a.example.com": "any depth under a",
            "192.0.2.1": "v4",
            "[2001:db8::1]": "v6",
        ])
    }

    @Test(arguments: [
        ("api.example.com", "exact"),
        ("www.example.com", "one label"),
        ("example.com", "any depth"),  // the apex matches **.example.com
        ("a.b.example.com", "any depth"),  // *.example.com covers one label only
        ("x.eu.example.com", "one label under eu"),  // *. beats a longer-or-equal **.
        ("eu.example.com", "any depth under eu"),  // the deeper base wins: eu.example.com over example.com
        ("x.y.eu.example.com", "any depth under eu"),  // the longest ** suffix wins
        ("a.example.com", "any depth under a"),  // the apex of **.a.example.com: the deeper base
        ("x.a.example.com", "any depth under a"),
        ("deep.x.a.example.com", "any depth under a"),
    ])
    func theMostSpecificPatternWins(host: String, expected: String) throws {
        #expect(try resolvedTag(layered, host) == expected)
    }

    /// Second audit, finding 1: ranking `*.` above `**.` whatever their depth gave the host
    /// `api.example.com` the default-validation policy of `*.example.com` while every name under
    /// it was pinned by `**.api.example.com`. The deeper base wins now, for the apex too.
    @Test(arguments: [
        ("api.example.com", "**.api.example.com"),
        ("x.api.example.com", "**.api.example.com"),
        ("x.y.api.example.com", "**.api.example.com"),
        ("www.example.com", "*.example.com"),
    ])
    func finding1MostSpecificPatternWinsByDepthNotByKind(host: String, expected: String) throws {
        let manager = try makeManager(["*.example.com": "default", "**.api.example.com": "pinned"])
        #expect(try manager.resolve(host: host).pattern?.description == expected)
    }

    @Test func finding1OnTheSameBaseTheSingleLabelWildcardWins() throws {
        let manager = try makeManager(["*.example.com": "one", "**.example.com": "any"])
        #expect(try resolvedTag(manager, "a.example.com") == "one")
        #expect(try resolvedTag(manager, "example.com") == "any")
        #expect(try resolvedTag(manager, "b.a.example.com") == "any")
    }

    /// Second audit, finding 7: curl connects to the IPv4 address an IPv4-mapped IPv6 literal
    /// names, so the literal must find that address's policy, not a key of its own.
    @Test(arguments: ["::ffff:192.0.2.1", "[::ffff:192.0.2.1]", "[::FFFF:c000:201]", "0:0:0:0:0:ffff:192.0.2.1"])
    func finding7IPv4MappedAddressesFindTheIPv4Policy(host: String) throws {
        #expect(try resolvedTag(layered, host) == "v4")
        #expect(HostName.normalize(host) == "192.0.2.1")
    }

    @Test func finding7AnIPv4MappedPatternIsTheIPv4Pattern() throws {
        #expect(try HostPattern("::ffff:192.0.2.1").description == "192.0.2.1")
        // One key of the manager's table: a second spelling cannot file a second policy.
        #expect(try HostPattern("192.0.2.1") == HostPattern("[::ffff:192.0.2.1]"))
    }

    @Test func matchReportsThePatternThatMatched() throws {
        let match = try #require(try layered.resolve(host: "x.y.eu.example.com"))
        #expect(match.pattern == (try HostPattern("**.eu.example.com")))
        #expect((match.evaluator as? Tagged)?.tag == "any depth under eu")
        #expect(try layered.resolve(host: "example.com").pattern?.description == "**.example.com")
    }

    @Test(arguments: ["API.EXAMPLE.COM", "api.example.com.", "Api.Example.Com."])
    func hostsAreComparedCaseInsensitivelyWithoutTheTrailingDot(host: String) throws {
        #expect(try resolvedTag(layered, host) == "exact")
    }

    @Test(arguments: [
        ("192.0.2.1", "v4"), ("192.0.2.1.", "v4"), ("2001:db8::1", "v6"), ("[2001:db8::1]", "v6"),
        ("2001:DB8:0:0:0:0:0:1", "v6"), ("[2001:0db8::0001]", "v6"),
    ])
    func addressesMatchExactlyInAnySpelling(host: String, expected: String) throws {
        #expect(try resolvedTag(layered, host) == expected)
    }

    @Test(arguments: ["192.0.2.2", "2001:db8::2", "::ffff:192.0.2.2", "64:ff9b::c000:201"])
    func otherAddressesAreNotMatched(host: String) {
        #expect(throws: TrustError.noEvaluatorForHost) { try layered.resolve(host: host) }
    }

    @Test func wildcardsNeverMatchAddresses() throws {
        // The address's last three labels equal the parent of *.0.2.1 — were it allowed.
        let manager = try makeManager(["**.example.com": "any depth"], allHostsMustBeEvaluated: false)
        #expect(try manager.resolve(host: "192.0.2.1").pattern == nil)
        #expect(try manager.resolve(host: "[::1]").pattern == nil)
        #expect(throws: TrustError.invalidHostPattern) { try ServerTrustManager(evaluators: [try HostPattern("*.0.2.1"): Tagged(tag: "")]) }
    }

    @Test func unmatchedHostsAreRefusedWhenAllHostsMustBeEvaluated() throws {
        #expect(layered.allHostsMustBeEvaluated)
        let error = try #require(throws: TrustError.self) { try layered.resolve(host: "example.org") }
        #expect(error.code == .noEvaluatorForHost)
        #expect(error.host == "example.org")
        #expect(error.reason.contains("\"example.org\""))
        #expect(error.reason.contains(
            "configured patterns: **.a.example.com, **.eu.example.com, **.example.com, *.eu.example.com, "
                + "*.example.com, 192.0.2.1, 2001:db8::1, api.example.com."))
        #expect(throws: TrustError.noEvaluatorForHost) { try layered.resolve(host: "example.org").evaluator }
    }

    @Test func unmatchedHostsAreLeftToTheCallerWhenAllowed() throws {
        let manager = try makeManager(["api.example.com": "exact"], allHostsMustBeEvaluated: false)
        #expect(!manager.allHostsMustBeEvaluated)
        #expect(try manager.resolve(host: "www.example.com").pattern == nil)
        #expect(try manager.resolve(host: "www.example.com").evaluator is DefaultTrustEvaluator)
        #expect(try resolvedTag(manager, "api.example.com") == "exact")
    }

    @Test(arguments: ["", ".", "a..example.com", "api.example.com ", " api.example.com", "api.example.com\0.evil", "api\texample.com", "bücher.example", "127.1"])
    func malformedHostsAreRefusedEvenWhenUnmatchedHostsAreAllowed(host: String) throws {
        let manager = try makeManager(["**.example.com": "any depth"], allHostsMustBeEvaluated: false)
        let error = try #require(throws: TrustError.self) { try manager.resolve(host: host) }
        #expect(error.code == .noEvaluatorForHost)
        #expect(error.reason.contains("malformed"))
    }

    @Test func patternsAreListedNormalisedAndSorted() throws {
        #expect(layered.patterns.map(\.description) == [
            "**.a.example.com", "**.eu.example.com", "**.example.com", "*.eu.example.com", "*.example.com",
            "192.0.2.1", "2001:db8::1", "api.example.com",
        ])
    }

    @Test(arguments: [
        ["API.example.com": "a", "api.example.com.": "b"],
        ["*.Example.com": "a", "*.example.com.": "b"],
        ["[2001:db8::1]": "a", "2001:DB8:0::1": "b"],
    ])
    func patternsThatAreTheSameAfterNormalisationAreOneKey(tags: [String: String]) throws {
        // Keyed by HostPattern, two spellings are one key: which policy wins can never depend
        // on dictionary order (Swift refuses a literal naming one key twice).
        #expect(Set(try tags.keys.map { try HostPattern($0) }).count == 1)
    }

    @Test(arguments: ["**.com", "*.co.uk", "*.com", "com", "*.ck", "foo.ck", "**.kawasaki.jp"])
    func publicSuffixPatternsAreRefusedWhenTheManagerIsCreated(pattern: String) throws {
        let error = try #require(throws: TrustError.self) {
            try makeManager(["api.example.com": "exact", pattern: "bad"])
        }
        #expect(error.code == .invalidHostPattern)
        #expect(error.reason.contains("\"\(pattern)\""))
    }

    @Test func eachInvalidPatternIsRefusedNamingItself() throws {
        for pattern in ["example.*", "**.com", "a..b"] {
            let error = try #require(throws: TrustError.self) { try HostPattern(pattern) }
            #expect(error.code == .invalidHostPattern)
            #expect(error.reason.hasPrefix("Host pattern \(pattern.debugDescription) "), "\(error.reason)")
        }
        #expect(throws: Never.self) { try HostPattern("api.example.com") }
    }

    @Test func aManagerThatWouldRefuseEveryHostIsRefused() throws {
        #expect(throws: TrustError.invalidConfiguration) { try ServerTrustManager(evaluators: [:]) }
        let permissive = try ServerTrustManager(evaluators: [:], allHostsMustBeEvaluated: false)
        #expect(try permissive.resolve(host: "example.com").pattern == nil)
    }

    @Test func lookupsAmongTenThousandPatternsResolveToTheRightEntry() throws {
        var tags: [String: String] = [:]
        for i in 0..<10_000 {
            switch i % 4 {
            case 0: tags["host\(i).example.com"] = "exact \(i)"
            case 1: tags["*.zone\(i).example.net"] = "one label \(i)"
            case 2: tags["**.tree\(i).example.org"] = "any depth \(i)"
            default: tags["10.\(i / 256 % 256).\(i % 256).\(i / 65_536 + 1)"] = "v4 \(i)"
            }
        }
        let manager = try makeManager(tags)
        #expect(manager.patterns.count == 10_000)
        for i in stride(from: 0, to: 10_000, by: 97) {
            switch i % 4 {
            case 0:
                #expect(try resolvedTag(manager, "HOST\(i).example.com.") == "exact \(i)")
                #expect(throws: TrustError.noEvaluatorForHost) { try manager.resolve(host: "x.host\(i).example.com") }
            case 1:
                #expect(try resolvedTag(manager, "www.zone\(i).example.net") == "one label \(i)")
                #expect(throws: TrustError.noEvaluatorForHost) { try manager.resolve(host: "a.b.zone\(i).example.net") }
            case 2:
                #expect(try resolvedTag(manager, "tree\(i).example.org") == "any depth \(i)")
                #expect(try resolvedTag(manager, "a.b.c.tree\(i).example.org") == "any depth \(i)")
            default:
                #expect(try resolvedTag(manager, "10.\(i / 256 % 256).\(i % 256).\(i / 65_536 + 1)") == "v4 \(i)")
            }
        }
        #expect(throws: TrustError.noEvaluatorForHost) { try manager.resolve(host: "host1.example.com") }
        let error = try #require(throws: TrustError.self) { try manager.resolve(host: "unknown.example") }
        #expect(error.reason.contains("and 9980 more"))
    }

    @Test func theManagerCanBeSharedAcrossTasks() async throws {
        let manager = layered
        let tags = try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<8 { group.addTask { try resolvedTag(manager, "x.y.eu.example.com") } }
            return try await group.reduce(into: [String?]()) { $0.append($1) }
        }
        #expect(tags == Array(repeating: "any depth under eu", count: 8))
    }
}
