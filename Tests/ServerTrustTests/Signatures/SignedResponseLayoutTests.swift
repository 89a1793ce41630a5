import Foundation
@testable import ServerTrust
import Testing

/// Known-answer tests that pin the v1 byte layout (document revision 2: the port is in the
/// request digest): the same vector is in
/// docs/SIGNED_RESPONSES_V1.md (appendix A), and was checked there with an independent
/// implementation (Python `cryptography`). Ed25519 is deterministic, so fixed keys, salt and
/// nonce give one exact header.
@Suite struct SignedResponseLayoutTests {
    static let rootSeed = [UInt8](repeating: 0x01, count: 32)
    static let intermediateSeed = [UInt8](repeating: 0x02, count: 32)
    static let nonce = [UInt8](0..<32)
    static let salt = [UInt8](repeating: 0xA5, count: 16)
    static let requestTime: Int64 = 1_700_000_000
    static let expires = Date(timeIntervalSince1970: 1_800_000_000)
    static let body = Array(#"{"ok":true}"#.utf8)

    static func vector() throws -> (certificate: IntermediateKeyCertificate, challenge: SignatureChallenge, header: String) {
        let root = try SigningKey(rawRepresentation: rootSeed)
        let intermediate = try SigningKey(rawRepresentation: intermediateSeed)
        let certificate = try IntermediateKeyCertificate.issue(for: intermediate.verificationKey, expires: expires, signedBy: root)
        let signer = try ResponseSigner(key: intermediate, certificate: certificate)
        let challenge = try SignatureChallenge(
            method: "GET", host: "api.example.com", port: 443, path: "/v1/status", query: "verbose=1", requestBody: [], nonce: nonce,
            requestTime: requestTime)
        let header = try signer.signatureHeader(
            answering: challenge, status: 200, etag: "\"abc\"", location: nil, body: body,
            now: Date(timeIntervalSince1970: TimeInterval(requestTime)), salt: salt)
        return (certificate, challenge, header.value)
    }

    @Test func theRootPublicKeyAndIntermediateCertificateMatchTheVector() throws {
        let (certificate, _, _) = try Self.vector()
        #expect(try SigningKey(rawRepresentation: Self.rootSeed).verificationKey.base64 == "iojj3XQJ8ZX9UtstPLpdcspnCb8dlBIb83SIAbQPb1w=")
        #expect(certificate.base64 == "ATR1D5i9Wfz8gTl3Dqh9F19Wo1Rmw0x+zMuNipG07jeiXfYPW4/Js5QAAAAAa0nSAF946L4QFrXv+xTm9kqegoQauaAR62wpMkror9pphh40LqPUUpzE/deXRmgbuxdGxg4y6M3UP2t+A40KL4DQGwM=")
    }

    @Test func theRequestDigestMatchesTheVector() throws {
        let (_, challenge, _) = try Self.vector()
        #expect(hex(challenge.requestDigest) == "b62ac283fad789c3262f4fc3a5711ed39457f426444baa5d27b7529c89eec581")
    }

    @Test func theSignedMessageMatchesTheVector() throws {
        let (_, challenge, _) = try Self.vector()
        let message = SignatureHeader.message(
            version: 1, salt: Self.salt, nonce: Self.nonce, requestTime: Self.requestTime, requestDigest: challenge.requestDigest,
            status: 200, etag: "\"abc\"", location: "", bodyDigest: sha256(Self.body))
        let expected = [
            "53657276657254727573742d526573706f6e73652d5369676e61747572652d763100",  // "ServerTrust-Response-Signature-v1" NUL
            "00000010" + "a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5",  // salt
            "00000020" + "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",  // nonce
            "00000008" + "000000006553f100",  // request time 1700000000
            "00000020" + "b62ac283fad789c3262f4fc3a5711ed39457f426444baa5d27b7529c89eec581",  // request digest
            "00000002" + "00c8",  // status 200
            "00000005" + "2261626322",  // ETag "abc"
            "00000000",  // no Location
            "00000020" + "4062edaf750fb8074e7e83e0c9028c94e32468a8b6f1614774328ef045150f93",  // SHA-256 of the body
        ]
        #expect(hex(message) == expected.joined())
    }

    @Test func theHeaderMatchesTheVector() throws {
        let (_, _, header) = try Self.vector()
        #expect(header == "v1; cert=ATR1D5i9Wfz8gTl3Dqh9F19Wo1Rmw0x+zMuNipG07jeiXfYPW4/Js5QAAAAAa0nSAF946L4QFrXv+xTm9kqegoQauaAR62wpMkror9pphh40LqPUUpzE/deXRmgbuxdGxg4y6M3UP2t+A40KL4DQGwM=; salt=paWlpaWlpaWlpaWlpaWlpQ==; nonce=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=; time=1700000000; req=tirCg/rXicMmL0/DpXEe05RX9CZES6pdJ7dSnInuxYE=; body=QGLtr3UPuAdOfoPgyQKMlOMkaKi28WFHdDKO8EUVD5M=; sig=6jmwQF/GRiSTp1KK3l84gYEkdScJ52uasQ2OJDz5tJxFMhalqM4hji2U3KzruJqIg5qevll0DZUjrtc+vI6dAg==")
    }

    @Test func theVectorVerifies() throws {
        let (_, challenge, header) = try Self.vector()
        let root = try SigningKey(rawRepresentation: Self.rootSeed).verificationKey
        let verifier = try ResponseSignatureVerifier(roots: [SignedResponseRoot(root)], clock: { Date(timeIntervalSince1970: 1_700_000_100) })
        try verifier.verify(status: 200, headers: [("ETag", "\"abc\""), (SignedResponseHeader.signature, header)], body: Self.body, answering: challenge)
    }

    @Test func strictBase64RoundTripsEveryLengthAndRefusesOtherSpellings() {
        for length in 0...70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let encoded = StrictBase64.encode(bytes)
            #expect(encoded == Data(bytes).base64EncodedString())
            if length > 0 { #expect(StrictBase64.decode(encoded.utf8) == bytes) }
        }
        for bad in ["", "A", "AA", "AAA", "AA=", "A===", "AB==", "AAB=", "AA=A", "=AAA", "AA==AA==", "AA AA", "AA-_", "QQ==\n", "QR=="] {
            #expect(StrictBase64.decode(bad.utf8) == nil, "\(bad)")
        }
        #expect(StrictBase64.decode("QQ==".utf8) == [0x41])
    }

    @Test func base64URLWithoutPaddingRoundTripsEveryLengthAndRefusesOtherSpellings() {
        for length in 0...70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let encoded = Base64URL.encode(bytes)
            let expected = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(encoded == expected)
            #expect(Base64URL.decodeUnpadded(encoded.utf8) == bytes, "length \(length)")
            // The slice overload, from a slice that does not start at index 0 (a JWS segment).
            let framed = Array(("x." + encoded + ".y").utf8)
            #expect(Base64URL.decodeUnpadded(framed[2..<(framed.count - 2)]) == bytes, "slice, length \(length)")
        }
        // One character left over; non-zero bits after the last byte (two spellings of one
        // value); padding; the standard alphabet; whitespace; a character outside ASCII.
        for bad in ["A", "AAAAA", "AB", "AAB", "QR", "QUJ", "AA==", "AA=", "A+B/", "AA AA", "AAAA\n", "-_-\u{e9}"] {
            #expect(Base64URL.decodeUnpadded(bad.utf8) == nil, "\(bad)")
            let slice = Array(bad.utf8)[...]
            #expect(Base64URL.decodeUnpadded(slice) == nil, "slice \(bad)")
        }
        #expect(Base64URL.decodeUnpadded("QQ".utf8) == [0x41])
        #expect(Base64URL.decodeUnpadded("QUI".utf8) == [0x41, 0x42])
        #expect(Base64URL.decodeUnpadded("-_-_".utf8) == [0xFB, 0xFF, 0xBF])
        #expect(Base64URL.decodeUnpadded("".utf8) == [])
    }
}
