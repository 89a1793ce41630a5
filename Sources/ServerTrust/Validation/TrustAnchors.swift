import Foundation

/// The certificates a policy trusts as the ends of chains, with the store built from them.
///
/// Anchors are honoured as given: an anchor need not be self-signed (partial-chain
/// semantics), so pinning an intermediate as an anchor works as expected. The `X509_STORE` is
/// built once, here, and shared by every evaluation that uses these anchors.
public final class TrustAnchors: Sendable {
    /// The anchor certificates.
    public var certificates: [Certificate] { store.anchors }
    /// CRLs checked for every certificate of the chain during path validation, if any.
    public var revocationLists: [CertificateRevocationList] { store.revocationLists }
    /// Where the anchors came from, for messages: a file path, "system" or "in-memory".
    public let origin: String

    let store: X509TrustStore

    /// Anchors from certificates, with optional CRLs.
    ///
    /// - Parameters:
    ///   - certificates: the anchors; must not be empty.
    ///   - revocationLists: CRLs to check every certificate of the chain against. When any are
    ///     given, a certificate whose issuer has no CRL here fails validation (CRL checking is
    ///     all-or-nothing, as in `openssl verify -crl_check_all`).
    ///
    ///     This is the path-level CRL engine (OpenSSL's `X509_V_FLAG_CRL_CHECK_ALL`): it gives
    ///     no per-certificate status, only a chain that validates or not, but it is the one
    ///     that implements all of RFC 5280 §6.3 — indirect CRLs, CRLs signed by another key of
    ///     the CA, reason partitions — which `CRLVerifier` does not; `servertrust verify --crl`
    ///     and the PKITS score rely on it (<doc:RevocationBehaviour>, "Two CRL engines").
    ///
    ///     Cost: a chain whose every certificate one complete, direct CRL of its issuer shows
    ///     unrevoked is accepted at constant cost — the CRLs are read once here, each signature is
    ///     verified once, and a serial is a binary search, `CRLVerifier`'s lookup — because
    ///     OpenSSL would give the same verdict. Everything else (a revoked certificate, a missing
    ///     or stale CRL, delta and indirect CRLs, reason partitions) is OpenSSL's to decide, and
    ///     OpenSSL verifies every CRL's signature again on each such validation (about 17 ms
    ///     with 1,000,000 entries). A store with CRLs keeps no validated-chain cache.
    ///   - origin: where the anchors came from, shown in messages (``origin``). Default
    ///     "in-memory".
    /// - Throws: `TrustError.Code.invalidConfiguration` for an empty list.
    public init(
        _ certificates: [Certificate],
        revocationLists: [CertificateRevocationList] = [],
        origin: String = "in-memory"
    ) throws {
        guard !certificates.isEmpty else {
            throw TrustError(.invalidConfiguration, "A trust anchor set needs at least one certificate.")
        }
        store = try X509TrustStore(anchors: certificates, revocationLists: revocationLists)
        self.origin = origin
    }

    /// Anchors read from a PEM bundle or DER file.
    public convenience init(contentsOfFile path: String, revocationLists: [CertificateRevocationList] = []) throws {
        try self.init(Certificate.certificates(contentsOfFile: path), revocationLists: revocationLists, origin: path)
    }

    /// Files where Linux distributions keep the system CA bundle, in the order tried.
    package static let systemBundlePaths = [
        "/etc/ssl/certs/ca-certificates.crt",  // Debian, Ubuntu, Alpine
        "/etc/pki/tls/certs/ca-bundle.crt",  // Fedora, RHEL
        "/etc/ssl/ca-bundle.pem",  // openSUSE
        "/etc/ssl/cert.pem",
    ]

    private static let systemAnchors = Locked<TrustAnchors?>(nil)

    /// The system CA bundle, loaded once per process and shared.
    ///
    /// - Throws: `TrustError.Code.unreadableInput` when no bundle is found.
    // Fast path: docs/PERFORMANCE.md#fast-paths, "System CA bundle loaded once".
    public static func system() throws -> TrustAnchors {
        try systemAnchors.withLock { cached in
            if let cached { return cached }
            for path in systemBundlePaths where FileManager.default.isReadableFile(atPath: path) {
                let anchors = try TrustAnchors(contentsOfFile: path)
                cached = anchors
                return anchors
            }
            throw TrustError(
                .unreadableInput,
                "No system CA bundle found (looked in \(systemBundlePaths.joined(separator: ", "))); install ca-certificates or pass anchors explicitly.")
        }
    }
}
