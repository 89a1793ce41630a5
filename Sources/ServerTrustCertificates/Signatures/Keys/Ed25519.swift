internal import COpenSSL

/// Ed25519 over OpenSSL's EVP interface: `EVP_DigestSign`/`EVP_DigestVerify` with a NULL digest
/// (Ed25519 hashes internally, with SHA-512, and signs the whole message in one call).
package enum Ed25519 {
    static let publicKeyLength = 32
    static let privateKeyLength = 32
    package static let signatureLength = 64

    /// Owns one `EVP_PKEY*` (public or private Ed25519), freed in `deinit`.
    ///
    /// The key is never modified after creation and every signature or verification uses its
    /// own `EVP_MD_CTX`, which OpenSSL 3 documents as safe on a shared `EVP_PKEY`: hence
    /// `@unchecked Sendable`.
    package final class Key: @unchecked Sendable {
        package let pointer: OpaquePointer

        /// Adopts `pointer`, which must be an Ed25519 key.
        package init(takingOwnership pointer: OpaquePointer) {
            self.pointer = pointer
        }

        deinit { EVP_PKEY_free(pointer) }

        /// A fresh key from OpenSSL's CSPRNG.
        package static func generate() throws(ResponseSignatureError) -> Key {
            guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nil) else { throw failure("EVP_PKEY_CTX_new_id") }
            defer { EVP_PKEY_CTX_free(context) }
            var key: OpaquePointer?
            guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_keygen(context, &key) == 1, let key else {
                throw failure("EVP_PKEY_keygen")
            }
            return Key(takingOwnership: key)
        }

        /// A public key from its 32 raw bytes.
        static func publicKey(raw: [UInt8]) -> Key? {
            guard raw.count == publicKeyLength else { return nil }
            let key = raw.withUnsafeBufferPointer { EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, $0.baseAddress, $0.count) }
            guard let key else {
                _ = drainOpenSSLErrors()
                return nil
            }
            return Key(takingOwnership: key)
        }

        /// A private key from its 32-byte seed.
        package static func privateKey(raw: [UInt8]) -> Key? {
            guard raw.count == privateKeyLength else { return nil }
            let key = raw.withUnsafeBufferPointer { EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, $0.baseAddress, $0.count) }
            guard let key else {
                _ = drainOpenSSLErrors()
                return nil
            }
            return Key(takingOwnership: key)
        }

        package var isEd25519: Bool { EVP_PKEY_get_base_id(pointer) == EVP_PKEY_ED25519 }

        /// The 32 raw public-key bytes (works on a private key too).
        package var rawPublicKey: [UInt8] {
            var bytes = [UInt8](repeating: 0, count: publicKeyLength)
            var length = bytes.count
            guard EVP_PKEY_get_raw_public_key(pointer, &bytes, &length) == 1, length == publicKeyLength else {
                _ = drainOpenSSLErrors()
                preconditionFailure("OpenSSL cannot export the public half of an Ed25519 key")
            }
            return bytes
        }

        /// A 64-byte Ed25519 signature of `message`.
        package func sign(_ message: [UInt8]) throws(ResponseSignatureError) -> [UInt8] {
            guard let context = EVP_MD_CTX_new() else { throw failure("EVP_MD_CTX_new") }
            defer { EVP_MD_CTX_free(context) }
            var signature = [UInt8](repeating: 0, count: signatureLength)
            var length = signature.count
            let ok = message.withUnsafeBufferPointer { input in
                EVP_DigestSignInit(context, nil, nil, nil, pointer) == 1
                    && EVP_DigestSign(context, &signature, &length, input.baseAddress, input.count) == 1
            }
            guard ok, length == signatureLength else { throw failure("EVP_DigestSign") }
            return signature
        }

        /// Whether `signature` is a valid Ed25519 signature of `message` under this key: the
        /// package's one verification primitive (`SignaturePublicKey`'s) does the check.
        func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
            guard signature.count == signatureLength else { return false }
            return EVPSignature.verify(key: pointer, digest: nil, signature: signature, message: message)
        }
    }

    /// `count` bytes from OpenSSL's CSPRNG.
    package static func randomBytes(_ count: Int) throws(ResponseSignatureError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        guard RAND_bytes(&bytes, Int32(count)) == 1 else { throw failure("RAND_bytes") }
        return bytes
    }

    static func failure(_ call: String) -> ResponseSignatureError {
        let errors = drainOpenSSLErrors()
        return ResponseSignatureError(.openSSLFailure, "\(call) failed" + (errors.isEmpty ? "." : ": " + errors.joined(separator: "; ")))
    }
}
