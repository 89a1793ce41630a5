internal import COpenSSL
internal import CServerTrustShims
internal import ServerTrust

extension HandshakeEvidence {
    /// What `ssl` has negotiated so far, gathered once per evaluation for every evaluator: the
    /// staple, the SCTs of the TLS extension, the protocol, cipher suite, group and ALPN.
    ///
    /// Called from the verify and status callbacks (mid-handshake: the ServerHello has been
    /// processed, so version, cipher and ALPN are known; a TLS 1.2 server's group arrives after
    /// its chain, so it is nil there) and from the connection guard (after the handshake).
    ///
    /// - Parameter signedCertificateTimestamps: whether the policy asked for SCTs
    ///   (`usesSignedCertificateTimestamps`); only then can the extension carry any, and only then
    ///   are they read (reading parses every SCT source OpenSSL knows, the leaf's extension too).
    init(ssl: OpaquePointer, signedCertificateTimestamps: Bool) {
        let version = SSL_version(ssl)
        let cipher = SSL_get_current_cipher(ssl) ?? SSL_get_pending_cipher(ssl)
        var alpn: UnsafePointer<UInt8>?
        var alpnLength: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &alpn, &alpnLength)
        self.init(
            stapledOCSPResponse: TLSBridge.stapledOCSPResponse(ssl),
            signedCertificateTimestamps: signedCertificateTimestamps ? Self.extensionSCTs(ssl) : [],
            protocolVersion: version > 0 && version <= Int32(UInt16.max) ? TLSProtocolVersion(wireValue: UInt16(version)) : nil,
            cipherSuite: cipher.flatMap { SSL_CIPHER_standard_name($0) }.map { String(cString: $0) },
            keyExchangeGroup: CServerTrustShims_SSL_negotiated_group_name(ssl).map { String(cString: $0) },
            applicationProtocol: alpn.flatMap { alpnLength > 0 ? String(decoding: UnsafeBufferPointer(start: $0, count: Int(alpnLength)), as: UTF8.self) : nil })
    }

    /// The SCTs the server sent in the TLS extension, each as `i2o_SCT` encodes it; OpenSSL
    /// collects them only when the context asked for them (``TLSBridge/configure(sslContext:for:)``).
    private static func extensionSCTs(_ ssl: OpaquePointer) -> [[UInt8]] {
        guard let stack = SSL_get0_peer_scts(ssl) else { return [] }
        let tlsExtension = sct_source_t(rawValue: UInt32(CServerTrustShims_SCT_SOURCE_TLS_EXTENSION()))
        return (0..<CServerTrustShims_sk_SCT_num(stack)).compactMap { index in
            guard let sct = CServerTrustShims_sk_SCT_value(stack, index), SCT_get_source(sct) == tlsExtension else { return nil }
            var encoded: UnsafeMutablePointer<UInt8>?
            let length = i2o_SCT(sct, &encoded)
            guard length > 0, let encoded else { return nil }
            defer { CRYPTO_free(encoded, #fileID, #line) }
            return Array(UnsafeBufferPointer(start: encoded, count: Int(length)))
        }
    }
}
