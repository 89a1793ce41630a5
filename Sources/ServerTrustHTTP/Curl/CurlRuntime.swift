internal import CCurl
internal import CServerTrustCurlShims
import ServerTrust

/// Process-wide libcurl facts, checked once.
public enum CurlRuntime {
    /// libcurl's version string, e.g. `7.88.1`.
    public static var libcurlVersion: String {
        guard let info = CServerTrustCurlShims_version_info(), let version = info.pointee.version else { return "unknown" }
        return String(cString: version)
    }

    /// libcurl's version as `curl_version_info` gives it, `0xXXYYZZ` (`0x080e01` for 8.14.1): where
    /// libcurl versions behave differently, the code and the tests ask this.
    package static var libcurlVersionNumber: UInt32 { CServerTrustCurlShims_version_info()?.pointee.version_num ?? 0 }

    /// The TLS backend libcurl was built with, e.g. `OpenSSL/3.0.19`.
    public static var tlsBackend: String {
        guard let info = CServerTrustCurlShims_version_info(), let ssl = info.pointee.ssl_version else { return "none" }
        return String(cString: ssl)
    }

    /// Whether libcurl was built with zlib (gzip and deflate content decoding).
    static var hasZlib: Bool { hasFeature(Int32(CURL_VERSION_LIBZ)) }
    /// Whether libcurl was built with Brotli (`br` content decoding).
    static var hasBrotli: Bool { hasFeature(Int32(CURL_VERSION_BROTLI)) }
    /// Whether libcurl was built with zstd (`zstd` content decoding).
    static var hasZstd: Bool { hasFeature(Int32(CURL_VERSION_ZSTD)) }

    /// `curl_version_info`'s feature bits, read once (the library does not change under us).
    private static let features: Int32 = CServerTrustCurlShims_version_info()?.pointee.features ?? 0

    private static func hasFeature(_ bit: Int32) -> Bool { features & bit != 0 }

    /// Fails unless libcurl's TLS backend is OpenSSL: our verify callback is installed on an
    /// OpenSSL `SSL_CTX`, and with another backend it would never run — pinning would be off.
    static func requireOpenSSLBackend() throws(TrustError) {
        let backend = tlsBackend
        guard backend.hasPrefix("OpenSSL/") else {
            throw TrustError(
                .invalidConfiguration,
                "libcurl uses the TLS backend \"\(backend)\", not OpenSSL; ServerTrust cannot enforce trust through it. Install the OpenSSL flavour (libcurl4-openssl-dev / libcurl4).")
        }
    }
}
