#if URLSessionAdapter
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ServerTrust
import ServerTrustHTTP
import ServerTrustTestSupport
import ServerTrustURLSession
import Testing

/// URLSession's async API and delegate-based data tasks, served through a pinned `Session`
/// against nginx and an impostor from a CA the session trusts.
@Suite struct URLSessionPinningTests {
    @Test func dataFromAGenuineServerReturnsItsBodyAndTrustReport() async throws {
        let fixture = try URLSessionFixture()
        defer { fixture.stop() }
        let (data, response) = try await fixture.urlSession().data(from: fixture.genuineURL)
        #expect(String(decoding: data, as: UTF8.self) == fixture.genuineBody)
        let served = try #require(response as? ServerTrustHTTPURLResponse)
        #expect(served.statusCode == 200)
        #expect(served.url == fixture.genuineURL)
        #expect(served.trust.evaluator == "PinnedKeyHashesTrustEvaluator")
        #expect(served.trust.matchedPattern?.description == fixture.nginx.host)
        #expect(served.trust.validatedChain.map(\.pin.description).contains(fixture.nginx.intermediatePin))
    }

    /// RFC 9421 through URLSession: a signed response arrives with its verification; one whose
    /// body was rewritten after signing fails as a bad server response, the signature error
    /// underneath, and its body is never delivered.
    @Test func anRFC9421SignedResponseIsVerifiedAndATamperedOneFails() async throws {
        let key = try SignaturePrivateKey.generate(.ed25519)
        let signer = try MessageSignatureSigner(key: key, keyID: "urlsession-1")
        let fixture = try URLSessionFixture(
            redirectorHandler: { request in
                request.path == "/tampered"
                    ? messageSignedReply(to: request, signer: signer, body: #"{"plan":"pro"}"#, signedBody: #"{"plan":"free"}"#)
                    : messageSignedReply(to: request, signer: signer, body: #"{"plan":"free"}"#)
            },
            signedResponses: [URLSessionFixture.redirectorHost: .enforced(keys: SigningKeySet(keys: ["urlsession-1": key.publicKey]))])
        defer { fixture.stop() }
        let (data, response) = try await fixture.urlSession().data(from: fixture.redirectorURL("/plan"))
        #expect(String(decoding: data, as: UTF8.self) == #"{"plan":"free"}"#)
        let served = try #require(response as? ServerTrustHTTPURLResponse)
        #expect(served.verification == .verified)
        #expect(served.hopVerifications == [.verified])

        let error = try #require(await urlError { try await fixture.urlSession().data(from: fixture.redirectorURL("/tampered")) })
        #expect(error.code == .badServerResponse)
        #expect(error.sessionError?.code == .responseSignatureInvalid)
        #expect(error.sessionError?.signatureError?.code == .bodyMismatch)
    }

    @Test func anImpostorFromATrustedCAIsRejectedWithTheSessionErrorUnderneath() async throws {
        let fixture = try URLSessionFixture()
        defer { fixture.stop() }
        let error = try #require(await urlError { try await fixture.urlSession().data(from: fixture.impostorURL) })
        #expect(error.code == .serverCertificateUntrusted)
        let sessionError = try #require(error.sessionError)
        #expect(sessionError.code == .trustEvaluationFailed)
        #expect(sessionError.trustError?.code == .pinMismatch)
        #expect(sessionError.trustError?.evaluator == "PinnedKeyHashesTrustEvaluator")
        #expect(sessionError.trustError?.host == fixture.nginx.host)
        #expect(error.rejectedTrust?.presentedChain.first?.subject.contains(fixture.nginx.host) == true)
        #expect(error.failingURL == fixture.impostorURL)
        #expect(fixture.impostor.requestsServed == 0)
    }

    @Test func aDataTaskWithADelegateReceivesTheBodyAndCompletesWithoutError() async throws {
        let fixture = try URLSessionFixture()
        defer { fixture.stop() }
        let delegate = RecordingDelegate()
        fixture.urlSession(delegate: delegate).dataTask(with: fixture.genuineURL).resume()
        await delegate.completion()
        let record = delegate.record.withLock { ($0.response, $0.data, $0.error) }
        #expect(record.2 == nil)
        #expect((record.0 as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: record.1, as: UTF8.self) == fixture.genuineBody)
    }

    @Test func aDataTaskWithADelegateToAnImpostorCompletesWithTheTrustError() async throws {
        let fixture = try URLSessionFixture()
        defer { fixture.stop() }
        let delegate = RecordingDelegate()
        fixture.urlSession(delegate: delegate).dataTask(with: fixture.impostorURL).resume()
        await delegate.completion()
        let (response, data, error) = delegate.record.withLock { ($0.response, $0.data, $0.error) }
        let urlError = try #require(error as? URLError)
        #expect(urlError.code == .serverCertificateUntrusted)
        #expect(urlError.sessionError?.trustError?.code == .pinMismatch)
        #expect(response == nil)
        #expect(data.isEmpty)
        #expect(fixture.impostor.requestsServed == 0)
    }

    /// The session follows redirects, each hop under its own host's policy: a genuine server's
    /// 302 to the impostor fails at the impostor's handshake.
    @Test func aRedirectToAnImpostorIsRejected() async throws {
        let fixture = try URLSessionFixture()
        defer { fixture.stop() }
        let error = try #require(await urlError { try await fixture.urlSession().data(from: fixture.redirect(to: fixture.impostorURL)) })
        #expect(error.code == .serverCertificateUntrusted)
        #expect(error.sessionError?.trustError?.code == .pinMismatch)
        #expect(error.sessionError?.trustError?.host == fixture.nginx.host)
        #expect(error.sessionError?.url == fixture.impostorURL.absoluteString)
        #expect(fixture.redirector.requestsServed == 1)
        #expect(fixture.impostor.requestsServed == 0)
    }

    @Test func aRedirectToAGenuineServerIsFollowedWithEveryHopEvaluated() async throws {
        let fixture = try URLSessionFixture()
        defer { fixture.stop() }
        let (data, response) = try await fixture.urlSession().data(from: fixture.redirect(to: fixture.genuineURL))
        #expect(String(decoding: data, as: UTF8.self) == fixture.genuineBody)
        let served = try #require(response as? ServerTrustHTTPURLResponse)
        #expect(served.url == fixture.genuineURL)
        #expect(served.hops.map(\.host) == [URLSessionFixture.redirectorHost, fixture.nginx.host])
        #expect(served.hops.allSatisfy { $0.evaluator == "PinnedKeyHashesTrustEvaluator" && $0.isTrusted })
    }

    /// Each installed Session gets a protocol class of its own: two URLSessions, one over a
    /// session pinned to nginx's intermediate and one over a session with wrong pins, used
    /// side by side, each follow their own session's policy.
    @Test func configurationsInstalledWithDifferentSessionsStayApart() async throws {
        let fixture = try URLSessionFixture()
        defer { fixture.stop() }
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try TrustAnchors(contentsOfFile: fixture.nginx.root))
        configuration.resolve = fixture.nginx.resolve
        let wronglyPinned = try Session(configuration: configuration, trustManager: try ServerTrustManager(evaluators: [
            try HostPattern(fixture.nginx.host): try PinnedKeyHashesTrustEvaluator([fixture.nginx.rsaLeafPin])
        ]))
        defer { wronglyPinned.shutdown() }
        let wrong = URLSession(configuration: .serverTrust(session: wronglyPinned))
        let right = fixture.urlSession()
        async let wrongOutcome = urlError { try await wrong.data(from: fixture.genuineURL) }
        async let rightOutcome = right.data(from: fixture.genuineURL)
        #expect(await wrongOutcome?.sessionError?.trustError?.code == .pinMismatch)
        #expect(String(decoding: try await rightOutcome.0, as: UTF8.self) == fixture.genuineBody)
    }

    /// FoundationNetworking leaves the configuration's additional headers and cookie storage to
    /// its HTTP protocol: this one sends the headers and stores the final response's cookies,
    /// which URLSession then adds to the next request.
    @Test func configurationHeadersAreSentAndResponseCookiesStored() async throws {
        let fixture = try URLSessionFixture(redirectorHandler: { request in
            request.path == "/login" ? LocalHTTPResponse(status: 200, headers: [("Set-Cookie", "token=abc; Path=/; Secure")], body: .text("ok\n")) : nil
        })
        defer { fixture.stop() }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpAdditionalHeaders = ["X-App": "adapter", "Accept-Language": "fr"]
        ServerTrustURLProtocol.install(in: configuration, session: fixture.session)
        let urlSession = URLSession(configuration: configuration)
        _ = try await urlSession.data(from: fixture.redirectorURL("/login"))
        #expect(configuration.httpCookieStorage?.cookies(for: fixture.redirectorURL("/"))?.map(\.value) == ["abc"])

        var request = URLRequest(url: fixture.redirectorURL("/headers"))
        request.setValue("en", forHTTPHeaderField: "accept-language")
        let (data, _) = try await urlSession.data(for: request)
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines.contains("X-App: adapter"))
        #expect(lines.filter { $0.lowercased().hasPrefix("accept-language:") }.map { $0.lowercased() } == ["accept-language: en"])
        #expect(lines.contains("Cookie: token=abc"))
    }
}
#endif
