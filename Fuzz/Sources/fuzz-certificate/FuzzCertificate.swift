import Foundation
import FuzzSupport
import ServerTrust

/// Input: bytes read as a DER certificate, and the same bytes as text: a PEM bundle, one PEM
/// certificate, base64 DER; also as a DER SubjectPublicKeyInfo.
///
/// Properties: every property of a certificate that parses can be read; its DER and PEM
/// encodings parse back to an equal certificate (re-encoding is a fixed point); its SPKI pin is its public key's pin; a PEM
/// bundle that parses is validated as a presented chain against the fixture root without
/// crashing, and never accepted unless it starts with a certificate the root issued.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCertificate(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = FuzzInput.bytes(start, count)
    let text = FuzzInput.text(bytes)
    // Not required: derEncoded == bytes. OpenSSL accepts some non-DER encodings outside the
    // signed part (found: unused bits declared in the signature BIT STRING) and re-encodes
    // them; the TBS part, hence the key and everything signed, is kept byte for byte.
    if let certificate = try? Certificate(derEncoded: bytes) { exercise(certificate) }
    if let bundle = try? Certificate.certificates(pemBundle: text) {
        require(!bundle.isEmpty, "a PEM bundle parsed to no certificate")
        bundle.prefix(4).forEach(exercise)
        validate(bundle)
    }
    if let certificate = try? Certificate(pemEncoded: text) { exercise(certificate) }
    if let certificate = try? Certificate(base64Encoded: text) { exercise(certificate) }
    if let key = try? PublicKey(subjectPublicKeyInfoDER: bytes) {
        _ = (key.keyType, key.keySize, key.securityBits, key.description)
        require((try? PublicKey(pemOrBase64: Data(key.subjectPublicKeyInfoDER).base64EncodedString())) == key, "an SPKI does not round-trip through base64")
    }
    return 0
}

func exercise(_ certificate: Certificate) {
    _ = (certificate.subject, certificate.issuer, certificate.isSelfIssued, certificate.serialNumber)
    _ = (certificate.notValidBefore, certificate.notValidAfter, certificate.signatureAlgorithm)
    _ = (certificate.dnsNames, certificate.ipAddresses, certificate.ocspURLs, certificate.crlDistributionPoints)
    _ = (certificate.keyType, certificate.keySize, certificate.hasMustStaple, certificate.description)
    _ = certificate.sha256Fingerprint
    let der = certificate.derEncoded
    require(!der.isEmpty, "a parsed certificate has no DER encoding")
    require((try? Certificate(derEncoded: der)) == certificate, "a certificate's DER does not parse back to it")
    require((try? Certificate(pemEncoded: certificate.pemEncoded)) == certificate, "a certificate's PEM does not parse back to it")
    require(certificate.spkiPin == certificate.publicKey.pin, "the SPKI pin differs from the public key's pin")
}

/// Path validation, host check and pinning over a presented chain. A forged certificate cannot
/// carry the fixture root's signature, so only chains starting with one the root really issued
/// (the fixture leaf, as in the seeds) may pass.
func validate(_ chain: [Certificate]) {
    let trust = PeerTrust(presentedChain: chain, anchors: Fixtures.anchors, validationTime: Fixtures.validationTime)
    let code = trustErrorCode {
        try PinnedKeyHashesTrustEvaluator(pins: [Fixtures.root.spkiPin]).evaluate(trust, forHost: "fuzz.servertrust.test")
    }
    if code == nil {
        require(chain[0] == Fixtures.leaf, "a chain starting with \(chain[0]) was accepted")
    }
    _ = trustErrorCode { try DefaultTrustEvaluator().evaluate(trust, forHost: "a.fuzz.servertrust.test") }
    _ = trustErrorCode { try DefaultTrustEvaluator().evaluate(trust, forHost: "192.0.2.1") }
}
