package import Foundation
internal import COpenSSL

/// A DER-encoded OCSP response (RFC 6960 §4.2.1) parsed by OpenSSL, not yet verified.
///
/// Parsing checks the structure only: a defined response status and, when it is
/// `OCSPResponseStatus.successful`, a body of type id-pkix-ocsp-basic that decodes. Nothing
/// here says the response is authentic or about any particular certificate: that is
/// `OCSPVerifier`'s job.
///
/// Owns exactly one `OCSP_RESPONSE*`, freed in `deinit`; the decoded basic response is a
/// separate owner. Instances are immutable and OpenSSL only reads a parsed response when
/// verifying it, so the class is `@unchecked Sendable`.
package final class OCSPResponse: @unchecked Sendable {
    /// The largest response accepted. Real responses are a few kilobytes (a signature, a
    /// handful of single responses, perhaps a responder certificate); more is not a response.
    package static let maximumDERSize = 1 << 20

    let response: OpaquePointer
    /// The decoded basic response; `nil` exactly when the status is not `successful`.
    let basic: BasicOCSPResponse?

    /// The responder's status: only `successful` responses carry certificate statuses.
    package let responseStatus: OCSPResponseStatus

    deinit { OCSP_RESPONSE_free(response) }

    /// Parses one DER-encoded OCSP response.
    ///
    /// - Throws: `TrustError.Code.malformedOCSPResponse` if the bytes are empty, over
    ///   ``maximumDERSize``, not an OCSP response, followed by trailing data, carry a status
    ///   RFC 6960 does not define, or are `successful` without a decodable basic response.
    package init(derEncoded der: [UInt8]) throws {
        guard !der.isEmpty else {
            throw TrustError(.malformedOCSPResponse, "The OCSP response is empty.")
        }
        guard der.count <= OCSPResponse.maximumDERSize else {
            throw TrustError(
                .malformedOCSPResponse,
                "The OCSP response is \(der.count) bytes, over the \(OCSPResponse.maximumDERSize)-byte limit.")
        }
        clearOpenSSLErrors()
        let parsed: (OpaquePointer?, Int) = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let response = d2i_OCSP_RESPONSE(nil, &cursor, buffer.count)
            return (response, cursor.map { $0 - buffer.baseAddress! } ?? 0)
        }
        guard let response = parsed.0 else {
            var evidence = TrustError.Evidence()
            evidence.openSSLErrors = drainOpenSSLErrors()
            throw TrustError(.malformedOCSPResponse, "The data is not a DER-encoded OCSP response.", evidence: evidence)
        }
        guard parsed.1 == der.count else {
            OCSP_RESPONSE_free(response)
            throw TrustError(
                .malformedOCSPResponse, "The DER OCSP response is followed by \(der.count - parsed.1) bytes of trailing data.")
        }
        let rawStatus = Int(OCSP_response_status(response))
        guard let status = OCSPResponseStatus(rawValue: rawStatus) else {
            OCSP_RESPONSE_free(response)
            throw TrustError(.malformedOCSPResponse, "The OCSP response status \(rawStatus) is not defined by RFC 6960.")
        }
        var basic: BasicOCSPResponse?
        if status == .successful {
            // Fails for a body type other than id-pkix-ocsp-basic and for a body that does not decode.
            guard let decoded = OCSP_response_get1_basic(response) else {
                var evidence = TrustError.Evidence()
                evidence.openSSLErrors = drainOpenSSLErrors()
                OCSP_RESPONSE_free(response)
                throw TrustError(
                    .malformedOCSPResponse,
                    "The successful OCSP response has no decodable basic response (id-pkix-ocsp-basic).",
                    evidence: evidence)
            }
            basic = BasicOCSPResponse(takingOwnership: decoded)
        }
        self.response = response
        self.responseStatus = status
        self.basic = basic
    }

    /// Reads a DER OCSP response from a file.
    ///
    /// - Throws: `TrustError.Code.unreadableInput` when the file cannot be read, else as
    ///   ``init(derEncoded:)``, with the path in the reason.
    package convenience init(contentsOfFile path: String) throws {
        let bytes = try readFile(path)
        do {
            try self.init(derEncoded: bytes)
        } catch let error as TrustError {
            throw TrustError(error.code, "\(path): \(error.reason)", evidence: error.evidence)
        }
    }

    /// The DER encoding.
    package var derEncoded: [UInt8] {
        let length = i2d_OCSP_RESPONSE(response, nil)
        guard length > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        bytes.withUnsafeMutableBufferPointer { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            _ = i2d_OCSP_RESPONSE(response, &cursor)
        }
        return bytes
    }

    /// When the responder signed the response (unverified); `nil` unless `successful`.
    package var producedAt: Date? { basic?.producedAt }
}
