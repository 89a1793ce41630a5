internal import COpenSSL
import ServerTrustLab

extension LabKey {
    /// A detached signature over `message`: ECDSA (DER) or RSA PKCS#1 v1.5 with SHA-256, or
    /// Ed25519 — what CT logs sign SCTs with and log lists are signed with.
    func signature(over message: [UInt8]) throws -> [UInt8] {
        let context = try check(EVP_MD_CTX_new(), "EVP_MD_CTX_new")
        defer { EVP_MD_CTX_free(context) }
        try check(EVP_DigestSignInit(context, nil, signingDigest, nil, pkey), "EVP_DigestSignInit")
        var length = 0
        try check(EVP_DigestSign(context, nil, &length, message, message.count), "EVP_DigestSign (length)")
        var signature = [UInt8](repeating: 0, count: length)
        try check(EVP_DigestSign(context, &signature, &length, message, message.count), "EVP_DigestSign")
        return Array(signature.prefix(length))
    }
}

/// SHA-256 of `bytes`.
func sha256(_ bytes: [UInt8]) -> [UInt8] {
    var digest = [UInt8](repeating: 0, count: 32)
    var length: UInt32 = 0
    guard EVP_Digest(bytes, bytes.count, &digest, &length, EVP_sha256(), nil) == 1, length == 32 else {
        preconditionFailure("OpenSSL cannot compute SHA-256")
    }
    return digest
}
