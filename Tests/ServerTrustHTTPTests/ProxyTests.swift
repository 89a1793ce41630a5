import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// HTTPS through an HTTP CONNECT proxy: trust is evaluated on the origin's chain inside the
/// tunnel, so an intercepting proxy whose CA the client trusts passes default validation and
/// fails pinning — the attack this library exists to stop.
@Suite struct ProxyTests {
    private func proxy(_ fixture: SessionFixture, intercepting identity: LocalTLSServer.Identity? = nil) throws -> LocalConnectProxy {
        let port = fixture.server.port
        return try LocalConnectProxy(.init(interceptingIdentity: identity, route: { _ in "127.0.0.1:\(port)" }))
    }

    @Test func aBlindTunnelCarriesTheOriginsChainAndPinsPass() async throws {
        let fixture = try SessionFixture()
        let tunnel = try proxy(fixture)
        defer { tunnel.stop() }
        let session = try fixture.session([SessionFixture.host: try PinnedKeyHashesTrustEvaluator(pins: [fixture.intermediatePin])]) {
            $0.proxy = .http(URL(string: tunnel.url)!)
            $0.resolve = []
        }
        defer { session.shutdown() }
        let response = try await session.get(fixture.url("/status/200").absoluteString)
        #expect(response.status == 200)
        #expect(response.trust.validatedChain.first?.pin == fixture.leafPin)
        #expect(tunnel.acceptedConnections == 1)
    }

    @Test func anInterceptingProxyWithATrustedCAPassesDefaultValidationButNotPinning() async throws {
        let fixture = try SessionFixture()
        // The attacker's CA is installed on the machine: the client's anchors trust it.
        let proxyCA = try LabPKI.makeRoot(commonName: "Corporate Inspection CA")
        let forged = try proxyCA.issueLeaf(dnsNames: [SessionFixture.host])
        let interceptor = try proxy(fixture, intercepting: .init(chain: forged.chain, privateKeyPEM: forged.key.pemPrivateKey))
        defer { interceptor.stop() }
        let anchors = try TrustAnchors([fixture.root.certificate, proxyCA.certificate])

        let unpinned = try fixture.session([SessionFixture.host: DefaultTrustEvaluator()]) {
            $0.proxy = .http(URL(string: interceptor.url)!)
            $0.anchors = .bundle(anchors)
        }
        defer { unpinned.shutdown() }
        let intercepted = try await unpinned.get(fixture.url("/status/200").absoluteString)
        #expect(intercepted.status == 200)  // default validation alone is fooled
        #expect(intercepted.trust.validatedChain.last?.pin == proxyCA.certificate.spkiPin)

        let pinned = try fixture.session([SessionFixture.host: try PinnedKeyHashesTrustEvaluator(pins: [fixture.intermediatePin])]) {
            $0.proxy = .http(URL(string: interceptor.url)!)
            $0.anchors = .bundle(anchors)
        }
        defer { pinned.shutdown() }
        let error = await outcome { try await pinned.get(fixture.url("/status/200").absoluteString) }.sessionError
        #expect(error?.trustError?.code == .pinMismatch)
        #expect(error?.trustError?.evidence.chain.map(\.pin).contains(proxyCA.certificate.spkiPin) == true)
    }

    /// Second audit, finding 1: with `*.servertrust.test` on default validation and
    /// `**.api.servertrust.test` pinned, the host `api.servertrust.test` used to get the default
    /// policy (single-label wildcards were tried first), so a proxy whose CA the machine trusts
    /// was admitted for a host the configuration pins. The deeper base wins now.
    @Test func finding1TheDeepestPatternPinsTheApexSoAnInterceptingProxyIsRefused() async throws {
        let fixture = try SessionFixture()
        let proxyCA = try LabPKI.makeRoot(commonName: "Corporate Inspection CA")
        let forged = try proxyCA.issueLeaf(dnsNames: [SessionFixture.host])
        let interceptor = try proxy(fixture, intercepting: .init(chain: forged.chain, privateKeyPEM: forged.key.pemPrivateKey))
        defer { interceptor.stop() }
        let machineAnchors = try TrustAnchors([fixture.root.certificate, proxyCA.certificate])
        let session = try fixture.session([
            "*.servertrust.test": DefaultTrustEvaluator(),
            "**.api.servertrust.test": try PinnedKeyHashesTrustEvaluator(pins: [fixture.intermediatePin]),
        ]) {
            $0.proxy = .http(URL(string: interceptor.url)!)
            $0.anchors = .bundle(machineAnchors)
        }
        defer { session.shutdown() }
        let error = await outcome { try await session.get(fixture.url("/status/200").absoluteString) }.sessionError
        #expect(error?.code == .trustEvaluationFailed)
        #expect(error?.trustError?.code == .pinMismatch)
        #expect(error?.trustError?.evaluator == "PinnedKeyHashesTrustEvaluator")

        // The genuine server, through a blind tunnel, passes the same policy and reports its pattern.
        let tunnel = try proxy(fixture)
        defer { tunnel.stop() }
        let genuine = try fixture.session([
            "*.servertrust.test": DefaultTrustEvaluator(),
            "**.api.servertrust.test": try PinnedKeyHashesTrustEvaluator(pins: [fixture.intermediatePin]),
        ]) {
            $0.proxy = .http(URL(string: tunnel.url)!)
        }
        defer { genuine.shutdown() }
        let response = try await genuine.get(fixture.url("/status/200").absoluteString)
        #expect(response.status == 200)
        #expect(response.trust.matchedPattern?.description == "**.api.servertrust.test")
        #expect(response.trust.evaluator == "PinnedKeyHashesTrustEvaluator")
    }

    @Test func theConnectRequestAndTheTunnelledRequestEachCarryTheUserAgentOnce() async throws {
        // The session sends its user agent as a request header line, which a proxy's CONNECT
        // does not carry (CURLHEADER_SEPARATE); CURLOPT_USERAGENT is set for the CONNECT.
        let fixture = try SessionFixture()
        let tunnel = try proxy(fixture)
        defer { tunnel.stop() }
        let session = try fixture.session {
            $0.proxy = .http(URL(string: tunnel.url)!)
            $0.userAgent = "Agent/7"
            $0.httpVersion = .http1_1
        }
        defer { session.shutdown() }
        let response = try await session.get(fixture.url("/echo").absoluteString)
        #expect(tunnel.connectUserAgents == ["Agent/7"])
        let summary = try #require(response.header("X-Echo-Request"))
        #expect(summary.components(separatedBy: "[\"User-Agent\",\"Agent/7\"]").count == 2, "\(summary)")
    }

    @Test func theEnvironmentProxyIsUsedOnlyWhenAskedAndHonoursNoProxy() async throws {
        let fixture = try SessionFixture()
        let tunnel = try proxy(fixture)
        defer { tunnel.stop() }
        let environment = ["https_proxy": tunnel.url]

        let viaProxy = try fixture.session { $0.proxy = .fromEnvironment(environment) }
        defer { viaProxy.shutdown() }
        _ = try await viaProxy.get(fixture.url("/status/200").absoluteString)
        #expect(tunnel.requestedAuthorities == ["\(SessionFixture.host):\(fixture.server.port)"])

        let bypassing = try fixture.session { $0.proxy = .fromEnvironment(environment.merging(["no_proxy": SessionFixture.host]) { $1 }) }
        defer { bypassing.shutdown() }
        _ = try await bypassing.get(fixture.url("/status/200").absoluteString)
        #expect(tunnel.acceptedConnections == 1)

        let unset = Session.Proxy.fromEnvironment([:])
        #expect(unset.url == nil)
    }

    /// Refused when the session is made, before any request: with an `https://` proxy curl
    /// would speak TLS to the proxy itself, outside the trust policies.
    @Test func anHTTPSProxyURLIsRefusedWhenTheSessionIsMade() throws {
        let fixture = try SessionFixture()
        let error = #expect(throws: SessionError.self) {
            try fixture.session { $0.proxy = .http(URL(string: "https://127.0.0.1:1")!) }
        }
        #expect(error?.code == .invalidRequest)
        #expect(error?.reason == "Proxy https://127.0.0.1:1 is not an http:// proxy; HTTPS requests reach the origin through its CONNECT tunnel.")
        #expect(throws: Never.self) { try fixture.session { $0.proxy = .http(URL(string: "http://127.0.0.1:1")!) }.shutdown() }
    }
}
