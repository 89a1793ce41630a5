import Foundation
import FuzzSupport
import ServerTrust

/// Fixed key, request, nonce and clock, so a genuine RFC 9421 signature exists for the fuzzer to
/// mutate and every run is reproducible (Ed25519 is deterministic).
enum Fixed {
    /// RFC 9421's test-key-ed25519 (Appendix B.1.4): a published key, good only for tests.
    static let key = try! SignaturePrivateKey(pem: """
        -----BEGIN PRIVATE KEY-----
        MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF
        -----END PRIVATE KEY-----
        """)
    static let keys = SigningKeySet(keys: ["fuzz-key": key.publicKey])
    static let created: Int64 = 1_800_000_000
    static let now = Date(timeIntervalSince1970: TimeInterval(created + 5))
    static let body = Array(#"{"fuzzed":true}"#.utf8)
    static let policy = MessageSignaturePolicy(keys: keys)
    static let request = MessageSignatureRequest(method: "GET", scheme: "https", host: "fuzz.servertrust.test", path: "/v1/status", query: "a=1")
    static let challenge = MessageSignatureChallenge(nonce: "AAAAAAAAAAAAAAAAAAAAAA", request: request, policy: policy, requestTime: created)
    static let otherChallenge = MessageSignatureChallenge(nonce: "BBBBBBBBBBBBBBBBBBBBBB", request: request, policy: policy, requestTime: created)
    static let otherRequest = MessageSignatureChallenge(
        nonce: "AAAAAAAAAAAAAAAAAAAAAA",
        request: MessageSignatureRequest(method: "GET", scheme: "https", host: "fuzz.servertrust.test", path: "/v1/other", query: "a=1"),
        policy: policy, requestTime: created)
    static let responseFields: [(name: String, value: String)] = [("Content-Type", "application/json")]
    static let genuine: [(name: String, value: String)] = {
        var signed = request
        signed.headers = [("Accept-Signature", challenge.acceptSignature)]
        let signer = try! MessageSignatureSigner(key: key, keyID: "fuzz-key")
        return responseFields + (try! signer.signatureFields(status: 200, headers: responseFields, body: body, request: signed, now: Date(timeIntervalSince1970: TimeInterval(created))))
    }()
    /// The genuine signature's bytes, which the fuzzer cannot forge.
    static let signatureValue = Array(genuine.first { $0.name == "Signature" }!.value.utf8)
    static let seed = genuine.map { "\($0.name): \($0.value)\n" }.joined()
}

/// `SERVERTRUST_FUZZ_WRITE_SEED=path` writes the genuine header block there.
@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    writeSeedIfAsked(Fixed.seed)
    return 0
}

/// Input: response header fields, one `Name: value` per line, as a client receives them.
///
/// Properties: the RFC 9421 verifier (its structured-field parser, the signature base, the
/// Content-Digest check) never crashes; it accepts a response only when the input carries the
/// genuine signature (the fuzzer cannot forge another), and the same fields never verify for
/// another status, body, nonce or request; the signer's Accept-Signature parsing and the
/// Content-Digest parser never crash on any field.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMessageSignature(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = FuzzInput.bytes(start, count)
    let headers = FuzzInput.headerFields(bytes)
    if (try? verifier().verify(status: 200, headers: headers, body: Fixed.body, answering: Fixed.challenge)) != nil {
        let input = FuzzInput.text(bytes).debugDescription
        require(bytes.firstRange(of: Fixed.signatureValue.dropFirst(5).dropLast(1)) != nil, "verified without the genuine signature: \(input)")
        require(
            (try? verifier().verify(status: 404, headers: headers, body: Fixed.body, answering: Fixed.challenge)) == nil,
            "a signature over status 200 verified for status 404: \(input)")
        require(
            (try? verifier().verify(status: 200, headers: headers, body: Fixed.body + [0], answering: Fixed.challenge)) == nil,
            "a signature verified for another body: \(input)")
        require(
            (try? verifier().verify(status: 200, headers: headers, body: Fixed.body, answering: Fixed.otherChallenge)) == nil,
            "a signature verified for another nonce: \(input)")
        require(
            (try? verifier().verify(status: 200, headers: headers, body: Fixed.body, answering: Fixed.otherRequest)) == nil,
            "a signature verified for another request: \(input)")
    }
    for (_, value) in headers.prefix(4) {
        let digest = ContentDigest()
        digest.update(Fixed.body)
        _ = try? digest.check(value)
        var request = Fixed.request
        request.headers = [("Accept-Signature", value)]
        _ = try? signer().signatureFields(status: 200, headers: Fixed.responseFields, body: Fixed.body, request: request, now: Fixed.now)
    }
    return 0
}

/// A fresh verifier per input: the replay cache would otherwise make runs depend on history.
func verifier() -> MessageSignatureVerifier {
    try! MessageSignatureVerifier(policy: Fixed.policy, replayCacheCapacity: 4, clock: { Fixed.now })
}

func signer() -> MessageSignatureSigner { try! MessageSignatureSigner(key: Fixed.key, keyID: "fuzz-key") }
