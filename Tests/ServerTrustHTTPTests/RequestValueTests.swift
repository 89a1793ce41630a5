import Foundation
import HTTPTypes
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// `Request` keeps its fields in one shared copy-on-write storage: it must still behave as a
/// value, each copy changed alone, whatever is changed and however (set, or in place).
@Suite struct RequestValueTests {
    private let original = Request(
        method: .get, url: URL(string: "https://a.servertrust.test/one")!, headers: [.accept: "text/plain"], body: [1, 2, 3],
        trustEvaluator: nil, timeout: .seconds(5), contentDecoding: [.gzip], isIdempotent: nil)

    private func expectOriginal(_ request: Request, _ comment: Comment) {
        #expect(request.method == .get, comment)
        #expect(request.url.absoluteString == "https://a.servertrust.test/one", comment)
        #expect(request.headers == [.accept: "text/plain"], comment)
        #expect(request.body == [1, 2, 3], comment)
        #expect(request.trustEvaluator == nil, comment)
        #expect(request.timeout == .seconds(5), comment)
        #expect(request.contentDecoding == [.gzip], comment)
        #expect(request.isIdempotent == nil, comment)
    }

    @Test func changingACopyLeavesTheOriginalAsItWas() {
        let changes: [(String, (inout Request) -> Void)] = [
            ("method", { $0.method = .post }),
            ("url", { $0.url = URL(string: "https://b.servertrust.test/two")! }),
            ("headers set", { $0.headers = [.userAgent: "x"] }),
            ("headers in place", { $0.headers[.accept] = "application/json" }),
            ("header appended", { $0.headers.append(HTTPField(name: .cookie, value: "a=b")) }),
            ("body", { $0.body = [9] }),
            ("uploadBody", { $0.uploadBody = nil }),
            ("trustEvaluator", { $0.trustEvaluator = DisabledTrustEvaluator() }),
            ("timeout", { $0.timeout = nil }),
            ("contentDecoding", { $0.contentDecoding?.append(.deflate) }),
            ("isIdempotent", { $0.isIdempotent = true }),
        ]
        for (name, change) in changes {
            var copy = original
            change(&copy)
            expectOriginal(original, "after changing \(name) of a copy")
        }
    }

    @Test func aCopyChangedThenCopiedAgainKeepsEachVersion() {
        var first = original
        first.headers[.accept] = "application/json"
        var second = first
        second.headers[.accept] = "image/png"
        second.method = .put
        expectOriginal(original, "the original")
        #expect(first.headers[.accept] == "application/json")
        #expect(first.method == .get)
        #expect(second.headers[.accept] == "image/png")
        #expect(second.method == .put)
    }

    @Test func anUnsharedRequestChangesInPlace() {
        var request = original
        request.headers[.accept] = "application/json"  // shared with `original`: copied once
        request.headers[.userAgent] = "agent"
        request.timeout = .seconds(1)
        #expect(request.headers == [.accept: "application/json", .userAgent: "agent"])
        #expect(request.timeout == .seconds(1))
        expectOriginal(original, "the original")
    }

    @Test func aMethodIsSentUpperCasedWhateverTheCaseItWasGivenIn() throws {
        for (given, sent) in [("GET", "GET"), ("get", "GET"), ("Get", "GET"), ("purge", "PURGE"), ("M-SEARCH", "M-SEARCH"), ("m-search", "M-SEARCH"), ("a", "A"), ("z", "Z"), ("X-a", "X-A")] {
            #expect(try #require(HTTPRequest.Method(given)).sentName == sent, "\(given)")
        }
    }

    @Test func theSchemeReadFromTheURLsFirstBytesIsTheSchemeFoundationReads() throws {
        for text in [
            "https://a.servertrust.test/", "HTTPS://a.servertrust.test/", "HtTpS://a.servertrust.test:8443/x?y", "http://a.servertrust.test/",
            "HTTP://a.servertrust.test/", "httpsx://a.servertrust.test/", "https+x://a.servertrust.test/", "ftp://a.servertrust.test/",
            "https:a.servertrust.test", "h://x", "mailto:a@b.test",
        ] {
            let url = try #require(URL(string: text), "\(text)")
            let startsWithHTTPS = RequestURL.startsWithHTTPS(url.absoluteString)
            #expect(RequestURL.lowercasedScheme(of: url, startsWithHTTPS: startsWithHTTPS) == url.scheme?.lowercased(), "\(text)")
        }
        let relative = try #require(URL(string: "/path", relativeTo: URL(string: "HTTPS://base.servertrust.test/")))
        let absolute = relative.absoluteURL
        #expect(RequestURL.lowercasedScheme(of: absolute, startsWithHTTPS: RequestURL.startsWithHTTPS(absolute.absoluteString)) == "https")
    }

    /// The session reads the host of a plain `https://host[:port]` URL from its bytes: whenever
    /// it does, the host is the one Foundation reads, and every other URL is left to Foundation.
    @Test func aHostReadFromTheURLsBytesIsTheHostFoundationReads() throws {
        let fixed = [
            "https://a.servertrust.test/", "https://API.ServerTrust.test:8443/x?y#z", "https://localhost:18740/", "https://127.0.0.1/",
            "https://a.servertrust.test", "https://a.servertrust.test?q", "https://a.servertrust.test#f", "https://a-b.test.:1/",
        ]
        for text in fixed {
            let url = try #require(URL(string: text), "\(text)")
            #expect(RequestURL.plainHTTPSHost(of: url.absoluteString) == url.host, "\(text)")
            #expect(RequestURL.plainHTTPSHost(of: url.absoluteString) != nil, "\(text)")
        }
        // Left to Foundation: user information, percent-encoding, brackets, other bytes, an
        // empty or non-numeric port, no authority, another scheme.
        for text in [
            "https://user@a.servertrust.test/", "https://a%2Eservertrust.test/", "https://[::1]:443/", "https://a_b.test/",
            "https://a.servertrust.test:/", "https://a.servertrust.test:8a/", "https://a.servertrust.test:1:2/", "https:///x",
            "https:a.servertrust.test", "http://a.servertrust.test/", "https://bücher.test/", "https://a.test:443@b.test/",
        ] {
            #expect(RequestURL.plainHTTPSHost(of: text) == nil, "\(text)")
        }
        // Random authorities from pieces that matter to the parse.
        let pieces = ["a", "Z", "0", "9", ".", "-", ":", "443", "@", "%", "%41", "[", "]", "_", "~", "/", "?", "#", "ü", " ", "\\"]
        var generator = SeededGenerator(seed: 0x4057)
        var readFromBytes = 0
        for _ in 0..<20_000 {
            let authority = (0..<Int(generator.next() % 7)).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }.joined()
            let text = "https://" + authority + "/p"
            guard let url = URL(string: text) else {
                continue
            }
            if let host = RequestURL.plainHTTPSHost(of: url.absoluteString) {
                readFromBytes += 1
                #expect(host == url.host, "\(text.debugDescription)")
            }
        }
        #expect(readFromBytes > 1_000)
    }

    /// `Session.get(_ text:)` asks Foundation for no scheme when the text starts `https:`: every
    /// such text Foundation parses has that scheme, and a text that only looks like it (no
    /// colon, an encoded colon, a longer scheme, a leading space) is not taken for it.
    @Test func aStringThatStartsHTTPSColonAndParsesHasTheSchemeHTTPS() throws {
        var parsed = 0
        for text in [
            "https://a.servertrust.test/", "HTTPS://a.servertrust.test/x", "hTtPs:a.servertrust.test", "https:", "https:/", "https:///x",
            "https://a b.servertrust.test/", "https:%zz", "https://[::1]:443/", "https://user@a.servertrust.test:0/?#",
            "https", "https/a", "https%3A//a.servertrust.test/", "httpsx://a/", "https-://a/", " https://a/", "https\u{0}:x",
        ] {
            guard let url = URL(string: text) else { continue }
            parsed += 1
            #expect(RequestURL.startsWithHTTPS(text) == (url.scheme?.lowercased() == "https" && text.lowercased().hasPrefix("https:")), "\(text)")
        }
        #expect(parsed >= 12)
        #expect(!RequestURL.startsWithHTTPS("https"), "no colon")
        #expect(!RequestURL.startsWithHTTPS("https%3A//a/"), "an encoded colon")
        #expect(!RequestURL.startsWithHTTPS("httpsx://a/"))
        #expect(RequestURL.startsWithHTTPS("HTTPS:"))
    }
}
