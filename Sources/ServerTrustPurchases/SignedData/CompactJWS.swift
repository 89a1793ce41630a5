import ServerTrust
import ServerTrustCertificates

/// A compact JWS as the App Store writes it (RFC 7515 section 7.1): `header.payload.signature`,
/// each segment base64url without padding, the header naming `alg` ES256 and an `x5c` chain.
///
/// Read strictly, before any certificate or signature is looked at: exactly three segments and
/// nothing after the signature; the URL-safe alphabet only, no padding, canonical; a header
/// that is strict JSON (UTF-8, no duplicate key, nothing after the object); `alg` exactly
/// `ES256` (never `none`, an HMAC whose secret would be the public key, another curve or
/// scheme); no `crit` (no extension this reader could honour); `x5c` an array of exactly three
/// standard-base64 DER certificates (RFC 7515 section 4.1.6).
struct CompactJWS {
    /// The bytes the signature covers: `header.payload` as sent.
    let signingInput: [UInt8]
    /// The decoded payload: JSON, not yet read.
    let payload: [UInt8]
    /// ES256's `r || s`, 64 bytes.
    let signature: [UInt8]
    /// The `x5c` entries as sent (standard base64 DER), leaf first; parsed by
    /// ``certificates()`` only when the chain is not one already verified.
    let encodedChain: [String]
    /// The `x5c` entries' exact text: what a verified chain is remembered by.
    let chainKey: [UInt8]

    /// How many `x5c` certificates the App Store sends.
    static let chainLength = 3

    init(_ text: [UInt8], chainLength: Int = CompactJWS.chainLength) throws(PurchaseVerificationError) {
        let segments = text.split(separator: UInt8(ascii: "."), maxSplits: 3, omittingEmptySubsequences: false)
        guard segments.count == 3 else {
            throw PurchaseVerificationError(
                .malformedJWS, "A compact JWS has three segments separated by \".\"; this has \(segments.count).")
        }
        guard let headerBytes = Base64URL.decodeUnpadded(segments[0]), !headerBytes.isEmpty else {
            throw PurchaseVerificationError(.malformedJWS, "The JWS header is not base64url without padding.")
        }
        guard let payload = Base64URL.decodeUnpadded(segments[1]), !payload.isEmpty else {
            throw PurchaseVerificationError(.malformedJWS, "The JWS payload is not base64url without padding.")
        }
        guard let signature = Base64URL.decodeUnpadded(segments[2]) else {
            throw PurchaseVerificationError(.malformedJWS, "The JWS signature is not base64url without padding.")
        }
        let header = try SignedFields(json: headerBytes, what: "JWS header", code: .malformedJWS)
        guard let algorithm = try header.string("alg") else {
            throw PurchaseVerificationError(.malformedJWS, "The JWS header has no \"alg\".")
        }
        guard algorithm == "ES256" else {
            throw PurchaseVerificationError(
                .unsupportedAlgorithm, "The JWS is signed with \"\(algorithm)\"; App Store signed data is ES256 only.")
        }
        guard !header.has("crit") else {
            throw PurchaseVerificationError(.unsupportedAlgorithm, "The JWS header names critical extensions (\"crit\"), which App Store signed data never has.")
        }
        guard let encodedChain = try header.strings("x5c") else {
            throw PurchaseVerificationError(.malformedJWS, "The JWS header has no \"x5c\" certificate chain.")
        }
        guard encodedChain.count == chainLength else {
            throw PurchaseVerificationError(
                .wrongChainLength,
                chainLength == Self.chainLength
                    ? "The x5c chain has \(encodedChain.count) certificates; App Store signed data carries \(Self.chainLength) (leaf, intermediate, root)."
                    : "The x5c chain has \(encodedChain.count) certificates; StoreKit Testing in Xcode signs with \(chainLength).")
        }
        signingInput = Array(text[..<segments[1].endIndex])
        self.payload = payload
        self.signature = signature
        self.encodedChain = encodedChain
        chainKey = Array(encodedChain.joined(separator: ",").utf8)
    }

    /// The `x5c` certificates parsed, in order: leaf, intermediate, root.
    func certificates() throws(PurchaseVerificationError) -> [Certificate] {
        var chain: [Certificate] = []
        for (index, encoded) in encodedChain.enumerated() {
            guard let der = StrictBase64.decode(Array(encoded.utf8)) else {
                throw PurchaseVerificationError(.malformedCertificate, "x5c[\(index)] is not standard base64.")
            }
            do {
                chain.append(try Certificate(derEncoded: der))
            } catch {
                throw PurchaseVerificationError(.malformedCertificate, "x5c[\(index)] is not a DER certificate: \(error)")
            }
        }
        return chain
    }
}
