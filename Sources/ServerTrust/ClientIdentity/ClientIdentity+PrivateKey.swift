import Foundation
internal import COpenSSL

extension ClientIdentity {
    /// Parses the one PEM private key block in `pem`, decrypting it with `passphrase`.
    ///
    /// The block is located here rather than by OpenSSL so that the failures can be told apart
    /// before OpenSSL is asked: no key block at all, two keys, or an encrypted key
    /// (`ENCRYPTED PRIVATE KEY`, or a legacy block with `Proc-Type: 4,ENCRYPTED`) without a
    /// passphrase. OpenSSL is then handed that block only, with a callback that never prompts on
    /// the terminal (OpenSSL's default callback would).
    static func parsePrivateKey(pem: [UInt8], passphrase: String?, source: String) throws -> OpaquePointer {
        let blocks = PrivateKeyPEMBlock.all(in: pem)
        guard let block = blocks.first else {
            throw TrustError(
                .malformedPrivateKey,
                "\(source) holds no PEM private key (\"-----BEGIN PRIVATE KEY-----\" or similar); convert a DER key with `openssl pkey -inform der -in KEY -out KEY.pem`.")
        }
        guard blocks.count == 1 else {
            throw TrustError(.malformedPrivateKey, "\(source) holds \(blocks.count) private keys; keep only the client certificate's key.")
        }
        if block.isEncrypted && passphrase == nil {
            throw TrustError(
                .privateKeyPassphraseRequired,
                "The private key in \(source) is encrypted (\(block.label)); give its passphrase.")
        }
        clearOpenSSLErrors()
        let key = pem[block.range].withUnsafeBytes { raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return withPassphrase(passphrase) { PEM_read_bio_PrivateKey(bio, nil, passphraseCallback, $0) }
        }
        guard let key else {
            var evidence = TrustError.Evidence()
            evidence.openSSLErrors = drainOpenSSLErrors()
            if block.isEncrypted {
                throw TrustError(
                    .privateKeyPassphraseIncorrect, "The passphrase does not decrypt the private key in \(source).", evidence: evidence)
            }
            throw TrustError(.malformedPrivateKey, "OpenSSL cannot parse the \(block.label) in \(source).", evidence: evidence)
        }
        return key
    }

    /// Calls `body` with the passphrase as a NUL-terminated C string, or nil, then wipes the copy.
    static func withPassphrase<Result>(_ passphrase: String?, _ body: (UnsafeMutableRawPointer?) -> Result) -> Result {
        guard let passphrase else { return body(nil) }
        var bytes = Array(passphrase.utf8CString)
        defer { wipe(&bytes) }
        return bytes.withUnsafeMutableBytes { body($0.baseAddress) }
    }

    /// OpenSSL's `pem_password_cb`: copies the passphrase `withPassphrase` passed as `user`, and
    /// fails (never prompts) when there is none.
    static let passphraseCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?) -> Int32 = {
        buffer, size, _, user in
        guard let buffer, let user else { return -1 }
        let passphrase = user.assumingMemoryBound(to: CChar.self)
        let length = strlen(passphrase)
        guard length <= Int(size) else { return -1 }
        memcpy(buffer, passphrase, length)
        return Int32(length)
    }
}

/// Where a PEM private key block sits in a file, found without decoding anything.
struct PrivateKeyPEMBlock {
    /// From `-----BEGIN` to the end of the `-----END …-----` line.
    let range: Range<Int>
    /// `PRIVATE KEY`, `ENCRYPTED PRIVATE KEY`, `RSA PRIVATE KEY`, `EC PRIVATE KEY`…
    let label: String
    let isEncrypted: Bool

    private static let begin = Array("-----BEGIN ".utf8)
    private static let dashes = Array("-----".utf8)
    private static let legacyEncryptionHeader = Array("Proc-Type: 4,ENCRYPTED".utf8)

    /// Every complete block whose label ends in `PRIVATE KEY`, in order.
    static func all(in bytes: [UInt8]) -> [PrivateKeyPEMBlock] {
        var blocks: [PrivateKeyPEMBlock] = []
        var position = 0
        while let start = bytes[position...].firstRange(of: begin) {
            guard let labelEnd = bytes[start.upperBound...].firstRange(of: dashes) else { break }
            let label = String(decoding: bytes[start.upperBound..<labelEnd.lowerBound], as: UTF8.self)
            position = labelEnd.upperBound
            guard label.hasSuffix("PRIVATE KEY"), !label.contains("\n") else { continue }
            let end = Array("-----END \(label)-----".utf8)
            guard let endRange = bytes[position...].firstRange(of: end) else { break }
            let body = bytes[position..<endRange.lowerBound]
            let encrypted = label == "ENCRYPTED PRIVATE KEY" || body.firstRange(of: legacyEncryptionHeader) != nil
            blocks.append(PrivateKeyPEMBlock(range: start.lowerBound..<endRange.upperBound, label: label, isEncrypted: encrypted))
            position = endRange.upperBound
        }
        return blocks
    }
}

/// Reads a file holding secret material into one buffer sized up front, so no reallocation
/// leaves a copy behind; the caller wipes it.
func readSecretFile(_ path: String) throws -> [UInt8] {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else {
        throw TrustError(.unreadableInput, "Cannot open \(path): \(String(cString: strerror(errno))).")
    }
    defer { close(descriptor) }
    var status = stat()
    guard fstat(descriptor, &status) == 0, status.st_size <= 1 << 20 else {
        throw TrustError(.unreadableInput, "Cannot read \(path): not a regular file of at most 1 MiB.")
    }
    var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
    var filled = 0
    while filled < bytes.count {
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + filled, $0.count - filled) }
        if count < 0 && errno == EINTR { continue }
        guard count >= 0 else {
            wipe(&bytes)
            throw TrustError(.unreadableInput, "Cannot read \(path): \(String(cString: strerror(errno))).")
        }
        if count == 0 { break }
        filled += count
    }
    bytes.removeLast(bytes.count - filled)  // in place: a copy would leave the original unwiped
    return bytes
}

/// Overwrites secret bytes in place, in a way the optimiser cannot drop.
func wipe<Element>(_ bytes: inout [Element]) {
    bytes.withUnsafeMutableBytes { raw in
        if let base = raw.baseAddress { OPENSSL_cleanse(base, raw.count) }
    }
}
