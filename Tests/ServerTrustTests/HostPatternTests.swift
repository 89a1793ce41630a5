import ServerTrust
import Testing

@Suite struct HostPatternTests {
    @Test(arguments: [
        ("api.example.com", HostPattern.Kind.exact, "api.example.com", "api.example.com"),
        ("API.Example.COM.", .exact, "api.example.com", "api.example.com"),
        ("*.Example.com", .singleLabelWildcard, "example.com", "*.example.com"),
        ("**.example.com.", .anyDepthWildcard, "example.com", "**.example.com"),
        ("_acme-challenge.example.com", .exact, "_acme-challenge.example.com", "_acme-challenge.example.com"),
        ("xn--bcher-kva.example", .exact, "xn--bcher-kva.example", "xn--bcher-kva.example"),
        ("localhost", .exact, "localhost", "localhost"),
        ("192.0.2.1", .ipAddress, "192.0.2.1", "192.0.2.1"),
        ("[2001:DB8:0:0::1]", .ipAddress, "2001:db8::1", "2001:db8::1"),
        ("2001:db8::0:1", .ipAddress, "2001:db8::1", "2001:db8::1"),
    ])
    func patternsAreParsedAndNormalised(text: String, kind: HostPattern.Kind, suffix: String, description: String) throws {
        let pattern = try HostPattern(text)
        #expect(pattern.kind == kind)
        #expect(pattern.suffix == suffix)
        #expect(pattern.description == description)
    }

    @Test func spellingsOfOnePatternAreEqual() throws {
        #expect(try HostPattern("API.example.com") == HostPattern("api.example.com."))
        #expect(try HostPattern("[::1]") == HostPattern("0:0::1"))
        #expect(try HostPattern("*.example.com") != HostPattern("**.example.com"))
    }

    @Test(arguments: [
        "example.*", "*example.com", "a.*.example.com", "***.x.com", "*", "**", "f*.example.com",
        "*.*.example.com", "example.com*",
    ])
    func wildcardsOtherThanAWholeLeftmostLabelAreRefused(text: String) {
        #expect(throws: TrustError.invalidHostPattern) { try HostPattern(text) }
    }

    @Test(arguments: [
        "", ".", "a..b", ".example.com", "example.com..", "*.a..example.com",
        " api.example.com", "api.example.com ", "api example.com", "api.example.com\n", "api.exa\0mple.com",
        "exa$mple.com", "api.example.com/path", "user@example.com", "example.com:443", "[example.com]",
        "-api.example.com", "api-.example.com",
        String(repeating: "a", count: 64) + ".example.com",
        Array(repeating: String(repeating: "a", count: 63), count: 4).joined(separator: "."),  // 255 characters
        "1.2.3", "256.1.1.1", "127.1", "0x7f.0.0.1", "host.0x10", "[127.0.0.1]", "fe80::1%eth0",
        "*.192.0.2.1", "**.2001:db8::1",
    ])
    func malformedNamesAreRefused(text: String) {
        #expect(throws: TrustError.invalidHostPattern) { try HostPattern(text) }
    }

    @Test func labelsOf63AndNamesOf253CharactersAreAccepted() throws {
        let label = String(repeating: "a", count: 63)
        let name = [label, label, label, String(repeating: "b", count: 61)].joined(separator: ".")
        #expect(name.utf8.count == 253)
        #expect(try HostPattern(name).suffix == name)
    }

    @Test func nonASCIIPatternsAreRefusedWithAdviceToUsePunycode() throws {
        let error = try #require(throws: TrustError.self) { try HostPattern("bücher.example") }
        #expect(error.code == .invalidHostPattern)
        #expect(error.reason.contains("bücher.example"))
        #expect(error.reason.contains("punycode"))
    }

    @Test func reasonNamesThePatternAndTheProblem() throws {
        let error = try #require(throws: TrustError.self) { try HostPattern("a..example.com") }
        #expect(error.reason == "Host pattern \"a..example.com\" has an empty label.")
    }

    @Test(arguments: [
        "com", "co.uk", "*.com", "**.com", "*.co.uk", "**.co.uk", "*.uk", "**.jp",
        "ck", "anything.ck", "*.ck", "**.foo.ck",  // *.ck makes every child of ck a public suffix
        "*.kawasaki.jp", "**.kawasaki.jp", "**.hedmark.no",  // public suffixes lie below these
        "*.corp", "**.localhost",  // every top-level domain counts, listed or not
        "xn--hery-ira.xn--mre-og-romsdal-qqb.no", "**.xn--p1ai",  // rules are compiled in as A-labels
    ])
    func patternsCoveringAPublicSuffixAreRefused(text: String) throws {
        let error = try #require(throws: TrustError.self) { try HostPattern(text) }
        #expect(error.code == .invalidHostPattern)
        #expect(error.reason.contains("public suffix"))
    }

    @Test(arguments: [
        "**.github.io", "*.github.io",  // private section of the list: not a public suffix here
        "www.ck", "**.www.ck",  // the exception !www.ck
        "city.kawasaki.jp", "**.city.kawasaki.jp",  // the exception !city.kawasaki.jp
        "example.co.uk", "*.example.co.uk", "**.example.com", "*.example.corp", "localhost", "intranet",
    ])
    func patternsUnderARegistrableDomainAreAccepted(text: String) throws {
        _ = try HostPattern(text)
    }

    @Test func exactPatternsMatchOnlyTheirHost() throws {
        let pattern = try HostPattern("api.example.com")
        #expect(pattern.matches("api.example.com"))
        #expect(pattern.matches("API.EXAMPLE.COM."))
        #expect(!pattern.matches("x.api.example.com"))
        #expect(!pattern.matches("example.com"))
        #expect(!pattern.matches("api.example.com "))
    }

    @Test func singleLabelWildcardsMatchExactlyOneLabel() throws {
        let pattern = try HostPattern("*.example.com")
        #expect(pattern.matches("api.example.com"))
        #expect(pattern.matches("Api.Example.Com."))
        #expect(!pattern.matches("a.b.example.com"))
        #expect(!pattern.matches("example.com"))
        #expect(!pattern.matches(".example.com"))
        #expect(!pattern.matches("api.example.org"))
        #expect(!pattern.matches("apiexample.com"))
    }

    @Test func anyDepthWildcardsMatchTheApexAndEveryDepth() throws {
        let pattern = try HostPattern("**.example.com")
        #expect(pattern.matches("example.com"))
        #expect(pattern.matches("api.example.com"))
        #expect(pattern.matches("a.b.c.example.com."))
        #expect(!pattern.matches("badexample.com"))
        #expect(!pattern.matches("example.com.evil.net"))
        #expect(!pattern.matches("a..example.com"))
    }

    @Test func addressesMatchOnlyTheSameAddress() throws {
        let v4 = try HostPattern("192.0.2.1")
        #expect(v4.matches("192.0.2.1"))
        #expect(!v4.matches("192.0.2.10"))
        #expect(!v4.matches("192.0.2.1.example.com"))
        let v6 = try HostPattern("2001:db8::1")
        #expect(v6.matches("[2001:DB8::0:1]"))
        #expect(v6.matches("2001:0db8:0000:0000:0000:0000:0000:0001"))
        #expect(!v6.matches("2001:db8::2"))
        #expect(!v6.matches("2001:db8::1\0.example.com"))
    }

    @Test func hostNamesAreNormalisedForComparison() {
        #expect(HostName.normalize("API.Example.COM.") == "api.example.com")
        #expect(HostName.normalize("[2001:DB8:0:0:0:0:0:1]") == "2001:db8::1")
        #expect(HostName.normalize("2001:db8:0:1:0:0:0:1") == "2001:db8:0:1::1")
        #expect(HostName.normalize("::FFFF:192.0.2.1") == "192.0.2.1")  // IPv4-mapped: the IPv4 address (audit finding 7)
        #expect(HostName.normalize("[::ffff:c000:201]") == "192.0.2.1")
        #expect(HostName.normalize("::1") == "::1")
        #expect(HostName.normalize("192.0.2.1") == "192.0.2.1")
        #expect(HostName.normalize(" example.com") == " example.com")
    }

    /// The session's policy registry keys one table by normalised names and by the spellings
    /// that reach them: that is only sound if normalising a normalised name changes nothing.
    @Test func normalisingTwiceIsNormalisingOnce() {
        let tricky = [
            "a.test.", "a.test..", "a.test...", ".", "..", "", "[::1]", "[::1].", "[::1]..", "[[::1]]", "[::FFFF:192.0.2.1].",
            "::1.", "192.0.2.1.", "192.0.2.1..", "[192.0.2.1]", "[]", "[:]", "A.TEST..", " a.test.", "a.test. ",
        ]
        for host in tricky {
            #expect(HostName.normalize(HostName.normalize(host)) == HostName.normalize(host), "\(host.debugDescription)")
            #expect(NormalizedHost(NormalizedHost(host).name) == NormalizedHost(host), "\(host.debugDescription)")
        }
        // Two or more trailing dots are an empty label, kept so the name is refused; one is the root.
        #expect(HostName.normalize("a.test..") == "a.test..")
        #expect(HostName.normalize("[::1].") == "::1")
        // Every short string over the characters that normalisation treats specially.
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("aA.[]:1fF0 ")
        let unstable = (0..<20_000).compactMap { _ -> String? in
            let host = String((0..<Int.random(in: 0...10, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            let once = HostName.normalize(host)
            return HostName.normalize(once) == once ? nil : "\(host.debugDescription) → \(once.debugDescription)"
        }
        #expect(unstable.isEmpty, "\(unstable.prefix(5))")
    }

    @Test func onlyDottedQuadsAndIPv6AreAddresses() {
        #expect(HostName.isIPAddress("192.0.2.1"))
        #expect(HostName.isIPAddress("[::1]"))
        #expect(HostName.isIPAddress("::1"))
        #expect(!HostName.isIPAddress("127.1"))
        #expect(!HostName.isIPAddress("0x7f.0.0.1"))
        #expect(!HostName.isIPAddress("[192.0.2.1]"))
        #expect(!HostName.isIPAddress("::1\0evil"))
        #expect(!HostName.isIPAddress("example.com"))
    }
}
