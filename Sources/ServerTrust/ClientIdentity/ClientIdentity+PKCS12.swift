import Foundation
internal import COpenSSL
internal import CServerTrustShims

extension ClientIdentity {
    /// Loads an identity from a PKCS#12 (`.p12`, `.pfx`) file: its certificate, its key and any
    /// CA certificates in it, sent as intermediates.
    ///
    /// - Parameters:
    ///   - pkcs12File: the DER PKCS#12 file.
    ///   - passphrase: the file's passphrase. Default nil: a file without one (or with an empty one).
    /// - Throws: `TrustError`: `TrustError.Code.unreadableInput`,
    ///   `TrustError.Code.malformedPrivateKey` (not PKCS#12, or no key or certificate in it),
    ///   `TrustError.Code.privateKeyPassphraseRequired`,
    ///   `TrustError.Code.privateKeyPassphraseIncorrect`, `TrustError.Code.privateKeyMismatch`.
    public convenience init(pkcs12File: String, passphrase: String? = nil) throws {
        var bytes = try readSecretFile(pkcs12File)
        defer { wipe(&bytes) }
        try self.init(pkcs12: bytes, passphrase: passphrase, source: pkcs12File)
    }

    /// ``init(pkcs12File:passphrase:)`` from the file's bytes.
    public convenience init(pkcs12DER: [UInt8], passphrase: String? = nil) throws {
        try self.init(pkcs12: pkcs12DER, passphrase: passphrase, source: "the PKCS#12 data")
    }

    private convenience init(pkcs12 der: [UInt8], passphrase: String?, source: String) throws {
        clearOpenSSLErrors()
        let parsed = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor = buffer.baseAddress
            return d2i_PKCS12(nil, &cursor, buffer.count)
        }
        guard let p12 = parsed else {
            var evidence = TrustError.Evidence()
            evidence.openSSLErrors = drainOpenSSLErrors()
            throw TrustError(
                .malformedPrivateKey, "\(source) is not a PKCS#12 file (DER); for PEM files give the certificate and key separately.",
                evidence: evidence)
        }
        defer { PKCS12_free(p12) }
        // The MAC says whether the passphrase is right before any decryption is attempted.
        if PKCS12_mac_present(p12) == 1 {
            let verified = Self.withPassphrase(passphrase) { pointer in
                guard let pointer else {
                    return PKCS12_verify_mac(p12, nil, 0) == 1 || PKCS12_verify_mac(p12, "", 0) == 1
                }
                return PKCS12_verify_mac(p12, pointer.assumingMemoryBound(to: CChar.self), -1) == 1
            }
            if !verified {
                _ = drainOpenSSLErrors()
                throw passphrase == nil
                    ? TrustError(.privateKeyPassphraseRequired, "\(source) is protected by a passphrase; give it.")
                    : TrustError(.privateKeyPassphraseIncorrect, "The passphrase does not open \(source).")
            }
        }
        var key: OpaquePointer?
        var certificate: OpaquePointer?
        var authorities: OpaquePointer?
        let ok = Self.withPassphrase(passphrase) { pointer in
            PKCS12_parse(p12, pointer?.assumingMemoryBound(to: CChar.self), &key, &certificate, &authorities) == 1
        }
        var chain: [Certificate] = []
        if let certificate { chain.append(Certificate(takingOwnership: certificate)) }
        if let authorities {
            for index in 0..<CServerTrustShims_sk_X509_num(authorities) {
                if let x509 = CServerTrustShims_sk_X509_value(authorities, index) { chain.append(Certificate(borrowing: x509)) }
            }
            CServerTrustShims_sk_X509_pop_free(authorities)
        }
        guard ok, let key, certificate != nil else {
            var evidence = TrustError.Evidence()
            evidence.openSSLErrors = drainOpenSSLErrors()
            if let key { EVP_PKEY_free(key) }
            throw TrustError(
                .malformedPrivateKey,
                ok ? "\(source) holds no \(key == nil ? "private key" : "certificate")." : "OpenSSL cannot read \(source).",
                evidence: evidence)
        }
        try self.init(chain: chain, adoptingKey: key)
    }
}
