import Foundation
import HTTPTypes
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// Redirects are followed by the session, each hop under its own host's policy.
@Suite struct RedirectTests {
    static let otherHost = "b.servertrust.test"

    /// A second server, with a PKI of its own, for `otherHost`.
    private func otherServer(_ fixture: SessionFixture) throws -> (LocalTLSServer, LabCA) {
        let root = try LabPKI.makeRoot(commonName: "Other Root")
        let leaf = try root.issueLeaf(dnsNames: [Self.otherHost])
        return (try LocalTLSServer(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey), root)
    }

    private func session(_ fixture: SessionFixture, other: LocalTLSServer, otherRoot: LabCA, otherEvaluator: any ServerTrustEvaluating) throws -> Session {
        var configuration = try fixture.configuration()
        configuration.resolve.append(other.resolveEntry(host: Self.otherHost))
        configuration.anchors = .bundle(try TrustAnchors([fixture.root.certificate, otherRoot.certificate]))
        let manager = try ServerTrustManager(evaluators: [
            try HostPattern(SessionFixture.host): try PinnedKeyHashesTrustEvaluator(pins: [fixture.intermediatePin]),
            try HostPattern(Self.otherHost): otherEvaluator,
        ])
        return try Session(configuration: configuration, trustManager: manager)
    }

    private func redirect(_ fixture: SessionFixture, to url: String, code: Int = 302) -> URL {
        fixture.url("/redirect/\(code)?to=" + url.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
    }

    @Test func aRedirectToADifferentlyPinnedHostIsEvaluatedUnderThatHostsPolicy() async throws {
        let fixture = try SessionFixture()
        let (other, otherRoot) = try otherServer(fixture)
        let wrong = try session(fixture, other: other, otherRoot: otherRoot, otherEvaluator: try PinnedKeyHashesTrustEvaluator(pins: [SessionFixture.unrelatedPin]))
        defer { wrong.shutdown() }
        let target = other.url("/status/200", host: Self.otherHost)
        let error = await outcome { try await wrong.data(for: Request(url: redirect(fixture, to: target))) }.sessionError
        #expect(error?.code == .trustEvaluationFailed)
        #expect(error?.trustError?.code == .pinMismatch)
        #expect(error?.trustError?.host == Self.otherHost)
        #expect(error?.url == target)
        #expect(other.requestsServed == 0)

        let right = try session(fixture, other: other, otherRoot: otherRoot, otherEvaluator: try PinnedKeyHashesTrustEvaluator(pins: [otherRoot.certificate.spkiPin]))
        defer { right.shutdown() }
        let response = try await right.data(for: Request(url: redirect(fixture, to: target)))
        #expect(response.status == 200)
        #expect(response.hops.map(\.host) == [SessionFixture.host, Self.otherHost])
        #expect(response.hops.map(\.evaluator) == ["PinnedKeyHashesTrustEvaluator", "PinnedKeyHashesTrustEvaluator"])
        #expect(response.trust.validatedChain.last?.pin == otherRoot.certificate.spkiPin)
        #expect(response.url.absoluteString == target)
    }

    @Test func aRedirectToAHostWithoutAPolicyIsRefusedWhenAllHostsMustBeEvaluated() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session([SessionFixture.host: DefaultTrustEvaluator()]) {
            $0.resolve.append(fixture.server.resolveEntry(host: "unlisted.servertrust.test"))
        }
        defer { session.shutdown() }
        let error = await outcome {
            try await session.data(for: Request(url: redirect(fixture, to: fixture.server.url("/", host: "unlisted.servertrust.test"))))
        }.sessionError
        #expect(error?.trustError?.code == .noEvaluatorForHost)
        #expect(fixture.server.requestsServed == 1)
    }

    @Test func credentialsDoNotCrossOriginsButStayOnTheSameOrigin() async throws {
        let fixture = try SessionFixture()
        let (other, otherRoot) = try otherServer(fixture)
        let session = try session(fixture, other: other, otherRoot: otherRoot, otherEvaluator: DefaultTrustEvaluator())
        defer { session.shutdown() }
        let secrets: HTTPFields = [.authorization: "Bearer secret", .cookie: "session=secret", HTTPField.Name("X-Trace")!: "kept"]

        let crossOrigin = try await session.data(for: Request(url: redirect(fixture, to: other.url("/headers", host: Self.otherHost)), headers: secrets))
        #expect(!crossOrigin.text.contains("secret"))
        #expect(crossOrigin.text.contains("X-Trace: kept"))

        let sameOrigin = try await session.data(for: Request(url: redirect(fixture, to: fixture.url("/headers").absoluteString), headers: secrets))
        #expect(sameOrigin.text.contains("Authorization: Bearer secret"))
        #expect(sameOrigin.text.contains("Cookie: session=secret"))
    }

    @Test func aRedirectToPlainHTTPIsRefused() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        let error = await outcome {
            try await session.data(for: Request(url: redirect(fixture, to: "http://\(SessionFixture.host):\(fixture.server.port)/")))
        }.sessionError
        #expect(error?.code == .insecureRedirect)
    }

    @Test func theHopLimitHolds() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session { $0.redirectPolicy = .follow(maximumHops: 2) }
        defer { session.shutdown() }
        var url = fixture.url("/status/200").absoluteString
        for _ in 0..<3 { url = redirect(fixture, to: url).absoluteString }
        let error = await outcome { try await session.get(url) }.sessionError
        #expect(error?.code == .tooManyRedirects)
        #expect(fixture.server.requestsServed == 3)

        let twoHops = try await session.get(redirect(fixture, to: redirect(fixture, to: fixture.url("/status/204").absoluteString).absoluteString).absoluteString)
        #expect(twoHops.status == 204)
        #expect(twoHops.hops.count == 3)
    }

    @Test func seeOtherTurnsAPostIntoAGetWithoutBody() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session()
        defer { session.shutdown() }
        let response = try await session.data(for: Request(method: .post, url: redirect(fixture, to: fixture.url("/echo").absoluteString, code: 303), body: Array("payload".utf8)))
        #expect(response.header("X-Echo-Method") == "GET")
        #expect(response.body.isEmpty)

        let kept = try await session.data(for: Request(method: .post, url: redirect(fixture, to: fixture.url("/echo").absoluteString, code: 307), body: Array("payload".utf8)))
        #expect(kept.header("X-Echo-Method") == "POST")
        #expect(kept.text == "payload")
    }

    @Test func redirectsAreReturnedWhenDisallowed() async throws {
        let fixture = try SessionFixture()
        let session = try fixture.session { $0.redirectPolicy = .disallow }
        defer { session.shutdown() }
        let response = try await session.data(for: Request(url: redirect(fixture, to: "https://example.invalid/")))
        #expect(response.status == 302)
        #expect(response.header("Location") == "https://example.invalid/")
    }
}
