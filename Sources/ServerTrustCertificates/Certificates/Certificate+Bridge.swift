extension Certificate {
    /// Wraps an `X509*` that another module (the TLS bridge) borrowed from OpenSSL, taking a
    /// reference of its own, so the certificate can outlive the handshake that produced it.
    ///
    /// Package access: a raw OpenSSL pointer is not part of the public API.
    package convenience init(borrowingX509 pointer: OpaquePointer) {
        self.init(borrowing: pointer)
    }
}
