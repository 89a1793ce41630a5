import Foundation
@testable import ServerTrust
import Testing

/// RFC 9421's own examples (Appendix B.2, B.3, B.4, sections 2.4 and 4.3) and RFC 9530's digests,
/// through the same signature-base builder and keys the verifier uses
/// (Fixtures/RFC9421Vectors.swift, transcribed from the RFC drafts and checked with Python
/// `cryptography`).
@Suite struct MessageSignatureVectorTests {
    static let supported: Set<String> = ["ed25519", "ecdsa-p256-sha256", "rsa-pss-sha512", "hmac-sha256"]

    static func request(_ message: RFC9421Vectors.Message) -> MessageSignatureRequest {
        let target = message.target ?? "/"
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        return MessageSignatureRequest(
            method: message.method ?? "GET", scheme: "https", host: message.authority ?? "example.com", path: String(parts[0]),
            query: parts.count > 1 ? String(parts[1]) : nil, headers: message.headers.map { (name: $0.name, value: $0.value) })
    }

    /// The base the example's Signature-Input describes, built from its message.
    static func base(_ example: RFC9421Vectors.Example) throws -> [UInt8] {
        let members = try StructuredField.dictionary(example.signatureInputHeader)
        let member = try #require(members.first { $0.key == example.label }?.member)
        guard case .innerList(let items, let parameters) = member else { throw ResponseSignatureError.malformedSignature }
        let builder: SignatureBase
        if example.isResponse {
            let request = example.request.map(Self.request) ?? MessageSignatureRequest(method: "GET", scheme: "https", host: "example.com", path: "/", query: nil)
            builder = SignatureBase(
                request: request,
                response: .init(status: example.message.status ?? 200, headers: example.message.headers.map { (name: $0.name, value: $0.value) }))
        } else {
            builder = SignatureBase(request: Self.request(example.message), response: nil)
        }
        return try builder.base(covered: items, parameters: parameters)
    }

    static func publicKey(_ keyID: String) throws -> SignaturePublicKey {
        switch keyID {
        case RFC9421Vectors.ed25519KeyID: try SignaturePublicKey(pem: RFC9421Vectors.testKeyEd25519PublicPEM)
        case RFC9421Vectors.eccP256KeyID: try SignaturePublicKey(pem: RFC9421Vectors.testKeyECCP256PublicPEM)
        default: try SignaturePublicKey(pem: RFC9421Vectors.testKeyRSAPSSPublicPEM)
        }
    }

    @Test("Every example's signature base is rebuilt byte for byte from its message", arguments: RFC9421Vectors.allExamples)
    func signatureBasesMatch(_ example: RFC9421Vectors.Example) throws {
        let built = String(decoding: try Self.base(example), as: UTF8.self)
        #expect(built == example.signatureBase, "\(example.name)")
    }

    @Test("Every example signed with a supported algorithm verifies, and fails with one byte of its base changed",
        arguments: RFC9421Vectors.allExamples.filter { supported.contains($0.algorithm) })
    func signaturesVerify(_ example: RFC9421Vectors.Example) throws {
        let base = try Self.base(example)
        let signature = try #require(StrictBase64.decode(Array(example.signature.utf8)))
        var altered = base
        altered[0] ^= 0x01
        if example.algorithm == "hmac-sha256" {
            let secret = try #require(StrictBase64.decode(Array(RFC9421Vectors.testSharedSecretBase64.utf8)))
            #expect(MessageSignatureVerifier.hmacSHA256(key: secret, message: base) == signature, "\(example.name)")
            #expect(MessageSignatureVerifier.hmacSHA256(key: secret, message: altered) != signature)
            return
        }
        let key = try Self.publicKey(example.keyID)
        let scheme = MessageSignatureVerifier.algorithm(for: key.kind)
        #expect(scheme.name == example.algorithm)
        #expect(key.isValidSignature(signature, for: base, algorithm: scheme.scheme), "\(example.name)")
        #expect(!key.isValidSignature(signature, for: altered, algorithm: scheme.scheme), "\(example.name)")
    }

    @Test("B.2.6: the Ed25519 signature is reproduced byte for byte by our signing key")
    func ed25519IsReproduced() throws {
        let example = RFC9421Vectors.b26
        let key = try SignaturePrivateKey(pem: RFC9421Vectors.testKeyEd25519PrivatePEM)
        let signature = try key.signature(for: try Self.base(example), algorithm: .ed25519)
        #expect(StrictBase64.encode(signature) == example.signature)
    }

    @Test("RFC 9530's digests are computed and checked; a changed body fails as bodyMismatch", arguments: RFC9421Vectors.digestExamples)
    func contentDigests(_ example: RFC9421Vectors.DigestExample) throws {
        let digest = ContentDigest()
        digest.update(Array(example.content.utf8))
        #expect(try digest.check(example.fieldValue).map(\.rawValue) == [example.algorithm])
        let other = ContentDigest()
        other.update(Array((example.content + " ").utf8))
        #expect(throws: ResponseSignatureError.bodyMismatch) { try other.check(example.fieldValue) }
    }

    @Test("Structured fields: the serialization of a parsed Signature-Input is the text it came from")
    func structuredFieldsRoundTrip() throws {
        for example in RFC9421Vectors.allExamples {
            for (key, member) in try StructuredField.dictionary(example.signatureInputHeader) {
                guard case .innerList(let items, let parameters) = member else { Issue.record("not an inner list"); continue }
                if key == example.label {
                    #expect(StructuredField.serialize(innerList: items, parameters: parameters) == example.signatureParams)
                }
            }
        }
        #expect(throws: StructuredField.ParseError.self) { try StructuredField.dictionary(#"a=1, a=2"#) }
        #expect(throws: StructuredField.ParseError.self) { try StructuredField.dictionary(#"a=("x" "y""#) }
        #expect(throws: StructuredField.ParseError.self) { try StructuredField.dictionary(#"a=:not base64!:"#) }
        #expect(throws: StructuredField.ParseError.self) { try StructuredField.dictionary("a=\"\u{7F}\"") }
        #expect(throws: StructuredField.ParseError.self) { try StructuredField.dictionary(#"a=1,"#) }
        #expect(throws: StructuredField.ParseError.self) { try StructuredField.dictionary(#"a=1234567890123456"#) }
    }
}
