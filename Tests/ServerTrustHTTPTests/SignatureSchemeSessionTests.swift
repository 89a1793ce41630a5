import Foundation
import MetricsTestKit
import ServerTrust
@testable import ServerTrustHTTP
import ServerTrustTestSupport
import Testing

/// The scheme a host's policy names decides what is asked for and accepted: never "whichever
/// signature is present". A server that signs with one scheme only, against clients of each.
@Suite struct SignatureSchemeSessionTests {
    static let host = SessionFixture.host

    struct Signers {
        let v1 = try! SigningKeys()
        let key = try! SignaturePrivateKey.generate(.ed25519)
        var message: MessageSignatureSigner { try! MessageSignatureSigner(key: key, keyID: "k1") }
        var keys: SigningKeySet { SigningKeySet(keys: ["k1": key.publicKey]) }
        var rfc9421: SignedResponsePolicy { .enforced(keys: keys) }
        var either: SignedResponsePolicy {
            SignedResponsePolicy(migrating: .enforced, roots: v1.roots, messageSignatures: MessageSignaturePolicy(keys: keys))
        }
    }

    /// The server signs v1 only (it ignores Accept-Signature): an RFC 9421 client refuses the
    /// response as unsigned — a v1 signature is not accepted in place of the scheme required —
    /// while a migrating client accepts it, having asked for both.
    @Test func aV1SignatureIsAcceptedOnlyByAPolicyThatNamesV1() async throws {
        let fixture = try SessionFixture()
        let signers = Signers()
        fixture.serveSigned(signers.v1) { _ in SignedReply(body: #"{"ok":true}"#) }
        let strict = try fixture.signingSession([Self.host: signers.rfc9421])
        defer { strict.shutdown() }
        let refused = await outcome { try await strict.get(fixture.url("/v1").absoluteString) }.sessionError
        #expect(refused?.signatureError?.code == .missingSignature)
        #expect(fixture.server.recentRequests.last?.header(SignedResponseHeader.nonce) == nil, "an RFC 9421 client asks for no v1 signature")

        let migrating = try fixture.signingSession([Self.host: signers.either])
        defer { migrating.shutdown() }
        let accepted = try await migrating.get(fixture.url("/v1").absoluteString)
        #expect(accepted.verification == .verified)
        let sent = try #require(fixture.server.recentRequests.last)
        #expect(sent.header(SignedResponseHeader.nonce) != nil && sent.header("Accept-Signature") != nil)
    }

    /// The server signs RFC 9421 only: a v1 client refuses it; under `either`, an RFC 9421
    /// signature that fails is reported with its own reason, not hidden behind v1's
    /// "missing signature".
    @Test func anRFC9421SignatureIsAcceptedOnlyByAPolicyThatNamesItAndItsFailureIsReported() async throws {
        let fixture = try SessionFixture()
        let signers = Signers()
        let signer = signers.message
        let tamper = Locked(false)
        fixture.server.setHandler { request in
            tamper.withLock { $0 }
                ? messageSignedReply(to: request, signer: signer, body: #"{"plan":"pro"}"#, signedBody: #"{"plan":"free"}"#)
                : messageSignedReply(to: request, signer: signer, body: #"{"plan":"free"}"#)
        }
        let v1 = try fixture.signingSession([Self.host: .enforced(roots: signers.v1.roots)])
        defer { v1.shutdown() }
        let refused = await outcome { try await v1.get(fixture.url("/plan").absoluteString) }.sessionError
        #expect(refused?.signatureError?.code == .missingSignature)
        #expect(fixture.server.recentRequests.last?.header("Accept-Signature") == nil, "a v1 client asks for no RFC 9421 signature")

        let migrating = try fixture.signingSession([Self.host: signers.either])
        defer { migrating.shutdown() }
        #expect(try await migrating.get(fixture.url("/plan").absoluteString).verification == .verified)
        tamper.withLock { $0 = true }
        let failed = await outcome { try await migrating.get(fixture.url("/plan").absoluteString) }.sessionError
        #expect(failed?.signatureError?.code == .bodyMismatch)
    }

    /// Every judged response is counted by the scheme that decided it, its result and reason:
    /// `servertrust_signed_responses_total{scheme,result,reason,mode}`.
    @Test func eachCheckedResponseIsCountedByScheme() async throws {
        let fixture = try SessionFixture()
        let signers = Signers()
        let signer = signers.message
        let v1Only = Locked(false)
        let tamper = Locked(false)
        let v1Keys = signers.v1
        fixture.server.setHandler { request in
            if v1Only.withLock({ $0 }) {
                return SignedReply(body: "{}").response(to: request, defaultSigner: v1Keys.signer)
            }
            return tamper.withLock { $0 }
                ? messageSignedReply(to: request, signer: signer, body: "{}", signedBody: "[]")
                : messageSignedReply(to: request, signer: signer, body: "{}")
        }
        let metrics = TestMetrics()
        let session = try fixture.signingSession([Self.host: signers.either]) { $0.metricsFactory = metrics }
        defer { session.shutdown() }
        _ = try await session.get(fixture.url("/a").absoluteString)
        tamper.withLock { $0 = true }
        _ = await outcome { try await session.get(fixture.url("/b").absoluteString) }
        v1Only.withLock { $0 = true }
        _ = try await session.get(fixture.url("/c").absoluteString)
        let name = SessionMetrics.Name.signedResponses
        #expect(try metrics.expectCounter(name, [("scheme", "rfc9421"), ("result", "verified"), ("reason", "none"), ("mode", "enforced")]).totalValue == 1)
        #expect(try metrics.expectCounter(name, [("scheme", "rfc9421"), ("result", "failed"), ("reason", "bodyMismatch"), ("mode", "enforced")]).totalValue == 1)
        #expect(try metrics.expectCounter(name, [("scheme", "v1"), ("result", "verified"), ("reason", "none"), ("mode", "enforced")]).totalValue == 1)
        #expect(metrics.counters(label: name).count == 3)
    }

    /// Content decoding follows the scheme: RFC 9421 covers Content-Encoding, so gzip is asked
    /// for and decoded after verification; under v1 or `either` nothing is asked for.
    @Test func onlyAnRFC9421HostAsksForAContentCoding() async throws {
        let fixture = try SessionFixture()
        let signers = Signers()
        let signer = signers.message
        fixture.server.setHandler { request in messageSignedReply(to: request, signer: signer, body: "{}") }
        for (policy, asked) in [(signers.rfc9421, true), (signers.either, false), (.enforced(roots: signers.v1.roots), false)] {
            let session = try fixture.signingSession([Self.host: policy]) { $0.contentDecoding = [.gzip] }
            defer { session.shutdown() }
            _ = await outcome { try await session.get(fixture.url("/x").absoluteString) }
            let sent = fixture.server.recentRequests.last?.header("Accept-Encoding")
            #expect((sent?.contains("gzip") ?? false) == asked, "\(policy.scheme): Accept-Encoding \(sent ?? "none")")
        }
    }
}
