internal import COpenSSL

/// Reads the first unencrypted PEM private key of a text: the one reader `SigningKey` (v1) and
/// `SignaturePrivateKey` (RFC 9421) share.
package enum PrivateKeyPEM {
    package enum Failure: Error {
        /// The text is over 1 MiB.
        case tooLarge
        /// No unencrypted private key could be read (none, encrypted, or garbled).
        case unreadable
    }

    /// The key as an owned `EVP_PKEY*`; the caller frees it. Other PEM blocks around it are
    /// skipped; an encrypted key fails instead of prompting on the terminal.
    package static func read(_ pem: String) throws(Failure) -> OpaquePointer {
        let bytes = Array(pem.utf8)
        guard bytes.count <= 1 << 20 else { throw .tooLarge }
        let parsed: OpaquePointer? = bytes.withUnsafeBytes { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            // A password callback that refuses (OpenSSL's default one would prompt).
            return PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in -1 }, nil)
        }
        guard let parsed else {
            _ = drainOpenSSLErrors()
            throw .unreadable
        }
        return parsed
    }
}
