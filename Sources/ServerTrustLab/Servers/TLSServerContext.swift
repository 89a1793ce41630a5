import Foundation
internal import ServerTrust
internal import COpenSSL
internal import CServerTrustShims
internal import CServerTrustLabShims

/// Owns one server `SSL_CTX` built from an identity and the TLS settings of a configuration.
///
/// Thread safety: the `SSL_CTX` is fully configured in `init` and never changed afterwards;
/// OpenSSL allows `SSL_new` and handshakes on many threads over one configured `SSL_CTX`
/// (its session cache is locked internally). The staple is behind a lock (`Locked`). Hence
/// `@unchecked Sendable`.
package final class TLSServerContext: @unchecked Sendable {
    private let ctx: OpaquePointer
    private let staple: Locked<[UInt8]?>
    /// SHA-256 of the leaf presented.
    let leafFingerprint: [UInt8]

    /// Where client certificates are recorded when the server asks for them; nil: it does not ask.
    private let clientCertificates: ClientCertificateLog?

    /// - Parameters:
    ///   - sessionTickets, sessionCache: see ``LocalTLSServer/Configuration``.
    ///   - clientCertificates: ask every client for a certificate, accept whatever it sends (or
    ///     nothing), and record the subject of each one that arrives. Default nil: never ask.
    package init(
        identity: LocalTLSServer.Identity,
        versions: ClosedRange<LocalTLSServer.TLSVersion> = .v1_2 ... .v1_3,
        sessionTickets: Bool = true,
        sessionCache: Bool = true,
        stapledOCSPResponse: [UInt8]? = nil,
        clientCertificates: ClientCertificateLog? = nil
    ) throws {
        guard let leaf = identity.chain.first else { throw LocalServerError("The identity has no certificate.") }
        ERR_clear_error()
        guard let ctx = SSL_CTX_new(TLS_server_method()) else { throw LocalServerError.openSSL("SSL_CTX_new") }
        self.ctx = ctx
        staple = Locked(stapledOCSPResponse)
        leafFingerprint = leaf.sha256Fingerprint
        self.clientCertificates = clientCertificates
        try Self.install(identity, in: ctx)
        if let clientCertificates {
            // Runs when a client's Certificate message arrives, with the log the context keeps
            // alive; accepts anything, since the tests ask whether a certificate was sent at all.
            SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nil)
            SSL_CTX_set_cert_verify_callback(ctx, { store, argument in
                guard let store, let argument else { return 1 }
                let log = Unmanaged<ClientCertificateLog>.fromOpaque(argument).takeUnretainedValue()
                if let certificate = X509_STORE_CTX_get0_cert(store), let name = X509_NAME_oneline(X509_get_subject_name(certificate), nil, 0) {
                    log.record(String(cString: name))
                    CRYPTO_free(name, #fileID, #line)
                }
                return 1
            }, Unmanaged.passUnretained(clientCertificates).toOpaque())
        }

        guard CServerTrustLabShims_SSL_CTX_set_min_proto_version(ctx, versions.lowerBound.openSSLVersion) == 1,
              CServerTrustLabShims_SSL_CTX_set_max_proto_version(ctx, versions.upperBound.openSSLVersion) == 1 else {
            throw LocalServerError.openSSL("Setting the TLS versions")
        }
        let context = Array("ServerTrustLab".utf8)
        _ = SSL_CTX_set_session_id_context(ctx, context, UInt32(context.count))
        _ = CServerTrustLabShims_SSL_CTX_set_session_cache_mode(
            ctx, sessionCache ? Int(SSL_SESS_CACHE_SERVER) : Int(SSL_SESS_CACHE_OFF))
        if !sessionTickets {
            // TLS 1.3 then issues stateful tickets naming a cache entry, or none without a cache.
            _ = CServerTrustShims_SSL_CTX_set_options(ctx, CServerTrustLabShims_SSL_OP_NO_TICKET())
            if !sessionCache { _ = CServerTrustLabShims_SSL_CTX_set_num_tickets(ctx, 0) }
        }

        SSL_CTX_set_alpn_select_cb(ctx, { _, selected, selectedLength, offered, offeredLength, _ in
            // Walk the client's length-prefixed list; answer with a pointer into it.
            guard let selected, let selectedLength, let offered else { return SSL_TLSEXT_ERR_NOACK }
            let wanted = Array("http/1.1".utf8)
            var index = 0
            while index < Int(offeredLength) {
                let length = Int(offered[index])
                let start = index + 1
                guard start + length <= Int(offeredLength) else { break }
                if length == wanted.count, (0..<length).allSatisfy({ offered[start + $0] == wanted[$0] }) {
                    selected.pointee = offered + start
                    selectedLength.pointee = UInt8(length)
                    return SSL_TLSEXT_ERR_OK
                }
                index = start + length
            }
            return SSL_TLSEXT_ERR_NOACK
        }, nil)

        // Runs only for clients that sent status_request. The context outlives its SSL_CTX's
        // handshakes: every connection holds the context while its SSL* exists.
        _ = CServerTrustShims_SSL_CTX_set_tlsext_status_arg(ctx, Unmanaged.passUnretained(self).toOpaque())
        _ = CServerTrustShims_SSL_CTX_set_tlsext_status_cb(ctx) { ssl, argument in
            guard let ssl, let argument else { return SSL_TLSEXT_ERR_NOACK }
            let context = Unmanaged<TLSServerContext>.fromOpaque(argument).takeUnretainedValue()
            guard let response = context.staple.withLock({ $0 }), !response.isEmpty else { return SSL_TLSEXT_ERR_NOACK }
            // OpenSSL takes ownership and frees it with OPENSSL_free.
            guard let copy = CRYPTO_malloc(response.count, #fileID, #line) else { return SSL_TLSEXT_ERR_ALERT_FATAL }
            response.withUnsafeBytes { copy.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            let bytes = copy.assumingMemoryBound(to: UInt8.self)
            guard CServerTrustLabShims_SSL_set_tlsext_status_ocsp_resp(ssl, bytes, response.count) == 1 else {
                CRYPTO_free(copy, #fileID, #line)
                return SSL_TLSEXT_ERR_ALERT_FATAL
            }
            return SSL_TLSEXT_ERR_OK
        }
    }

    deinit { SSL_CTX_free(ctx) }

    /// Replaces the OCSP response stapled to later handshakes.
    func setStapledOCSPResponse(_ response: [UInt8]?) {
        staple.withLock { $0 = response }
    }

    /// A new server `SSL*` on `fd`, owned by the caller (`SSL_free`).
    package func makeSSL(fd: Int32) -> OpaquePointer? {
        guard let ssl = SSL_new(ctx) else { return nil }
        SSL_set_fd(ssl, fd)
        return ssl
    }

    private static func install(_ identity: LocalTLSServer.Identity, in ctx: OpaquePointer) throws {
        let certificates = try identity.chain.map { certificate in
            let der = certificate.derEncoded
            let x509: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
                var cursor = buffer.baseAddress
                return d2i_X509(nil, &cursor, buffer.count)
            }
            guard let x509 else { throw LocalServerError.openSSL("Re-parsing \(certificate.subject)") }
            return x509
        }
        defer { certificates.forEach { X509_free($0) } }
        let key: OpaquePointer? = identity.privateKeyPEM.utf8CString.withUnsafeBufferPointer { text in
            guard let bio = BIO_new_mem_buf(text.baseAddress, Int32(text.count - 1)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let key else { throw LocalServerError.openSSL("The private key PEM does not parse") }
        defer { EVP_PKEY_free(key) }
        guard let stack = CServerTrustShims_sk_X509_new_null() else { throw LocalServerError.openSSL("sk_X509_new_null") }
        defer { CServerTrustShims_sk_X509_free(stack) }
        for certificate in certificates.dropFirst() { _ = CServerTrustShims_sk_X509_push(stack, certificate) }
        // Up-refs what it keeps; sends the chain as given, never one built from a store.
        guard SSL_CTX_use_cert_and_key(ctx, certificates[0], key, stack, 1) == 1 else {
            throw LocalServerError.openSSL("The key does not match the leaf certificate, or OpenSSL refused them")
        }
    }
}

/// The subjects (`X509_NAME_oneline` form, `/O=…/CN=…`) of the client certificates a server
/// received, in arrival order, including those of handshakes that failed afterwards.
package final class ClientCertificateLog: Sendable {
    private let subjects = Locked<[String]>([])
    package init() {}
    package func record(_ subject: String) { subjects.withLock { $0.append(subject) } }
    package var all: [String] { subjects.withLock { $0 } }
}
