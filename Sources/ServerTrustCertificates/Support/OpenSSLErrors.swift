internal import COpenSSL
internal import CServerTrustShims

/// Drains OpenSSL's thread-local error queue into readable strings (oldest first).
///
/// Every failing OpenSSL call we make is followed by this, so a stale entry can never be
/// mistaken for the cause of a later failure.
package func drainOpenSSLErrors() -> [String] {
    var messages: [String] = []
    while true {
        let code = ERR_get_error()
        if code == 0 { break }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        if messages.count < 8 { messages.append(decodeCString(buffer)) }
    }
    return messages
}

/// Clears OpenSSL's error queue before a call whose failure we want to attribute precisely.
package func clearOpenSSLErrors() { ERR_clear_error() }

/// Reads the contents of a memory BIO.
func bioContents(_ bio: OpaquePointer) -> [UInt8] {
    var data: UnsafeMutablePointer<CChar>?
    let length = CServerTrustShims_BIO_get_mem_data(bio, &data)
    guard let data, length > 0 else { return [] }
    return data.withMemoryRebound(to: UInt8.self, capacity: length) {
        Array(UnsafeBufferPointer(start: $0, count: length))
    }
}

/// Runs `body` with a memory BIO and returns what it wrote, or nil if it failed.
package func withMemoryBIO(_ body: (OpaquePointer) -> Bool) -> [UInt8]? {
    guard let bio = BIO_new(BIO_s_mem()) else { return nil }
    defer { BIO_free(bio) }
    guard body(bio) else { return nil }
    return bioContents(bio)
}

/// SHA-256 over bytes.
package func sha256(_ bytes: [UInt8]) -> [UInt8] {
    var digest = [UInt8](repeating: 0, count: 32)
    bytes.withUnsafeBufferPointer { input in
        _ = SHA256(input.baseAddress, input.count, &digest)
    }
    return digest
}

/// SHA-1 over bytes: only where a format fixes it (an App Store receipt's device hash and the
/// messageDigest of receipts signed before 2023), never to decide trust on its own.
package func sha1(_ bytes: [UInt8]) -> [UInt8] {
    var digest = [UInt8](repeating: 0, count: 20)
    bytes.withUnsafeBufferPointer { input in
        _ = SHA1(input.baseAddress, input.count, &digest)
    }
    return digest
}

/// The text of a NUL-terminated C buffer.
package func decodeCString(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
