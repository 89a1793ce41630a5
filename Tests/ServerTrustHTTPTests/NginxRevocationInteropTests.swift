import Foundation
import Testing
import ServerTrustTestSupport
import ServerTrust
@testable import ServerTrustHTTP

/// Revocation against peers that are not ours: nginx stapling a response made by `openssl ocsp`,
/// and a live `openssl ocsp -port` responder named in the AIA of the leaves of two more nginx
/// servers (one good, one revoked for key compromise). Both sides of every exchange — request
/// encoding, nonce, signature, CertID — are checked against OpenSSL's own responder.
@Suite struct NginxRevocationInteropTests {
    private func session(_ nginx: NginxInterop.Environment, _ options: RevocationOptions, cache: RevocationCache) throws -> Session {
        var configuration = Session.Configuration()
        configuration.anchors = .bundle(try TrustAnchors(contentsOfFile: nginx.root))
        configuration.resolve = nginx.resolve
        let evaluator = try CompositeTrustEvaluator([
            try PinnedKeyHashesTrustEvaluator([nginx.intermediatePin]),
            RevocationTrustEvaluator(options: options, cache: cache),
        ])
        return try Session(configuration: configuration, trustManager: try ServerTrustManager(evaluators: [try HostPattern(nginx.host): evaluator]))
    }

    @Test(arguments: ["TLS13_ECDSA_H2_STAPLED", "TLS12_ECDSA_H1_STAPLED"])
    func anNginxStapleSatisfiesStapleRequired(port: String) async throws {
        let nginx = try NginxInterop.environment()
        let session = try session(nginx, .stapleRequired, cache: RevocationCache())
        defer { session.shutdown() }
        let response = try await session.get(nginx.url(port))
        #expect(response.status == 200)
        let result = try #require(response.trust.revocation.first)
        #expect(result.status == .good)
        #expect(result.source == .stapledOCSP)
        #expect(result.depth == 0)
    }

    @Test(arguments: [RevocationOptions.softFail, .hardFail])
    func theLiveResponderSaysGood(options: RevocationOptions) async throws {
        let nginx = try NginxInterop.environment()
        let session = try session(nginx, options, cache: RevocationCache())
        defer { session.shutdown() }
        let response = try await session.get(nginx.url("TLS13_LIVE_OCSP_GOOD"))
        #expect(response.status == 200)
        #expect(response.text == "interop \(nginx.port("TLS13_LIVE_OCSP_GOOD"))\n")
        let result = try #require(response.trust.revocation.first)
        #expect(result.status == .good)
        #expect(result.source == .ocsp(nginx.ocspResponderURL))
        #expect(result.fromCache == false)
    }

    /// With a nonce the query goes by POST, and OpenSSL's responder must echo the nonce: the
    /// verifier checks that it did.
    @Test func aNonceIsSentByPOSTAndEchoedByTheResponder() async throws {
        let nginx = try NginxInterop.environment()
        var options = RevocationOptions.hardFail
        options.ocspNonce = true
        let session = try session(nginx, options, cache: RevocationCache())
        defer { session.shutdown() }
        let response = try await session.get(nginx.url("TLS13_LIVE_OCSP_GOOD"))
        let result = try #require(response.trust.revocation.first)
        #expect(result.status == .good)
        #expect(result.source == .ocsp(nginx.ocspResponderURL))
    }

    @Test func aLiveGoodAnswerIsCachedForTheNextHandshake() async throws {
        let nginx = try NginxInterop.environment()
        let cache = RevocationCache()
        let first = try session(nginx, .hardFail, cache: cache)
        defer { first.shutdown() }
        #expect(try await first.get(nginx.url("TLS13_LIVE_OCSP_GOOD")).trust.revocation.first?.fromCache == false)
        // Another session: a new connection and a full handshake, whose evaluation finds the
        // answer the first one fetched.
        let second = try session(nginx, .hardFail, cache: cache)
        defer { second.shutdown() }
        let response = try await second.get(nginx.url("TLS13_LIVE_OCSP_GOOD"))
        let result = try #require(response.trust.revocation.first)
        #expect(result.status == .good)
        #expect(result.fromCache == true)
    }

    /// A definite "revoked" rejects in every mode, soft-fail included, with the reason the
    /// responder's index gives.
    @Test(arguments: [RevocationOptions.softFail, .hardFail])
    func theLiveResponderSaysRevoked(options: RevocationOptions) async throws {
        let nginx = try NginxInterop.environment()
        let session = try session(nginx, options, cache: RevocationCache())
        defer { session.shutdown() }
        let error = await outcome { try await session.get(nginx.url("TLS12_LIVE_OCSP_REVOKED")) }.sessionError
        let trustError = try #require(error?.trustError)
        #expect(trustError.code == .revoked)
        #expect(trustError.evaluator == "RevocationTrustEvaluator")
        let result = try #require(trustError.evidence.revocation.first)
        #expect(result.source == .ocsp(nginx.ocspResponderURL))
        guard case .revoked(let reason, let date) = result.status else {
            Issue.record("expected revoked, got \(result.status)")
            return
        }
        #expect(reason == .keyCompromise)
        #expect(date < Date())
    }
}
