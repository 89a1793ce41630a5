import Foundation
import Testing
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport

/// The attack signed responses exist for: an intercepting proxy whose CA the client trusts
/// (installed by the user, or by whoever controls the device) passes TLS validation, so only
/// the response signature can tell a forged or rewritten response from the server's.
///
/// The rewriting tests use `LocalConnectProxy` with a `responseBodyRewrite`: it terminates the
/// client's TLS, talks TLS to the genuine signing server, and rewrites the body that server
/// signed. The forgery and replay tests route the intercepted tunnel to an "attacker origin"
/// instead — a second `LocalTLSServer` standing for a proxy that answers on its own.
@Suite struct SignedResponseInterceptionTests {
    static let host = SessionFixture.host

    /// The attacker's CA, trusted by the client; a proxy intercepting with a leaf it issued for
    /// the host, relaying every tunnel to `origin` over TLS of its own — byte for byte, or as
    /// HTTP exchanges whose response bodies go through `rewrite` (signature header untouched).
    private func interceptor(
        relayingTo origin: LocalTLSServer, rewriting rewrite: LocalConnectProxy.BodyRewrite? = nil
    ) throws -> (LocalConnectProxy, LabCA) {
        let proxyCA = try LabPKI.makeRoot(commonName: "Corporate Inspection CA")
        let forged = try proxyCA.issueLeaf(dnsNames: [Self.host])
        let port = origin.port
        let proxy = try LocalConnectProxy(.init(
            interceptingIdentity: .init(chain: forged.chain, privateKeyPEM: forged.key.pemPrivateKey),
            route: { _ in "127.0.0.1:\(port)" }, responseBodyRewrite: rewrite))
        return (proxy, proxyCA)
    }

    private func session(
        _ fixture: SessionFixture, through proxy: LocalConnectProxy, trusting proxyCA: LabCA, policy: SignedResponsePolicy,
        log: VerificationFailureLog = VerificationFailureLog(), evaluators: [String: any ServerTrustEvaluating] = [:]
    ) throws -> Session {
        try fixture.signingSession([Self.host: policy], log: log, evaluators: evaluators) {
            $0.proxy = .http(URL(string: proxy.url)!)
            $0.resolve = []
            $0.anchors = .bundle(try! TrustAnchors([fixture.root.certificate, proxyCA.certificate]))
        }
    }

    /// An attacker origin presenting any certificate (the proxy does not check it).
    private func attackerOrigin(_ handler: @escaping LocalHTTPHandler) throws -> LocalTLSServer {
        let ca = try LabPKI.makeRoot(commonName: "Attacker Origin CA")
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

    // MARK: A proxy rewriting the genuine server's body

    /// What the genuine server answers, and what the rewriting proxy makes of it.
    static let licencePath = "/v1/licence?device=7"
    static let genuineLicence = #"{"licence":"free","seats":1}"#
    static let rewrittenLicence = #"{"licence":"premium","seats":1}"#
    static let rewrite = LocalConnectProxy.BodyRewrite(replacing: #""licence":"free""#, with: #""licence":"premium""#)
    /// The reason `ResponseSignatureVerifier` gives for a body that is not the signed one.
    static let bodyMismatchReason = "is not the one the server signed"

    /// The genuine server: signs `/v1/licence` (which the proxy rewrites) and `/v1/status`
    /// (which it leaves alone), and records every signature header it sent.
    private func serveGenuine(_ fixture: SessionFixture, _ keys: SigningKeys) -> SentSignatures {
        let sent = SentSignatures()
        let signer = keys.signer
        fixture.server.setHandler { request in
            let body = request.path == "/v1/licence" ? Self.genuineLicence : #"{"status":"ok"}"#
            let response = SignedReply(body: body, headers: [("Content-Type", "application/json")]).response(to: request, defaultSigner: signer)
            sent.append(response.header(SignedResponseHeader.signature))
            return response
        }
        return sent
    }

    /// The genuine server behind a proxy whose CA the client trusts and which rewrites the
    /// licence body; stop the proxy when done.
    private func rewritingInterception() throws -> (
        fixture: SessionFixture, keys: SigningKeys, sent: SentSignatures, proxy: LocalConnectProxy, proxyCA: LabCA
    ) {
        let fixture = try SessionFixture()
        let keys = try SigningKeys()
        let sent = serveGenuine(fixture, keys)
        let (proxy, proxyCA) = try interceptor(relayingTo: fixture.server, rewriting: Self.rewrite)
        return (fixture, keys, sent, proxy, proxyCA)
    }

    @Test func aBodyRewrittenByAnInterceptingProxyThrowsWhenEnforced() async throws {
        let (fixture, keys, sent, proxy, proxyCA) = try rewritingInterception()
        defer { proxy.stop() }
        let log = VerificationFailureLog()
        let session = try session(fixture, through: proxy, trusting: proxyCA, policy: .enforced(roots: keys.roots), log: log)
        defer { session.shutdown() }

        let url = fixture.url(Self.licencePath)
        let error = await outcome { try await session.data(for: Request(url: url)) }.sessionError
        // The genuine server answered this request (with its nonce) and signed; the proxy rewrote the body.
        #expect(fixture.server.requestsServed == 1)
        #expect(fixture.server.recentRequests.last?.header(SignedResponseHeader.nonce) != nil)
        #expect(sent.values.count == 1 && sent.values[0] != nil)
        #expect(proxy.interceptedHandshakes == 1)
        #expect(proxy.rewrittenResponses == 1)

        #expect(error?.code == .responseSignatureInvalid)
        #expect(error?.signatureError?.code == .bodyMismatch)
        #expect(error?.signatureError?.status == 200)
        #expect(error?.signatureError?.reason.contains(Self.bodyMismatchReason) == true)
        #expect(error?.reason.contains(Self.bodyMismatchReason) == true)
        #expect(error?.url == url.absoluteString)
        #expect(log.failures.map(\.error.code) == [.bodyMismatch])
        #expect(log.failures.map(\.mode) == [.enforced])
    }

    @Test func aBodyRewrittenByAnInterceptingProxyIsReturnedMarkedFailedWhenInformational() async throws {
        let (fixture, keys, sent, proxy, proxyCA) = try rewritingInterception()
        defer { proxy.stop() }
        let log = VerificationFailureLog()
        let session = try session(fixture, through: proxy, trusting: proxyCA, policy: .informational(roots: keys.roots), log: log)
        defer { session.shutdown() }

        let url = fixture.url(Self.licencePath)
        let response = try await session.data(for: Request(url: url))
        #expect(proxy.rewrittenResponses == 1)
        #expect(response.status == 200)
        #expect(response.text == Self.rewrittenLicence)
        #expect(response.header("Content-Length") == String(Self.rewrittenLicence.utf8.count))
        // The genuine server's signature arrived untouched: only the body betrays the proxy.
        #expect(response.header(SignedResponseHeader.signature) == sent.values.last ?? nil)
        #expect(response.verification == .failed(.bodyMismatch))
        guard case .failed(let failure) = response.verification else { return }
        #expect(failure.reason.contains(Self.bodyMismatchReason))
        #expect(failure.status == 200)
        #expect(log.failures.map(\.error.code) == [.bodyMismatch])
        #expect(log.failures.first?.mode == .informational)
        #expect(log.failures.first?.url == url)
    }

    /// The control: the same proxy, intercepting and re-encrypting on the same connection,
    /// relays a body its rewrite does not match — verified. What fails the rewritten response
    /// is the rewritten body, not TLS interception or the proxy's re-framing.
    @Test func theSameProxyRelayingABodyUnchangedIsVerified() async throws {
        let (fixture, keys, _, proxy, proxyCA) = try rewritingInterception()
        defer { proxy.stop() }
        let log = VerificationFailureLog()
        let session = try session(fixture, through: proxy, trusting: proxyCA, policy: .enforced(roots: keys.roots), log: log)
        defer { session.shutdown() }

        let untouched = try await session.data(for: Request(url: fixture.url("/v1/status")))
        #expect(untouched.verification == .verified)
        #expect(untouched.text == #"{"status":"ok"}"#)
        #expect(untouched.trust.validatedChain.last?.pin == proxyCA.certificate.spkiPin)
        #expect(proxy.relayedResponses == 1)
        #expect(proxy.rewrittenResponses == 0)
        #expect(log.failures.isEmpty)

        let rewritten = await outcome { try await session.data(for: Request(url: fixture.url(Self.licencePath))) }.sessionError
        #expect(rewritten?.signatureError?.code == .bodyMismatch)
        #expect(proxy.relayedResponses == 2)
        #expect(proxy.interceptedHandshakes == 1)  // one intercepted connection carried both
    }

    /// Default trust evaluation accepts the proxy's forged chain (its CA is trusted), so the
    /// signature is the only defence left; a pinned evaluator refuses the proxy at TLS, before
    /// any request leaves the client.
    @Test func defaultTrustAcceptsTheRewritingProxyWhilePinningRejectsItAtTLS() async throws {
        let (fixture, keys, _, proxy, proxyCA) = try rewritingInterception()
        defer { proxy.stop() }

        let unsigned = try session(fixture, through: proxy, trusting: proxyCA, policy: .disabled, evaluators: [Self.host: DefaultTrustEvaluator()])
        defer { unsigned.shutdown() }
        let fooled = try await unsigned.data(for: Request(url: fixture.url(Self.licencePath)))
        #expect(fooled.trust.validatedChain.last?.pin == proxyCA.certificate.spkiPin)
        #expect(fooled.text == Self.rewrittenLicence)
        #expect(fooled.verification == .notRequested)

        let signed = try session(
            fixture, through: proxy, trusting: proxyCA, policy: .enforced(roots: keys.roots), evaluators: [Self.host: DefaultTrustEvaluator()])
        defer { signed.shutdown() }
        let caught = await outcome { try await signed.data(for: Request(url: fixture.url(Self.licencePath))) }.sessionError
        #expect(caught?.trustError == nil)
        #expect(caught?.signatureError?.code == .bodyMismatch)
        #expect(proxy.interceptedHandshakes == 2)

        let served = fixture.server.requestsServed
        let log = VerificationFailureLog()
        let pinned = try session(
            fixture, through: proxy, trusting: proxyCA, policy: .enforced(roots: keys.roots), log: log,
            evaluators: [Self.host: try PinnedKeyHashesTrustEvaluator(pins: [fixture.intermediatePin])])
        defer { pinned.shutdown() }
        let refused = await outcome { try await pinned.data(for: Request(url: fixture.url(Self.licencePath))) }.sessionError
        #expect(refused?.trustError?.code == .pinMismatch)
        #expect(refused?.signatureError == nil)
        // The handshake with the proxy failed, so the proxy never reached the server.
        #expect(fixture.server.requestsServed == served)
        #expect(log.failures.isEmpty)
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

/// The signature header values a server sent, in order (nil for an unsigned response).
final class SentSignatures: Sendable {
    private let entries = Locked<[String?]>([])

    func append(_ value: String?) { entries.withLock { $0.append(value) } }

    var values: [String?] { entries.withLock { $0 } }
}
