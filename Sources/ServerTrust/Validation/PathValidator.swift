import Foundation
internal import COpenSSL
internal import CServerTrustShims

/// How OpenSSL's path validation is configured for a policy.
///
/// The defaults are the ones the conformance numbers in `docs/CONFORMANCE.md` were measured
/// with.
public struct PathValidationOptions: Hashable, Sendable {
    /// Apply OpenSSL's `X509_V_FLAG_X509_STRICT` checks. Off by default: many CA certificates
    /// in use mark basicConstraints non-critical, which strict mode rejects, while the checks
    /// that matter for server authentication (signatures, validity, CA bit, key usage, EKU,
    /// name constraints) are made either way.
    public var strict: Bool

    /// OpenSSL's authentication level: 2 (the default) requires 112-bit security for every key
    /// and signature of the chain, refusing RSA-1024, SHA-1 and MD5 signatures.
    public var authenticationLevel: Int

    /// The longest chain accepted, not counting the leaf.
    public var maximumDepth: Int

    public init(strict: Bool = false, authenticationLevel: Int = 2, maximumDepth: Int = 10) {
        self.strict = strict
        self.authenticationLevel = authenticationLevel
        self.maximumDepth = maximumDepth
    }
}

/// Runs `X509_verify_cert` with our own store and `X509_STORE_CTX`.
enum PathValidator {
    /// The most certificates a peer may present; more is an attack, not a chain.
    static let maximumPresentedCertificates = 64

    /// Validates `presented` (leaf first) against `store`.
    ///
    /// - Parameter trustedStack: when non-nil, these certificates are the only anchors and the
    ///   store's anchors are ignored (used when pinned certificates or keys act as anchors).
    /// - Returns: the validated chain, leaf first, ending at an anchor.
    static func validate(
        presented: [Certificate],
        store: X509TrustStore,
        trustedStack: [Certificate]? = nil,
        time: Date,
        options: PathValidationOptions
    ) throws -> [Certificate] {
        guard let leaf = presented.first else {
            throw TrustError(.noCertificates, "The server presented no certificate.")
        }
        guard presented.count <= maximumPresentedCertificates else {
            throw TrustError(
                .chainValidationFailed,
                "The server presented \(presented.count) certificates, over the limit of \(maximumPresentedCertificates).")
        }
        guard let ctx = X509_STORE_CTX_new() else {
            throw TrustError(.openSSLFailure, "X509_STORE_CTX_new failed.")
        }
        defer { X509_STORE_CTX_free(ctx) }
        guard let untrusted = CServerTrustShims_sk_X509_new_null() else {
            throw TrustError(.openSSLFailure, "sk_X509_new_null failed.")
        }
        defer { CServerTrustShims_sk_X509_free(untrusted) }  // borrowed pointers: free the stack only
        for certificate in presented.dropFirst() { _ = CServerTrustShims_sk_X509_push(untrusted, certificate.x509) }

        var trusted: OpaquePointer?
        defer { if let trusted { CServerTrustShims_sk_X509_free(trusted) } }
        if let trustedStack {
            trusted = CServerTrustShims_sk_X509_new_null()
            guard let trusted else { throw TrustError(.openSSLFailure, "sk_X509_new_null failed.") }
            for certificate in trustedStack { _ = CServerTrustShims_sk_X509_push(trusted, certificate.x509) }
        }

        clearOpenSSLErrors()
        guard X509_STORE_CTX_init(ctx, store.pointer, leaf.x509, untrusted) == 1 else {
            var evidence = TrustError.Evidence()
            evidence.openSSLErrors = drainOpenSSLErrors()
            throw TrustError(.openSSLFailure, "X509_STORE_CTX_init failed.", evidence: evidence)
        }
        if let trusted { X509_STORE_CTX_set0_trusted_stack(ctx, trusted) }
        // Purpose and trust of a TLS server: EKU serverAuth, key usage, Netscape cert type.
        guard X509_STORE_CTX_set_default(ctx, "ssl_server") == 1 else {
            throw TrustError(.openSSLFailure, "X509_STORE_CTX_set_default(ssl_server) failed.")
        }
        let param = X509_STORE_CTX_get0_param(ctx)
        var flags = UInt(X509_V_FLAG_PARTIAL_CHAIN) | UInt(X509_V_FLAG_TRUSTED_FIRST)
        if options.strict { flags |= UInt(X509_V_FLAG_X509_STRICT) }
        if !store.revocationLists.isEmpty && trustedStack == nil {
            flags |= UInt(X509_V_FLAG_CRL_CHECK) | UInt(X509_V_FLAG_CRL_CHECK_ALL)
                | UInt(X509_V_FLAG_EXTENDED_CRL_SUPPORT) | UInt(X509_V_FLAG_USE_DELTAS)
        }
        X509_VERIFY_PARAM_set_flags(param, flags)
        X509_VERIFY_PARAM_set_time(param, time_t(time.timeIntervalSince1970.rounded(.down)))
        X509_VERIFY_PARAM_set_auth_level(param, Int32(options.authenticationLevel))
        X509_VERIFY_PARAM_set_depth(param, Int32(options.maximumDepth))

        let ok = X509_verify_cert(ctx)
        guard ok == 1 else {
            let error = X509_STORE_CTX_get_error(ctx)
            let depth = Int(X509_STORE_CTX_get_error_depth(ctx))
            var evidence = TrustError.Evidence()
            evidence.verifyResult = error
            evidence.verifyResultText = String(cString: X509_verify_cert_error_string(Int(error)))
            evidence.depth = depth
            evidence.openSSLErrors = drainOpenSSLErrors()
            evidence.chain = presented.map(\.summary)
            var subject = ""
            if let current = X509_STORE_CTX_get_current_cert(ctx) {
                subject = distinguishedName(X509_get_subject_name(current))
            }
            let code: TrustError.Code = error == X509_V_ERR_CERT_REVOKED ? .revoked : .chainValidationFailed
            throw TrustError(
                code,
                "Certificate chain validation failed: \(evidence.verifyResultText ?? "error \(error)")"
                    + (subject.isEmpty ? "" : " (depth \(depth): \(subject))") + ".",
                evidence: evidence)
        }
        guard let chain = X509_STORE_CTX_get1_chain(ctx) else {
            throw TrustError(.openSSLFailure, "X509_STORE_CTX_get1_chain returned nothing after a successful verification.")
        }
        defer { CServerTrustShims_sk_X509_free(chain) }
        // get1_chain up-refs every element: adopt those references, then free the stack alone.
        return (0..<CServerTrustShims_sk_X509_num(chain)).compactMap { index in
            CServerTrustShims_sk_X509_value(chain, index).map { Certificate(takingOwnership: $0) }
        }
    }
}

extension Certificate {
    /// `sha256/…: subject`, as failure messages list chains.
    var summary: TrustError.CertificateSummary { .init(pin: spkiPin, subject: subject) }
}
