import Foundation
import FuzzSupport
import ServerTrust

let verifier = CRLVerifier()
let genuine = try! CertificateRevocationList(bytes: Array(Fixtures.crlPEM.utf8))

/// Input: a CRL, DER or PEM, looked up for the fixture leaf and the fixture revoked certificate
/// (issuer: the fixture root) at the fixture time — as a complete CRL, as a delta over the
/// genuine CRL, with the genuine CRL as its delta, and inside path validation.
///
/// Properties: parsing, reading and verifying never crash; since the fuzzer cannot forge the
/// root's signature and no genuine CRL lists the fixture leaf, the leaf is never reported
/// revoked, and path validation never rejects it as revoked.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCRL(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    guard let crl = try? CertificateRevocationList(bytes: FuzzInput.bytes(start, count)) else { return 0 }
    _ = (crl.issuer, crl.thisUpdate, crl.nextUpdate)
    let time = Fixtures.validationTime
    let results = [
        verifier.verify(crl, for: Fixtures.leaf, issuedBy: Fixtures.root, at: time),
        verifier.verify(genuine, delta: crl, for: Fixtures.leaf, issuedBy: Fixtures.root, at: time),
        verifier.verify(crl, delta: genuine, for: Fixtures.leaf, issuedBy: Fixtures.root, at: time),
    ]
    for result in results {
        _ = (result.description, result.thisUpdate, result.nextUpdate, result.crlNumber)
        if case .revoked = result.status { fatalError("fuzz invariant broken: the fixture leaf was reported revoked: \(result)") }
    }
    _ = verifier.verify(crl, for: Fixtures.revoked, issuedBy: Fixtures.root, at: time)
    guard let anchors = try? TrustAnchors([Fixtures.root], revocationLists: [crl]) else { return 0 }
    let trust = PeerTrust(presentedChain: [Fixtures.leaf], anchors: anchors, validationTime: time)
    let code = trustErrorCode { _ = try trust.validatedChain() }
    require(code != .revoked, "path validation rejected the fixture leaf as revoked")
    return 0
}
