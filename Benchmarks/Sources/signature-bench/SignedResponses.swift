import Foundation
import ServerTrust

/// One response as it reaches the client, ready to verify: status, fields, body.
struct SignedResponse {
    let status: Int
    let headers: [(name: String, value: String)]
}

/// `count` responses to `count` requests of one client, each signed for its own request's nonce,
/// all over the same body: what a session verifies, one verification per response. A verifier
/// refuses a nonce it accepted before (its replay cache), so each response is verified once.
protocol SignedResponseSet {
    var count: Int { get }
    /// Verifies response `index` with the client's verifier; throws on any failure.
    func verify(_ index: Int) throws
}

/// The request every response answers.
enum BenchRequest {
    static let method = "GET"
    static let host = "api.example.com"
    static let path = "/v1/receipt"
    static let query = "id=7"
    static var url: URL { URL(string: "https://\(host)\(path)?\(query)")! }
    static let contentType = "application/octet-stream"
}

/// The body: `size` bytes of a fixed pattern (digests cost the same whatever the bytes).
func benchBody(size: Int) -> [UInt8] {
    (0..<size).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 11) }
}

/// v1 (`X-ServerTrust-Signature`): a root, an intermediate certified by it, and a client
/// `ResponseSignatureVerifier` trusting the root. Each challenge is the client's
/// (`SignatureChallenge(method:url:)`: 32 random bytes of nonce, the request time now), and the
/// server signs the response to it with `ResponseSigner`.
final class V1Responses: SignedResponseSet {
    let verifier: ResponseSignatureVerifier
    let body: [UInt8]
    private(set) var challenges: [SignatureChallenge] = []
    private(set) var responses: [SignedResponse] = []

    init(count: Int, body: [UInt8]) throws {
        let root = try SigningKey.generate()
        let intermediate = try SigningKey.generate()
        let certificate = try IntermediateKeyCertificate.issue(
            for: intermediate.verificationKey, expires: Date().addingTimeInterval(86_400), signedBy: root)
        let signer = try ResponseSigner(key: intermediate, certificate: certificate)
        verifier = try ResponseSignatureVerifier(roots: [SignedResponseRoot(root.verificationKey)])
        self.body = body
        for _ in 0..<count {
            let challenge = try SignatureChallenge(method: BenchRequest.method, url: BenchRequest.url)
            let field = try signer.signatureHeader(answering: challenge, status: 200, body: body)
            challenges.append(challenge)
            responses.append(SignedResponse(status: 200, headers: [("Content-Type", BenchRequest.contentType), field]))
        }
    }

    var count: Int { responses.count }

    func verify(_ index: Int) throws {
        let response = responses[index]
        try verifier.verify(status: response.status, headers: response.headers, body: body, answering: challenges[index])
    }
}

/// RFC 9421 with RFC 9530 `Content-Digest`: the server's `key` in the client's `SigningKeySet`,
/// the default `MessageSignaturePolicy`. Each challenge is the verifier's
/// (`challenge(for:)`, a random nonce); the server receives the request with its
/// `Accept-Signature` and signs with `MessageSignatureSigner`, covering what it asks for.
final class RFC9421Responses: SignedResponseSet {
    let verifier: MessageSignatureVerifier
    let key: SignaturePrivateKey
    let keyID = "bench-2026"
    let body: [UInt8]
    private(set) var challenges: [MessageSignatureChallenge] = []
    /// The request as the server received it (`Accept-Signature` included), for the export.
    private(set) var requests: [MessageSignatureRequest] = []
    private(set) var responses: [SignedResponse] = []

    init(count: Int, body: [UInt8], key: SignaturePrivateKey) throws {
        self.key = key
        let signer = try MessageSignatureSigner(key: key, keyID: keyID)
        verifier = try MessageSignatureVerifier(policy: MessageSignaturePolicy(keys: SigningKeySet(keys: [keyID: key.publicKey])))
        self.body = body
        // The server's Content-Digest, computed once: the body is the same in every response
        // (the signer would otherwise hash it again for each; preparation is not measured).
        let fields: [(name: String, value: String)] = [
            ("Content-Type", BenchRequest.contentType), ("Content-Digest", ContentDigest.fieldValue(of: body)),
        ]
        let request = MessageSignatureRequest(
            method: BenchRequest.method, scheme: "https", host: BenchRequest.host, path: BenchRequest.path, query: BenchRequest.query,
            headers: [("Accept", "*/*")])
        for _ in 0..<count {
            let challenge = try verifier.challenge(for: request)
            var received = request
            received.headers.append(("Accept-Signature", challenge.acceptSignature))
            let signature = try signer.signatureFields(status: 200, headers: fields, body: body, request: received)
            challenges.append(challenge)
            requests.append(received)
            responses.append(SignedResponse(status: 200, headers: fields + signature))
        }
    }

    var count: Int { responses.count }

    func verify(_ index: Int) throws {
        let response = responses[index]
        try verifier.verify(status: response.status, headers: response.headers, body: body, answering: challenges[index])
    }
}
