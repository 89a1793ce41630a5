import Foundation
import FuzzSupport
import ServerTrust

/// Fixed keys and a fixed request, so a genuine signature exists for the fuzzer to mutate and
/// every run is reproducible.
enum Fixed {
    static let root = try! SigningKey(rawRepresentation: Array(repeating: 0x01, count: 32))
    static let intermediate = try! SigningKey(rawRepresentation: Array(repeating: 0x02, count: 32))
    static let requestTime: Int64 = 1_800_000_000
    static let now = Date(timeIntervalSince1970: TimeInterval(requestTime + 5))
    static let body = Array("fuzzed body".utf8)
    static let challenge = try! SignatureChallenge(
        method: "GET", host: "fuzz.servertrust.test", path: "/v1/status", query: "a=1", requestBody: [],
        nonce: Array(repeating: 0x07, count: 32), requestTime: requestTime)
    static let certificate = try! IntermediateKeyCertificate.issue(
        for: intermediate.verificationKey, expires: Date(timeIntervalSince1970: 4_000_000_000), signedBy: root)
    static let signer = try! ResponseSigner(key: intermediate, certificate: certificate)
    static let genuine = try! signer.signatureHeader(answering: challenge, status: 200, etag: "\"e\"", body: body, now: now)
    /// Deterministic (Ed25519, fixed expiry), unlike the signature, whose salt is random: the only
    /// intermediate certificate the fixed root ever signed.
    static let certificateBase64 = Array(certificate.base64.utf8)
    static let otherChallenge = try! SignatureChallenge(
        method: "GET", host: "fuzz.servertrust.test", path: "/v1/status", query: "a=1", requestBody: [],
        nonce: Array(repeating: 0x08, count: 32), requestTime: requestTime)
    static let seed = "\(genuine.name): \(genuine.value)\nETag: \"e\"\n"
}

/// `SERVERTRUST_FUZZ_WRITE_SEED=path` writes the genuine header block there (Fuzz/make-seeds.sh).
@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    writeSeedIfAsked(Fixed.seed)
    return 0
}

/// Input: response header fields, one `Name: value` per line, as a client receives them.
///
/// Properties: the client's verifier never crashes; it accepts a response only when the input
/// carries the fixed root's one intermediate certificate (the fuzzer cannot forge another), and
/// the same fields never verify for another status, body or request; the server's challenge parser never crashes and keeps nonces within 16–64
/// bytes; the key and intermediate-certificate parsers never crash on any field or the whole text.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSignedResponse(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = FuzzInput.bytes(start, count)
    let headers = FuzzInput.headerFields(bytes)
    if (try? verifier().verify(status: 200, headers: headers, body: Fixed.body, answering: Fixed.challenge)) != nil {
        let input = FuzzInput.text(bytes).debugDescription
        require(bytes.firstRange(of: Fixed.certificateBase64) != nil, "verified without the fixed intermediate: \(input)")
        require(
            (try? verifier().verify(status: 404, headers: headers, body: Fixed.body, answering: Fixed.challenge)) == nil,
            "a signature over status 200 verified for status 404: \(input)")
        require(
            (try? verifier().verify(status: 200, headers: headers, body: Fixed.body + [0], answering: Fixed.challenge)) == nil,
            "a signature verified for another body: \(input)")
        require(
            (try? verifier().verify(status: 200, headers: headers, body: Fixed.body, answering: Fixed.otherChallenge)) == nil,
            "a signature verified for another request: \(input)")
    }
    if let challenge = try? SignatureChallenge(receivedMethod: "GET", target: "/v1/status?a=1", headers: headers, body: []) {
        require((16...64).contains(challenge.nonce.count), "a challenge with a \(challenge.nonce.count)-byte nonce was accepted")
        _ = (challenge.requestHeaders, challenge.requestDigest)
    }
    for (_, value) in headers.prefix(4) {
        _ = try? IntermediateKeyCertificate(base64: value)
        _ = try? VerificationKey(base64: value)
    }
    // OpenSSL 3 sets up a whole decoder chain for each PEM attempt (a third of the time per
    // input): only texts that could be PEM get one.
    let text = FuzzInput.text(bytes)
    if text.contains("-----BEGIN") {
        _ = try? IntermediateKeyCertificate(pem: text)
        _ = try? SigningKey(pem: text)
        _ = try? ResponseSigner(pem: text)
    }
    return 0
}

/// A fresh verifier per input: the replay cache would otherwise make runs depend on history.
func verifier() -> ResponseSignatureVerifier {
    try! ResponseSignatureVerifier(
        roots: [SignedResponseRoot(Fixed.root.verificationKey)], replayCacheCapacity: 4, clock: { Fixed.now })
}
