/// A pointer to an OpenSSL object whose struct may be opaque: one source for OpenSSL 3 and 4.
///
/// OpenSSL 4.0 makes `ASN1_STRING`, `ASN1_TIME` and the other ASN.1 string types opaque, so a
/// pointer to one imports as `OpaquePointer` where OpenSSL 3's headers imported
/// `UnsafeMutablePointer<ASN1_STRING>`. Code that must name such a pointer's type — a stored
/// value, a parameter, an out-parameter — holds it generically or as a raw pointer instead, and
/// converts it at each call with ``openSSLPointer(_:)``, the type inferred from the function
/// called. Pointers that are opaque in both (`X509 *`, `EVP_PKEY *`) need none of this.
package protocol OpenSSLObjectPointer {
    static func fromOpenSSLRaw(_ raw: UnsafeMutableRawPointer) -> Self
    var openSSLRaw: UnsafeMutableRawPointer { get }
}

extension OpaquePointer: OpenSSLObjectPointer {
    package static func fromOpenSSLRaw(_ raw: UnsafeMutableRawPointer) -> Self { Self(raw) }
    package var openSSLRaw: UnsafeMutableRawPointer { UnsafeMutableRawPointer(self) }
}

extension UnsafeMutablePointer: OpenSSLObjectPointer {
    package static func fromOpenSSLRaw(_ raw: UnsafeMutableRawPointer) -> Self { raw.assumingMemoryBound(to: Pointee.self) }
    package var openSSLRaw: UnsafeMutableRawPointer { UnsafeMutableRawPointer(self) }
}

extension UnsafePointer: OpenSSLObjectPointer {
    package static func fromOpenSSLRaw(_ raw: UnsafeMutableRawPointer) -> Self { Self(raw.assumingMemoryBound(to: Pointee.self)) }
    package var openSSLRaw: UnsafeMutableRawPointer { UnsafeMutableRawPointer(mutating: self) }
}

extension UnsafeRawPointer: OpenSSLObjectPointer {
    package static func fromOpenSSLRaw(_ raw: UnsafeMutableRawPointer) -> Self { Self(raw) }
    package var openSSLRaw: UnsafeMutableRawPointer { UnsafeMutableRawPointer(mutating: self) }
}

/// `raw` as the pointer type the OpenSSL function it is passed to takes.
package func openSSLPointer<T: OpenSSLObjectPointer>(_ raw: UnsafeMutableRawPointer) -> T { T.fromOpenSSLRaw(raw) }
