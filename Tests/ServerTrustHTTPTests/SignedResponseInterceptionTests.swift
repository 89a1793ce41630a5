import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// The attack signed responses exist for: an intercepting proxy whose CA the client trusts
/// (installed by the user, or by whoever controls the device) passes TLS validation, so only
/// the response signature can tell a forged or rewritten response from the server's.
///
/// `LocalConnectProxy` relays plaintext untouched; it cannot rewrite a body. Where a test needs
/// a rewritten body it routes the intercepted tunnel to an "attacker origin" — a second
/// `LocalTLSServer` whose handler produces what a rewriting proxy would — and says so.
@Suite struct SignedResponseInterceptionTests {
    static let host = SessionFixture.host

    /// The attacker's CA, trusted by the client; a proxy intercepting with a leaf it issued,
    /// relaying every tunnel to `origin`.
    private func interceptor(relayingTo origin: LocalTLSServer) throws -> (LocalConnectProxy, TestCA) {
        let proxyCA = try TestPKI.makeRoot(commonName: "Corporate Inspection CA")
        let forged = try proxyCA.issueLeaf(dnsNames: [Self.host])
        let port = origin.port
        let proxy = try LocalConnectProxy(.init(
            interceptingIdentity: .init(chain: forged.chain, privateKeyPEM: forged.key.pemPrivateKey),
            route: { _ in "127.0.0.1:\(port)" }))
        return (proxy, proxyCA)
    }

    private func session(
        _ fixture: SessionFixture, through proxy: LocalConnectProxy, trusting proxyCA: TestCA, policy: SignedResponsePolicy
    ) throws -> Session {
        try fixture.signingSession([Self.host: policy]) {
            $0.proxy = .http(URL(string: proxy.url)!)
            $0.resolve = []
            $0.anchors = .bundle(try! TrustAnchors([fixture.root.certificate, proxyCA.certificate]))
        }
    }

    /// An attacker origin presenting any certificate (the proxy does not check it).
    private func attackerOrigin(_ handler: @escaping LocalHTTPHandler) throws -> LocalTLSServer {
        let ca = try TestPKI.makeRoot(commonName: "Attacker Origin CA")
        let leaf = try ca.issueLeaf(dnsNames: [Self.host])
        return try LocalTLSServer(chain: leaf.chain, privateKeyPEM: leaf.key.pemPrivateKey, handler: handler)
    }

    @Test func anInterceptingProxyThatRelaysUntouchedPassesVerification() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        fixture.serveSigned(keys) { _ in SignedReply(body: "genuine") }
        let (proxy, proxyCA) = try interceptor(relayingTo: fixture.server)
        defer { proxy.stop() }
        let session = try session(fixture, through: proxy, trusting: proxyCA, policy: .enforced(roots: keys.roots))
        defer { session.shutdown() }
        let response = try await session.data(for: Request(url: fixture.url("/v1/licence")))
        // TLS was intercepted (the chain ends at the proxy's CA), yet the body is provably the server's.
        #expect(response.trust.validatedChain.last?.pin == proxyCA.certificate.spkiPin)
        #expect(proxy.interceptedHandshakes == 1)
        #expect(response.verification == .verified)
        #expect(response.text == "genuine")
    }

    @Test func aResponseForgedBehindAnInterceptingProxyIsRejected() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        let attackerKeys = try SigningKeys()
        // A real interception: the proxy terminates TLS with a trusted forged certificate and
        // the answer comes from the attacker, signed with the attacker's own root.
        let attacker = try attackerOrigin { request in
            SignedReply(body: #"{"licence":"pro","expires":"2099-01-01"}"#).response(to: request, defaultSigner: attackerKeys.signer)
        }
        defer { attacker.stop() }
        let (proxy, proxyCA) = try interceptor(relayingTo: attacker)
        defer { proxy.stop() }

        let enforced = try session(fixture, through: proxy, trusting: proxyCA, policy: .enforced(roots: keys.roots))
        defer { enforced.shutdown() }
        let error = await outcome { try await enforced.data(for: Request(url: fixture.url("/v1/licence"))) }.sessionError
        #expect(error?.code == .responseSignatureInvalid)
        #expect(error?.signatureError?.code == .untrustedIntermediate)

        let informational = try session(fixture, through: proxy, trusting: proxyCA, policy: .informational(roots: keys.roots))
        defer { informational.shutdown() }
        let marked = try await informational.data(for: Request(url: fixture.url("/v1/licence")))
        #expect(marked.verification == .failed(.untrustedIntermediate))
        #expect(proxy.interceptedHandshakes == 2)

        let disabled = try session(fixture, through: proxy, trusting: proxyCA, policy: .disabled)
        defer { disabled.shutdown() }
        // Without signatures the forgery is indistinguishable from the server.
        let fooled = try await disabled.data(for: Request(url: fixture.url("/v1/licence")))
        #expect(fooled.verification == .notRequested)
        #expect(fooled.text.contains("2099"))
    }

    /// STAND-IN for a body-rewriting proxy: `LocalConnectProxy` cannot rewrite bodies, so the
    /// intercepted tunnel goes to an attacker origin that answers with the genuine server's
    /// signature header (made with the genuine intermediate, for this request's nonce — what a
    /// proxy forwarding to the real server would receive) and a rewritten body.
    @Test func aBodyRewrittenByAnInterceptingProxyIsDetected() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        let attacker = try attackerOrigin { request in
            var reply = SignedReply(body: #"{"licence":"pro"}"#)
            reply.signedBody = Array(#"{"licence":"free"}"#.utf8)  // what the genuine server signed
            return reply.response(to: request, defaultSigner: keys.signer)
        }
        defer { attacker.stop() }
        let (proxy, proxyCA) = try interceptor(relayingTo: attacker)
        defer { proxy.stop() }
        let log = VerificationFailureLog()
        let session = try fixture.signingSession([Self.host: .enforced(roots: keys.roots)], log: log) {
            $0.proxy = .http(URL(string: proxy.url)!)
            $0.resolve = []
            $0.anchors = .bundle(try! TrustAnchors([fixture.root.certificate, proxyCA.certificate]))
        }
        defer { session.shutdown() }
        let error = await outcome { try await session.data(for: Request(url: fixture.url("/v1/licence"))) }.sessionError
        #expect(proxy.interceptedHandshakes == 1)
        #expect(error?.signatureError?.code == .bodyMismatch)
        #expect(log.failures.count == 1)
    }

    /// A proxy that passes the request to the genuine server but keeps the signed response of an
    /// earlier request, and serves it again (here: the attacker origin replays what it recorded).
    @Test func aProxyReplayingAnEarlierSignedResponseIsDetected() async throws {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        let recorded = RecordedResponse()
        let attacker = try attackerOrigin { request in
            recorded.replayOrRecord { SignedReply(body: #"{"credits":100}"#).response(to: request, defaultSigner: keys.signer) }
        }
        defer { attacker.stop() }
        let (proxy, proxyCA) = try interceptor(relayingTo: attacker)
        defer { proxy.stop() }
        let session = try session(fixture, through: proxy, trusting: proxyCA, policy: .informational(roots: keys.roots))
        defer { session.shutdown() }
        #expect(try await session.data(for: Request(url: fixture.url("/v1/credits"))).verification == .verified)
        #expect(try await session.data(for: Request(url: fixture.url("/v1/credits"))).verification == .failed(.replayedResponse))
    }
}
