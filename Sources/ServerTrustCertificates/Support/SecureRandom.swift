internal import COpenSSL

/// Bytes from OpenSSL's CSPRNG: v1 salts and nonces, RFC 9421 nonces.
package enum SecureRandom {
    /// `count` random bytes.
    /// - Throws: `ResponseSignatureError.Code.openSSLFailure` when `RAND_bytes` fails.
    package static func bytes(_ count: Int) throws(ResponseSignatureError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        guard RAND_bytes(&bytes, Int32(count)) == 1 else {
            let errors = drainOpenSSLErrors()
            throw ResponseSignatureError(.openSSLFailure, "RAND_bytes failed" + (errors.isEmpty ? "." : ": " + errors.joined(separator: "; ")))
        }
        return bytes
    }
}
