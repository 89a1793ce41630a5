import Foundation
internal import ServerTrust
internal import COpenSSL
internal import CServerTrustShims
public import ServerTrustLab

extension LabKey {
    /// The private key as a PEM `ENCRYPTED PRIVATE KEY` (PKCS#8, AES-256-CBC) block.
    public func encryptedPEMPrivateKey(passphrase: String) -> String {
        pem { bio in PEM_write_bio_PKCS8PrivateKey(bio, pkey, EVP_aes_256_cbc(), passphrase, Int32(passphrase.utf8.count), nil, nil) }
    }

    /// The private key in OpenSSL's legacy form (`EC PRIVATE KEY` / `RSA PRIVATE KEY`) encrypted
    /// with AES-256-CBC, marked by a `Proc-Type: 4,ENCRYPTED` header.
    public func legacyEncryptedPEMPrivateKey(passphrase: String) -> String {
        pem { bio in
            var bytes = Array(passphrase.utf8)
            return PEM_write_bio_PrivateKey_traditional(bio, pkey, EVP_aes_256_cbc(), &bytes, Int32(bytes.count), nil, nil)
        }
    }

    private func pem(_ write: (OpaquePointer) -> Int32) -> String {
        guard let bytes = try? OpenSSLEncoding.bioOutput(write) else { preconditionFailure("OpenSSL cannot write a key it generated as PEM") }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension LabLeaf {
    /// The leaf, its key and its intermediates (root excluded) as a PKCS#12 file, protected by
    /// `passphrase` (MAC and encryption), or with neither when it is nil.
    public func pkcs12(passphrase: String?) throws -> [UInt8] {
        guard let authorities = CServerTrustShims_sk_X509_new_null() else { throw LabPKIError("sk_X509_new_null") }
        defer { CServerTrustShims_sk_X509_pop_free(authorities) }
        for intermediate in issuer.chain where !intermediate.isSelfIssued {
            let x509 = try CertificateBuilder.withX509(intermediate) { x509 in X509_up_ref(x509); return x509 }
            _ = CServerTrustShims_sk_X509_push(authorities, x509)
        }
        // Without a passphrase: no encryption (-1) and no MAC, as `openssl pkcs12 -export -nodes -nomac`.
        let none: Int32 = passphrase == nil ? -1 : 0
        return try CertificateBuilder.withX509(certificate) { leaf in
            guard let p12 = PKCS12_create(passphrase, "client", key.pkey, leaf, authorities, none, none, 0, none, 0) else {
                throw LabPKIError("PKCS12_create")
            }
            defer { PKCS12_free(p12) }
            return try OpenSSLEncoding.der { i2d_PKCS12(p12, $0) }
        }
    }
}
