import Foundation
import FuzzSupport
import ServerTrust

let verifier = OCSPVerifier()
let request = try! OCSPRequest(certificate: Fixtures.leaf, issuer: Fixtures.root, nonce: .bytes(Fixtures.ocspNonce))

/// Input: a DER OCSP response, verified offline about the fixture leaf and the fixture revoked
/// certificate (issuer: the fixture root) at the fixture time.
///
/// Properties: parsing and verifying never crash; the two verify entry points agree; since the
/// fuzzer cannot forge the root's or the responder's signature, and the genuine responses only
/// ever say "good" for the leaf and "revoked" for the revoked certificate, the leaf is never
/// reported revoked, the revoked certificate never good, and nothing is good under the wrong
/// issuer.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOCSP(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = FuzzInput.bytes(start, count)
    let time = Fixtures.validationTime
    let viaBytes = verifier.verify(derEncoded: bytes, for: Fixtures.leaf, issuedBy: Fixtures.root, at: time)
    guard let response = try? OCSPResponse(derEncoded: bytes) else {
        require(viaBytes.status == .unknown(.malformed), "unparsable bytes gave \(viaBytes)")
        return 0
    }
    _ = (response.responseStatus, response.producedAt, response.derEncoded)
    let leaf = verifier.verify(response, for: Fixtures.leaf, issuedBy: Fixtures.root, at: time)
    require(leaf.status == viaBytes.status, "verify(derEncoded:) says \(viaBytes), verify(_:) says \(leaf)")
    require(!isRevoked(leaf.status), "the fixture leaf was reported revoked: \(leaf)")
    let withNonce = verifier.verify(response, for: Fixtures.leaf, issuedBy: Fixtures.root, at: time, request: request)
    require(!isRevoked(withNonce.status), "the fixture leaf was reported revoked (nonce request): \(withNonce)")
    let revoked = verifier.verify(response, for: Fixtures.revoked, issuedBy: Fixtures.root, at: time)
    require(revoked.status != .good, "the revoked certificate was reported good: \(revoked)")
    let wrongIssuer = verifier.verify(response, for: Fixtures.leaf, issuedBy: Fixtures.responder, at: time)
    require(wrongIssuer.status != .good, "the leaf was reported good under the wrong issuer: \(wrongIssuer)")
    _ = [leaf, withNonce, revoked, wrongIssuer].map { ($0.description, $0.signer, $0.thisUpdate, $0.nextUpdate, $0.freshUntil) }
    return 0
}

func isRevoked(_ status: RevocationStatus) -> Bool {
    if case .revoked = status { return true }
    return false
}
