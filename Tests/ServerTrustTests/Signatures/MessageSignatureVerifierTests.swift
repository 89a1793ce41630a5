import Foundation
@testable import ServerTrust
import Testing

/// `MessageSignatureVerifier` and `MessageSignatureSigner` together, in process: each check of
/// the profile refused with its own code, on responses our signer made and then altered.
@Suite struct MessageSignatureVerifierTests {
    static let created: Int64 = 1_800_000_000
    static let now = Date(timeIntervalSince1970: TimeInterval(created + 2))
    static let request = MessageSignatureRequest(method: "POST", scheme: "https", host: "api.example.com", path: "/v1/receipts", query: "id=7")
    static let body = Array(#"{"valid":true}"#.utf8)
    static let fields: [(name: String, value: String)] = [("Content-Type", "application/json")]

    struct Exchange {
        let verifier: MessageSignatureVerifier
        let challenge: MessageSignatureChallenge
        var headers: [(name: String, value: String)]
    }

    /// A signed exchange: the verifier's challenge, answered by `signer` over `request`'s view
    /// as the server received it (after `alter`).
    static func exchange(
        key: SignaturePrivateKey = try! .generate(.ed25519), policy: ((SigningKeySet) -> MessageSignaturePolicy)? = nil,
        clientRequest: MessageSignatureRequest = request, alterReceived: (inout MessageSignatureRequest) -> Void = { _ in },
        signedAt: Date = Date(timeIntervalSince1970: TimeInterval(created))
    ) throws -> Exchange {
        let keys = SigningKeySet(keys: ["k1": key.publicKey])
        let verifier = try MessageSignatureVerifier(policy: policy?(keys) ?? MessageSignaturePolicy(keys: keys), clock: { now })
        let challenge = try verifier.challenge(for: clientRequest)
        var received = clientRequest
        received.headers.append(("Accept-Signature", challenge.acceptSignature))
        alterReceived(&received)
        let signed = try MessageSignatureSigner(key: key, keyID: "k1").signatureFields(
            status: 200, headers: fields, body: body, request: received, now: signedAt)
        return Exchange(verifier: verifier, challenge: challenge, headers: fields + signed)
    }

    static func verify(_ exchange: Exchange, status: Int = 200, body: [UInt8] = body) throws(ResponseSignatureError) {
        try exchange.verifier.verify(status: status, headers: exchange.headers, body: body, answering: exchange.challenge)
    }

    @Test("Our signer's responses verify with each key type", arguments: [SignaturePublicKey.Kind.ed25519, .ecdsaP256, .rsa])
    func roundTrip(_ kind: SignaturePublicKey.Kind) throws {
        let exchange = try Self.exchange(key: try .generate(kind))
        let verified = try exchange.verifier.verify(status: 200, headers: exchange.headers, body: Self.body, answering: exchange.challenge)
        #expect(verified.algorithm == MessageSignaturePolicy.algorithmName(for: kind))
        #expect(verified.keyID == "k1")
        #expect(verified.coveredComponents.contains(#""@query";req"#))
    }

    @Test func aSecondVerificationOfTheSameResponseIsAReplay() throws {
        let exchange = try Self.exchange()
        try Self.verify(exchange)
        #expect(throws: ResponseSignatureError.replayedResponse) { try Self.verify(exchange) }
    }

    /// The request body is bound by the client's Content-Digest, covered as
    /// "content-digest";req: a response to another body does not verify.
    @Test func aRequestBodyIsBoundThroughItsContentDigest() throws {
        var withBody = Self.request
        withBody.headers = [("Content-Digest", ContentDigest.fieldValue(of: Array("amount=5".utf8)))]
        let genuine = try Self.exchange(clientRequest: withBody)
        #expect(genuine.challenge.acceptSignature.contains(#""content-digest";req"#))
        try Self.verify(genuine)
        let otherBody = try Self.exchange(clientRequest: withBody) { received in
            received.headers[0] = ("Content-Digest", ContentDigest.fieldValue(of: Array("amount=500".utf8)))
        }
        #expect(throws: ResponseSignatureError.badSignature) { try Self.verify(otherBody) }
        // A server that ignores the request's digest (no such field as it received the request).
        let unbound = try Self.exchange(clientRequest: withBody) { received in received.headers.removeFirst() }
        #expect(throws: ResponseSignatureError.missingComponent) { try Self.verify(unbound) }
    }

    @Test func createdAndExpiresAreJudgedByTheInjectedClockWithTheSkewAllowance() throws {
        // 300 s window + 60 s skew: 361 s old is expired, 359 s is fine; 61 s ahead is refused.
        #expect(throws: ResponseSignatureError.expiredSignature) {
            try Self.verify(try Self.exchange(signedAt: Self.now.addingTimeInterval(-361)))
        }
        try Self.verify(try Self.exchange(signedAt: Self.now.addingTimeInterval(-299)))
        #expect(throws: ResponseSignatureError.notYetValidSignature) {
            try Self.verify(try Self.exchange(signedAt: Self.now.addingTimeInterval(61)))
        }
    }

    @Test func hmacIsRefusedUnlessASharedSecretIsConfiguredForItsKeyID() throws {
        let secret = [UInt8](repeating: 0x5A, count: 32)
        var exchange = try Self.exchange()
        // Re-sign the same base with HMAC under keyid "shared".
        let input = try #require(exchange.headers.first { $0.name == "Signature-Input" }?.value)
        let hmacInput = input.replacingOccurrences(of: #"keyid="k1";alg="ed25519""#, with: #"keyid="shared";alg="hmac-sha256""#)
        let members = try StructuredField.dictionary(String(hmacInput))
        guard case .innerList(let items, let parameters) = members[0].member else { Issue.record("not a list"); return }
        var received = Self.request
        received.headers.append(("Accept-Signature", exchange.challenge.acceptSignature))
        let base = try SignatureBase(request: exchange.challenge.request, response: .init(status: 200, headers: Self.fields + [exchange.headers[1]]))
            .base(covered: items, parameters: parameters)
        let mac = MessageSignatureVerifier.hmacSHA256(key: secret, message: base)
        exchange.headers = Self.fields + [exchange.headers[1], ("Signature-Input", hmacInput), ("Signature", "sig=:" + StrictBase64.encode(mac) + ":")]
        #expect(throws: ResponseSignatureError.unknownKey) { try Self.verify(exchange) }

        let keys = SigningKeySet()
        let optedIn = try MessageSignatureVerifier(policy: MessageSignaturePolicy(keys: keys, sharedSecrets: ["shared": secret]), clock: { Self.now })
        #expect(try optedIn.verify(status: 200, headers: exchange.headers, body: Self.body, answering: exchange.challenge).algorithm == "hmac-sha256")
        #expect(throws: ResponseSignatureError.invalidConfiguration) {
            try MessageSignatureVerifier(policy: MessageSignaturePolicy(keys: keys, sharedSecrets: ["shared": [1, 2, 3]]))
        }
    }

    @Test func anUnregisteredAlgorithmAndAPolicyWithoutStatusAreRefused() throws {
        var exchange = try Self.exchange()
        let index = try #require(exchange.headers.firstIndex { $0.name == "Signature-Input" })
        exchange.headers[index].value = exchange.headers[index].value.replacingOccurrences(of: #"alg="ed25519""#, with: #"alg="ed448""#)
        #expect(throws: ResponseSignatureError.unsupportedAlgorithm) { try Self.verify(exchange) }
        #expect(throws: ResponseSignatureError.invalidConfiguration) {
            try MessageSignatureVerifier(policy: MessageSignaturePolicy(keys: SigningKeySet(), requiredComponents: [.requestMethod]))
        }
    }

    /// A signature covering `@target-uri;req` satisfies the authority, path and query
    /// requirements; without it, each one missing is named.
    @Test func targetURIStandsForAuthorityPathAndQuery() throws {
        var policyWithTargetURI: (SigningKeySet) -> MessageSignaturePolicy = { keys in
            MessageSignaturePolicy(keys: keys, requiredComponents: [.status, .requestMethod, .requestTargetURI])
        }
        let client = try Self.exchange(policy: policyWithTargetURI)
        #expect(client.challenge.acceptSignature.contains(#""@target-uri";req"#))
        // The server signs @target-uri; a strict verifier requiring authority/path/query accepts it.
        let keysAndVerifier = try MessageSignatureVerifier(
            policy: MessageSignaturePolicy(keys: client.verifier.policy.keys()), clock: { Self.now })
        let challenge = MessageSignatureChallenge(
            nonce: client.challenge.nonce, request: Self.request, policy: MessageSignaturePolicy(keys: SigningKeySet()), requestTime: Self.created)
        try keysAndVerifier.verify(status: 200, headers: client.headers, body: Self.body, answering: challenge)
        policyWithTargetURI = { keys in MessageSignaturePolicy(keys: keys, requiredComponents: [.status, .requestMethod]) }
        let narrow = try Self.exchange(policy: policyWithTargetURI)
        let strict = try MessageSignatureVerifier(policy: MessageSignaturePolicy(keys: narrow.verifier.policy.keys()), clock: { Self.now })
        let error = #expect(throws: ResponseSignatureError.missingComponent) {
            try strict.verify(
                status: 200, headers: narrow.headers, body: Self.body,
                answering: MessageSignatureChallenge(
                    nonce: narrow.challenge.nonce, request: Self.request, policy: MessageSignaturePolicy(keys: SigningKeySet()), requestTime: Self.created))
        }
        #expect(error?.reason.contains(#""@authority";req"#) == true)
    }
}
