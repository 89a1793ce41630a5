internal import COpenSSL
import ServerTrust

/// What the OpenSSL the tests run on does by default, where the supported stacks differ: Debian
/// 12 (OpenSSL 3.0) and Debian 13 (OpenSSL 3.5). Tests assert each stack's documented outcome
/// through these, never a test loosened to accept either.
public enum OpenSSLDefaults {
    /// `OpenSSL_version_num()`: the run-time library's version, `0xMNN00PP0`.
    public static let versionNumber = UInt(OpenSSL_version_num())

    /// The group a TLS 1.3 handshake between two OpenSSL peers with default group lists
    /// negotiates: `X25519MLKEM768` (ML-KEM-768 with X25519, post-quantum hybrid) from OpenSSL
    /// 3.5, whose default list puts it first; `X25519` before.
    public static var tls13KeyExchangeGroup: String { KeyExchangeRequirement.isAvailable ? "X25519MLKEM768" : "X25519" }
}
