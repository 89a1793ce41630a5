import Foundation
internal import COpenSSL
internal import ServerTrustLab
internal import CServerTrustTestShims
internal import CServerTrustLabShims

/// Owns one client `SSL_CTX` that accepts any server certificate and offers `http/1.1`: the
/// intercepting proxy's way to the real origin (an attacker does not verify it either).
///
/// Thread safety: configured in `init`, never changed; OpenSSL allows `SSL_new` on many threads
/// over a configured `SSL_CTX`. Hence `@unchecked Sendable`.
final class TLSClientContext: @unchecked Sendable {
    private let ctx: OpaquePointer

    init() throws {
        ERR_clear_error()
        guard let ctx = SSL_CTX_new(TLS_client_method()) else { throw LocalServerError.openSSL("SSL_CTX_new") }
        self.ctx = ctx
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nil)
        _ = CServerTrustLabShims_SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION)
        let protocols: [UInt8] = [8] + Array("http/1.1".utf8)
        guard SSL_CTX_set_alpn_protos(ctx, protocols, UInt32(protocols.count)) == 0 else {
            throw LocalServerError.openSSL("SSL_CTX_set_alpn_protos")
        }
    }

    deinit { SSL_CTX_free(ctx) }

    /// A client `SSL*` on `fd` sending SNI `serverName` (unless it is an IP address), owned by
    /// the caller (`SSL_free`).
    func makeSSL(fd: Int32, serverName: String) -> OpaquePointer? {
        guard let ssl = SSL_new(ctx) else { return nil }
        SSL_set_fd(ssl, fd)
        var address = in6_addr()
        let isAddress = inet_pton(AF_INET, serverName, &address) == 1 || inet_pton(AF_INET6, serverName, &address) == 1
        if !isAddress { _ = CServerTrustTestShims_SSL_set_tlsext_host_name(ssl, serverName) }
        return ssl
    }
}
