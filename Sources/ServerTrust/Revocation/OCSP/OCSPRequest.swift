import Foundation
internal import COpenSSL

/// An OCSP request for one certificate (RFC 6960 §4.1), optionally with a nonce.
///
/// Built for live queries: send ``derEncoded`` to the responder, then pass this request to
/// `OCSPVerifier.verify(_:for:issuedBy:at:request:)` so the response must echo the nonce,
/// which proves it was produced for this query and not replayed. The certificate ID uses SHA-1,
/// the one hash every responder supports (RFC 5019 §2.1.1), unless SHA-256 is asked for.
///
/// Owns exactly one `OCSP_REQUEST*`, freed in `deinit`; immutable, so `@unchecked Sendable`.
package final class OCSPRequest: @unchecked Sendable {
    /// The nonce length used by default: 32 bytes, the most RFC 8954 lets a responder require.
    package static let defaultNonceLength = 32

    let request: OpaquePointer

    /// The nonce the request carries, `nil` for none.
    package let nonce: [UInt8]?

    deinit { OCSP_REQUEST_free(request) }

    /// What nonce a request carries.
    package enum Nonce: Hashable, Sendable {
        /// `OCSPRequest.defaultNonceLength` bytes from OpenSSL's CSPRNG (the default).
        case random
        /// These bytes (1 to 32, RFC 8954 §2.1); for tests and for replaying a known query.
        case bytes([UInt8])
        /// No nonce, for responders that serve pre-produced responses (RFC 5019).
        /// - Warning: a response to such a request cannot be tied to this query; only its
        ///   freshness limits a replay.
        case omitted
    }

    /// - Parameters:
    ///   - certificate: the certificate whose status is asked for.
    ///   - issuer: the certificate that issued it (its name and key form the certificate ID).
    ///   - nonce: default ``Nonce/random``.
    ///   - hash: the CertID's hash; default SHA-1.
    /// - Throws: `TrustError.Code.invalidConfiguration` for a nonce of a bad length,
    ///   `TrustError.Code.openSSLFailure` if OpenSSL cannot build the request or draw random bytes.
    package init(
        certificate: Certificate, issuer: Certificate, nonce: Nonce = .random, hash: RevocationOptions.OCSPCertificateIDHash = .sha1
    ) throws {
        var nonceBytes: [UInt8]?
        switch nonce {
        case .random:
            var bytes = [UInt8](repeating: 0, count: OCSPRequest.defaultNonceLength)
            guard RAND_bytes(&bytes, Int32(bytes.count)) == 1 else {
                throw TrustError(.openSSLFailure, "RAND_bytes failed: cannot draw an OCSP nonce.")
            }
            nonceBytes = bytes
        case .bytes(let bytes):
            guard (1...32).contains(bytes.count) else {
                throw TrustError(.invalidConfiguration, "An OCSP nonce must be 1 to 32 bytes, not \(bytes.count).")
            }
            nonceBytes = bytes
        case .omitted:
            nonceBytes = nil
        }
        clearOpenSSLErrors()
        guard let request = OCSP_REQUEST_new() else {
            throw TrustError(.openSSLFailure, "OCSP_REQUEST_new failed.")
        }
        guard let id = OCSP_cert_to_id(hash == .sha256 ? EVP_sha256() : EVP_sha1(), certificate.x509, issuer.x509) else {
            OCSP_REQUEST_free(request)
            var evidence = TrustError.Evidence()
            evidence.openSSLErrors = drainOpenSSLErrors()
            throw TrustError(.openSSLFailure, "Cannot form the OCSP certificate ID of \(certificate.subject).", evidence: evidence)
        }
        guard OCSP_request_add0_id(request, id) != nil else {
            OCSP_CERTID_free(id)
            OCSP_REQUEST_free(request)
            throw TrustError(.openSSLFailure, "OCSP_request_add0_id failed.")
        }
        if var bytes = nonceBytes {
            guard OCSP_request_add1_nonce(request, &bytes, Int32(bytes.count)) == 1 else {
                OCSP_REQUEST_free(request)
                throw TrustError(.openSSLFailure, "OCSP_request_add1_nonce failed.")
            }
        }
        self.request = request
        self.nonce = nonceBytes
    }

    /// The DER encoding, to POST as `application/ocsp-request`.
    package var derEncoded: [UInt8] {
        let length = i2d_OCSP_REQUEST(request, nil)
        guard length > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        bytes.withUnsafeMutableBufferPointer { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            _ = i2d_OCSP_REQUEST(request, &cursor)
        }
        return bytes
    }
}
