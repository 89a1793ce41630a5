import Foundation
import HTTPTypes
import Testing
@testable import ServerTrustHTTP
import ServerTrust

/// `RedirectRules` on its own: the next hop's request from a response, without a server.
@Suite struct RedirectRulesTests {
    private let rules = RedirectRules(maximumHops: 5, allowsPlainHTTP: false)
    private let origin = URL(string: "https://api.example.com/v1/pay")!

    private func next(
        _ request: Request, status: Int = 302, location: String, hopsSoFar: Int = 1, rules: RedirectRules? = nil
    ) throws(SessionError) -> Request? {
        try (rules ?? self.rules).nextRequest(after: request, status: status, headers: [.location: location], hopsSoFar: hopsSoFar)
    }

    @Test func aResponseThatIsNotARedirectOrHasNoLocationEndsTheHops() throws {
        let request = Request(url: origin)
        #expect(try rules.nextRequest(after: request, status: 200, headers: [.location: "/x"], hopsSoFar: 1) == nil)
        #expect(try rules.nextRequest(after: request, status: 304, headers: [.location: "/x"], hopsSoFar: 1) == nil)
        #expect(try rules.nextRequest(after: request, status: 302, headers: [:], hopsSoFar: 1) == nil)
        #expect(try next(request, location: "/x", rules: RedirectRules(maximumHops: 0, allowsPlainHTTP: false)) == nil)
    }

    @Test func aRelativeLocationResolvesAgainstTheRequestURL() throws {
        let hop = try #require(try next(Request(url: origin), location: "../v2/pay?x=1"))
        #expect(hop.url.absoluteString == "https://api.example.com/v2/pay?x=1")
    }

    @Test func credentialsAreDroppedAcrossOriginsAndKeptWithinOne() throws {
        let headers: HTTPFields = [
            .authorization: "Bearer t", .cookie: "s=1", .proxyAuthorization: "Basic p", HTTPField.Name("X-Trace")!: "k",
        ]
        let request = Request(url: origin, headers: headers)
        let sameOrigin = try #require(try next(request, location: "https://API.example.com.:443/other"))
        #expect(sameOrigin.headers.map(\.name.rawName) == ["Authorization", "Cookie", "Proxy-Authorization", "X-Trace"])
        let otherHost = try #require(try next(request, location: "https://cdn.example.com/file"))
        #expect(otherHost.headers.map(\.name.rawName) == ["X-Trace"])
        let otherPort = try #require(try next(request, location: "https://api.example.com:8443/file"))
        #expect(otherPort.headers.map(\.name.rawName) == ["X-Trace"])
    }

    /// Third review, finding 4: the refused target is named without its credentials or token.
    @Test func finding4ARefusedRedirectNamesItsTargetWithoutUserInfoOrQuery() {
        do {
            _ = try next(Request(url: origin), location: "http://user:pw@api.example.com/next?access_token=SECRET")
            Issue.record("an https → http redirect was followed")
        } catch {
            #expect(error.code == .insecureRedirect)
            #expect(error.description.contains("(http://api.example.com/next)"), "\(error)")
            #expect(!error.description.contains("pw"), "\(error)")
            #expect(!error.description.contains("SECRET"), "\(error)")
        }
    }

    @Test func leavingTLSIsRefusedWithInsecureRedirect() {
        #expect(throws: SessionError.self) { try next(Request(url: origin), location: "http://api.example.com/") }
        do {
            _ = try next(Request(url: origin), location: "http://api.example.com/")
        } catch {
            #expect(error.code == .insecureRedirect)
        }
        // Even a session that allows plain HTTP never downgrades an https request.
        let plainRules = RedirectRules(maximumHops: 5, allowsPlainHTTP: true)
        do {
            _ = try next(Request(url: origin), location: "http://api.example.com/", rules: plainRules)
            Issue.record("an https → http redirect was followed")
        } catch {
            #expect(error.code == .insecureRedirect)
        }
    }

    @Test func tooManyHopsAndAnInvalidLocationAreTheirOwnErrors() {
        do {
            _ = try next(Request(url: origin), location: "/x", hopsSoFar: 6)
            Issue.record("a sixth redirect was followed")
        } catch {
            #expect(error.code == .tooManyRedirects)
        }
        do {
            _ = try next(Request(url: origin), location: "https://")
            Issue.record("a Location without a host was followed")
        } catch {
            #expect(error.code == .invalidRequest)
        }
    }

    @Test func aSeeOtherOrAMovedPOSTBecomesAGETWithoutItsBody() throws {
        let post = Request(
            method: .post, url: origin, headers: [.contentType: "application/json", .contentLength: "2"], body: Array("{}".utf8))
        for status in [301, 302, 303] {
            let hop = try #require(try next(post, status: status, location: "/done"))
            #expect(hop.method == .get)
            #expect(hop.body == nil)
            #expect(hop.headers.isEmpty)
        }
        for status in [307, 308] {
            let hop = try #require(try next(post, status: status, location: "/again"))
            #expect(hop.method == .post)
            #expect(hop.body == Array("{}".utf8))
        }
    }

    @Test func aStreamBodyThatWouldBeResentIsRefused() {
        let stream = AsyncStream<[UInt8]> { $0.finish() }
        let put = Request(method: .put, url: origin, uploadBody: .stream(stream))
        do {
            _ = try next(put, status: 307, location: "/again")
            Issue.record("a stream body was to be resent")
        } catch {
            #expect(error.code == .bodyNotReplayable)
        }
    }

    @Test func aRequestsOwnEvaluatorStaysWithItsHost() throws {
        let request = Request(url: origin, trustEvaluator: DefaultTrustEvaluator())
        #expect(try next(request, location: "https://api.example.com/elsewhere")?.trustEvaluator != nil)
        #expect(try next(request, location: "https://cdn.example.com/")?.trustEvaluator == nil)
    }
}
