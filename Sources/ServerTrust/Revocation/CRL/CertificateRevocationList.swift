public import Foundation
internal import COpenSSL

/// A certificate revocation list parsed by OpenSSL.
///
/// Owns one `X509_CRL*`; immutable, so `@unchecked Sendable`.
public final class CertificateRevocationList: @unchecked Sendable {
    /// The largest CRL accepted, DER or PEM (a CRL of a million entries is ≈ 40 MB).
    public static let maximumSize = 64 << 20

    let crl: OpaquePointer

    init(takingOwnership crl: OpaquePointer) { self.crl = crl }
    deinit { X509_CRL_free(crl) }

    /// Parses a DER- or PEM-encoded CRL.
    ///
    /// - Throws: `TrustError.Code.malformedCRL` for empty, oversized or undecodable data.
    public convenience init(bytes: [UInt8]) throws {
        guard !bytes.isEmpty else { throw TrustError(.malformedCRL, "The CRL data is empty.") }
        guard bytes.count <= CertificateRevocationList.maximumSize else {
            throw TrustError(.malformedCRL, "The CRL is \(bytes.count) bytes, over the \(CertificateRevocationList.maximumSize)-byte limit.")
        }
        clearOpenSSLErrors()
        let isPEM = bytes.starts(with: Array("-----BEGIN".utf8))
            || (String(bytes: bytes.prefix(4096), encoding: .utf8)?.contains("-----BEGIN X509 CRL-----") ?? false)
        let parsed: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
            if isPEM {
                guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
                defer { BIO_free(bio) }
                return PEM_read_bio_X509_CRL(bio, nil, nil, nil)
            }
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let crl = d2i_X509_CRL(nil, &cursor, buffer.count)
            if let crl, cursor != buffer.baseAddress! + buffer.count {
                X509_CRL_free(crl)
                return nil
            }
            return crl
        }
        guard let parsed else {
            var evidence = TrustError.Evidence()
            evidence.openSSLErrors = drainOpenSSLErrors()
            throw TrustError(.malformedCRL, "The data is not a \(isPEM ? "PEM" : "DER") X.509 CRL.", evidence: evidence)
        }
        self.init(takingOwnership: parsed)
    }

    /// Reads a CRL file (DER or PEM).
    public convenience init(contentsOfFile path: String) throws {
        do {
            try self.init(bytes: try readFile(path))
        } catch let error as TrustError {
            throw TrustError(error.code, "\(path): \(error.reason)", evidence: error.evidence)
        }
    }

    /// The issuer name in RFC 2253 form.
    public var issuer: String { distinguishedName(X509_CRL_get_issuer(crl)) }

    /// When this CRL was issued.
    public var thisUpdate: Date? { asn1Date(X509_CRL_get0_lastUpdate(crl)) }

    /// When the next CRL is due; nil if the CRL does not say.
    public var nextUpdate: Date? { asn1Date(X509_CRL_get0_nextUpdate(crl)) }
}

extension CertificateRevocationList {
    /// Whether `issuer` may be this CRL's issuer: the DER-encoded names are equal
    /// (`X509_NAME_cmp`, never formatted strings, which two different names can share), and
    /// when the CRL carries an authority key identifier it matches `issuer`
    /// (`X509_check_akid`: its subject key identifier, or its issuer and serial).
    ///
    /// Only a preselection: the CRL's signature is verified with the issuer's key afterwards.
    func isIssued(by issuer: Certificate) -> Bool {
        guard let name = X509_CRL_get_issuer(crl), let subject = X509_get_subject_name(issuer.x509),
            X509_NAME_cmp(name, subject) == 0
        else { return false }
        var critical: Int32 = 0
        guard let akid = X509_CRL_get_ext_d2i(crl, NID_authority_key_identifier, &critical, nil) else {
            // -1: no such extension. Anything else (several, or undecodable) is not a match.
            return critical == -1
        }
        let keyID = akid.assumingMemoryBound(to: AUTHORITY_KEYID.self)
        defer { AUTHORITY_KEYID_free(keyID) }
        return X509_check_akid(issuer.x509, keyID) == X509_V_OK
    }
}
