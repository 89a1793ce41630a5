internal import COpenSSL
internal import CServerTrustShims
internal import ServerTrust

/// Client certificates (mutual TLS) on the TLS bridge: ``TLSBridge/configure(sslContext:for:)``
/// installs the policy's `ClientIdentity` on each new connection's `SSL_CTX`.
extension TLSBridge {
    /// Installs `identity` on a throwaway client `SSL_CTX`, as ``configure(sslContext:for:)``
    /// will on every connection, so what OpenSSL refuses there (a key below the security level,
    /// found only by installing it) is refused when the session is created, not as curl error 42 on
    /// every request to the host.
    ///
    /// - Returns: OpenSSL's reasons when it refuses, nil when the identity installs.
    static func installationProblems(_ identity: ClientIdentity) -> [String]? {
        ERR_clear_error()
        guard let ctx = SSL_CTX_new(TLS_client_method()) else { return openSSLErrors() }
        defer { SSL_CTX_free(ctx) }
        return install(identity, on: ctx) ? nil : openSSLErrors()
    }

    /// OpenSSL's error queue, drained, oldest first.
    private static func openSSLErrors() -> [String] {
        var messages: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages
    }

    /// Puts the policy's client certificate, intermediates and key on the connection's `SSL_CTX`,
    /// from the objects in memory (never a file). The `SSL_CTX` is this connection's alone and
    /// the policy this host's alone, so no other host's connection ever carries the identity.
    /// A failure fails the connection: a request that needs the identity never goes out without it.
    static func install(_ identity: ClientIdentity, on ctx: OpaquePointer) -> Bool {
        identity.withUnsafeOpenSSLObjects { certificate, intermediates, key in
            guard let chain = CServerTrustShims_sk_X509_new_null() else { return false }
            defer { CServerTrustShims_sk_X509_free(chain) }  // the SSL_CTX up-refs what it keeps
            for intermediate in intermediates where CServerTrustShims_sk_X509_push(chain, intermediate) <= 0 { return false }
            return SSL_CTX_use_cert_and_key(ctx, certificate, key, chain, 1) == 1
        }
    }
}
