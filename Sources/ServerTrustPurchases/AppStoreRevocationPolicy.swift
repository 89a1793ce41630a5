public import ServerTrust

/// Whether, and how, the revocation of the App Store's signing chain is checked: the leaf that
/// signed and the intermediate (Apple WWDR) above it, never the root, which is trusted by
/// configuration.
///
/// Checking goes through ServerTrust's revocation machinery, the one TLS connections use: the
/// CRLs given here, the `RevocationCache` (shared with TLS by default), then live OCSP (with a
/// nonce when `RevocationOptions/ocspNonce` is set) and the certificates' CRL distribution
/// points through the `RevocationFetcher` — ServerTrustHTTP's `CurlRevocationFetcher`, or
/// one of the application's — one flight per certificate across concurrent verifications,
/// within `RevocationOptions/timeBudget`. Then:
///
/// - a certificate that is **revoked** refuses the data
///   (``PurchaseVerificationError/Code/revoked``), in every mode and whatever its signing date;
/// - an **unknown** status (no responder answered, the budget ran out, an answer did not
///   verify) refuses it with ``PurchaseVerificationError/Code/revocationUnknown``, a retryable
///   refusal, under `RevocationOptions/requirePositiveResponse` (hard-fail), and is accepted
///   otherwise (soft-fail) — except for data whose chain has expired since it was signed, which
///   a verified answer must cover (<doc:VerifyingAppStorePurchases>);
/// - a certificate that names neither an OCSP responder nor a CRL distribution point has
///   nothing to check: its status is unknown (`noResponderURL`), accepted in soft-fail, refused
///   in hard-fail. Apple's production leaf and WWDR intermediate name both.
///
/// `RevocationOptions/scope` is not read: the chain is always checked whole. The presets and
/// the initializer's default options ask in SHA-256 CertIDs
/// (`RevocationOptions/OCSPCertificateIDHash/sha256`), with SHA-1 from a responder that
/// refuses them; they send no nonce, which a responder serving pre-produced answers would not
/// echo — set `RevocationOptions/ocspNonce` for one that does.
public struct AppStoreRevocationPolicy: Sendable {
    /// Nothing checked: for offline material, or a caller that checks elsewhere.
    public static let disabled = AppStoreRevocationPolicy(mode: nil)

    let mode: Mode?

    struct Mode: Sendable {
        let options: RevocationOptions
        let fetcher: (any RevocationFetcher)?
        let cache: RevocationCache
        let revocationLists: [CertificateRevocationList]
    }

    private init(mode: Mode?) { self.mode = mode }

    /// Checking with `options`.
    ///
    /// - Parameters:
    ///   - options: soft or hard fail, methods, time budget, nonce, CertID hash; default
    ///     ``appStoreSoftFail``.
    ///   - fetcher: for live OCSP and CRL queries; `nil` consults the CRLs and the cache only
    ///     (a certificate they do not cover is unknown).
    ///   - cache: default `RevocationCache/shared`, the one TLS evaluations use.
    ///   - revocationLists: CRLs the application already has, verified as fetched ones.
    public init(
        options: RevocationOptions = Self.appStoreSoftFail, fetcher: (any RevocationFetcher)?, cache: RevocationCache = .shared,
        revocationLists: [CertificateRevocationList] = []
    ) {
        mode = Mode(options: options, fetcher: fetcher, cache: cache, revocationLists: revocationLists)
    }

    /// Soft-fail checking: a revoked certificate refuses the data; an unknown status does not,
    /// unless the chain has expired since the data was signed.
    public static func softFail(fetcher: (any RevocationFetcher)?, cache: RevocationCache = .shared) -> Self {
        Self(options: appStoreSoftFail, fetcher: fetcher, cache: cache)
    }

    /// Hard-fail checking: the data verifies only when every certificate of the chain has a
    /// verified answer; an unknown status is ``PurchaseVerificationError/Code/revocationUnknown``.
    public static func hardFail(fetcher: (any RevocationFetcher)?, cache: RevocationCache = .shared) -> Self {
        Self(options: appStoreHardFail, fetcher: fetcher, cache: cache)
    }

    /// `RevocationOptions/softFail` asking in SHA-256 CertIDs.
    public static let appStoreSoftFail = RevocationOptions(ocspCertificateIDHash: .sha256)

    /// `RevocationOptions/hardFail` asking in SHA-256 CertIDs.
    public static let appStoreHardFail = RevocationOptions(requirePositiveResponse: true, ocspCertificateIDHash: .sha256)

    /// Whether anything is checked.
    public var isEnabled: Bool { mode != nil }
}
