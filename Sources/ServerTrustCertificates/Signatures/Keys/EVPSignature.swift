internal import COpenSSL

/// The one `EVP_DigestVerify` call every scheme goes through.
package enum EVPSignature {
    /// Verifies with `digest` (NULL for Ed25519, which hashes internally); `pss` selects
    /// RSASSA-PSS with MGF1 over the same digest and an automatically detected salt length.
    package static func verify(key: OpaquePointer, digest: OpaquePointer?, signature: [UInt8], message: [UInt8], pss: Bool = false) -> Bool {
        guard !signature.isEmpty, let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer?
        guard EVP_DigestVerifyInit(context, &keyContext, digest, nil, key) == 1 else {
            _ = drainOpenSSLErrors()
            return false
        }
        if pss {
            guard let keyContext, EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PSS_PADDING) == 1,
                EVP_PKEY_CTX_set_rsa_pss_saltlen(keyContext, RSA_PSS_SALTLEN_AUTO) == 1
            else {
                _ = drainOpenSSLErrors()
                return false
            }
        }
        let valid = message.withUnsafeBufferPointer { input in
            signature.withUnsafeBufferPointer { sig in
                EVP_DigestVerify(context, sig.baseAddress, sig.count, input.baseAddress, input.count) == 1
            }
        }
        if !valid { _ = drainOpenSSLErrors() }
        return valid
    }

    /// `r || s` (each `componentLength` bytes, big-endian) as a DER `Ecdsa-Sig-Value`.
    package static func derFromRawECDSA(_ raw: [UInt8], componentLength: Int) -> [UInt8]? {
        guard raw.count == 2 * componentLength else { return nil }
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop { $0 == 0 })
            if value.isEmpty { value = [0] }
            if value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(raw[0..<componentLength]) + integer(raw[componentLength...])
        guard body.count < 128 else { return nil }
        return [0x30, UInt8(body.count)] + body
    }
}
