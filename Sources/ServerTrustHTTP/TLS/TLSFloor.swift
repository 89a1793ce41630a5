internal import COpenSSL
internal import CServerTrustShims
internal import ServerTrust

/// The least every TLS connection ServerTrust configures accepts: TLS 1.2 and OpenSSL security
/// level 2, whatever the environment says.
///
/// libcurl 7.88 loads `OPENSSL_CONF` when it initialises OpenSSL, so a configuration file the
/// process did not choose can lower OpenSSL's defaults (`MinProtocol = TLSv1`,
/// `CipherString = DEFAULT@SECLEVEL=0`): the third security review connected to a TLS 1.0
/// server that way. Each `SSL_CTX` is raised to this floor in its `CURLOPT_SSL_CTX_FUNCTION`
/// callback — the session's connections and the revocation fetcher's — after libcurl and the
/// configuration file have set theirs, so it holds whichever of them ran first. A floor that
/// is already higher (a configuration asking for TLS 1.3) is kept.
enum TLSFloor {
    /// The lowest protocol version: TLS 1.2.
    static let minimumProtocolVersion = TLS1_2_VERSION
    /// The lowest OpenSSL security level: 2 (112-bit security: RSA and DH of 2048 bits or more,
    /// no SHA-1 signatures, no RC4 or 3DES).
    static let minimumSecurityLevel: Int32 = 2

    /// How the protocol floor is named in errors.
    static let minimumProtocolName = "TLS 1.2"

    /// Raises `ctx` to the floor, or to a host policy's higher one (`HostPolicy.minimumTLSVersion`);
    /// `false` when OpenSSL refused (the caller fails the connection).
    static func apply(to ctx: OpaquePointer, minimum: TLSProtocolVersion = .tls12) -> Bool {
        let floor = max(minimumProtocolVersion, Int32(minimum.wireValue))
        let current = CServerTrustShims_SSL_CTX_get_min_proto_version(ctx)
        // 0 means "the lowest this OpenSSL supports".
        if current == 0 || current < floor {
            guard CServerTrustShims_SSL_CTX_set_min_proto_version(ctx, floor) == 1 else { return false }
        }
        if SSL_CTX_get_security_level(ctx) < minimumSecurityLevel {
            SSL_CTX_set_security_level(ctx, minimumSecurityLevel)
        }
        return true
    }

    /// Whether a failed handshake's OpenSSL message says the server offered no protocol
    /// version at or above the floor: it answered with a `protocol_version` alert, or chose a
    /// version below it.
    static func isProtocolVersionRefusal(_ message: String) -> Bool {
        message.contains("alert protocol version") || message.contains("unsupported protocol")
    }
}
