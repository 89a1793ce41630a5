import Foundation
internal import COpenSSL
internal import CServerTrustShims

/// How OpenSSL's path validation is configured for a policy.
///
/// The defaults are the ones the conformance numbers in `docs/CONFORMANCE.md` were measured
/// with.
public struct PathValidationOptions: Hashable, Sendable {
    /// Apply OpenSSL's `X509_V_FLAG_X509_STRICT` checks. Default `false`.
    ///
    /// Strict mode adds RFC 5280 profile rules: basicConstraints critical and keyUsage present
    /// in CA certificates, key identifiers present, non-empty names, no pathLenConstraint in a
    /// non-CA certificate, no explicit elliptic-curve parameters. Measured on the public
    /// conformance suites with everything else equal (`docs/CONFORMANCE.md`), turning it on
    /// agrees with 7 more x509-limbo cases and 1 fewer (`crl::issuer-no-keyusage-extension`),
    /// and rejects real-looking chains elsewhere: 19 of the 41 badssl.com cases (every
    /// badssl.com CA marks basicConstraints non-critical, as many private and legacy CAs do),
    /// all 51 accepting OpenSSL v3name cases (leaves without an authority key identifier), one
    /// PKITS and one openssl-verify case. None of the rules it adds decides whether a server is
    /// who it claims to be — signatures, validity, CA bit, path length, key usage, EKU, name
    /// constraints and revocation are checked either way, and ServerTrust adds the Web PKI rules
    /// OpenSSL lacks on top (`WebPKIChecks.swift`) — so it stays off. Turn it on for a private
    /// PKI known to be RFC 5280-clean.
    public var strict: Bool

    /// OpenSSL's authentication level: 2 (the default) requires 112-bit security for every key
    /// and signature of the chain, refusing RSA-1024, DSA-1024, SHA-1 and MD5 signatures.
    public var authenticationLevel: Int

    /// The longest chain accepted, not counting the leaf. Default 10.
    public var maximumDepth: Int

    /// What the leaf is validated for: a TLS server (EKU serverAuth, key usage, Netscape cert
    /// type: OpenSSL's `ssl_server`), or a signer of data that is not a TLS server's (OpenSSL's
    /// `default`: no purpose; the App Store's signed data). Every other check is the same.
    package enum Purpose: Hashable, Sendable {
        case tlsServer
        case dataSigning
    }

    /// Default ``Purpose/tlsServer``; only ServerTrust's own signed-data verifiers choose another.
    package var purpose: Purpose = .tlsServer

    public init(strict: Bool = false, authenticationLevel: Int = 2, maximumDepth: Int = 10) {
        self.strict = strict
        self.authenticationLevel = authenticationLevel
        self.maximumDepth = maximumDepth
    }
}

/// Runs `X509_verify_cert` with our own store and `X509_STORE_CTX`, then the Web PKI checks
/// OpenSSL does not make (``WebPKIChecks``).
///
/// On top of one `X509_verify_cert` call it does three things OpenSSL 3.0 does not:
///
/// - **Alternative paths.** OpenSSL builds one path and never backtracks when a certificate on
///   it is rejected (expired, wrong EKU, weak signature, name constraints, a Web PKI rule). When
///   a certificate the server *presented* caused the failure, validation runs again without it,
///   at most ``maximumAlternativePaths`` times, so a server that also sends a good cross-signed
///   intermediate is accepted. Setting certificates aside only narrows what OpenSSL may use:
///   every chain accepted is fully validated.
/// - **Inclusive notAfter.** RFC 5280 §4.1.2.5 makes a certificate valid *through* its
///   notAfter second; OpenSSL treats that second as expired. A failure for a certificate that
///   expires exactly at the validation time is retried one second earlier.
/// - **Indirect CRLs.** CRLs are also handed to the `X509_STORE_CTX` directly: OpenSSL looks
///   CRLs up in a store by the *certificate's* issuer name only, so a CRL signed by a separate
///   CRL issuer (RFC 5280 indirect CRL, `cRLIssuer`) is never found there.
///
/// Name matching against the leaf is not done here but in ``HostNameVerifier``; the subject
/// common name is never used, not even for name constraints.
enum PathValidator {
    /// The most certificates a peer may present; more is an attack, not a chain.
    static let maximumPresentedCertificates = 64

    /// How many times a failed validation is retried with an offending presented certificate
    /// set aside. Bounds the work an unusual chain can cause at nine `X509_verify_cert` calls.
    static let maximumAlternativePaths = 8

    /// Validates `presented` (leaf first) against `store`.
    ///
    /// - Parameter trustedStack: when non-nil, these certificates are the only anchors and the
    ///   store's anchors are ignored (used when pinned certificates or keys act as anchors).
    /// - Returns: the validated chain, leaf first, ending at an anchor.
    /// - Throws: the failure of the first attempt, or of the first attempt at the adjusted
    ///   time when only the inclusive-notAfter rule made it fail.
    static func validate(
        presented: [Certificate],
        store: X509TrustStore,
        trustedStack: [Certificate]? = nil,
        trustedStackRevocationLists: [CertificateRevocationList] = [],
        time: Date,
        options: PathValidationOptions
    ) throws -> [Certificate] {
        guard !presented.isEmpty else {
            throw TrustError(.noCertificates, "The server presented no certificate.")
        }
        guard presented.count <= maximumPresentedCertificates else {
            throw TrustError(
                .chainValidationFailed,
                "The server presented \(presented.count) certificates, over the limit of \(maximumPresentedCertificates).")
        }
        var setAside = Set<Int>()
        var validationTime = time
        var firstFailure: TrustError?
        for _ in 0...maximumAlternativePaths {
            let attempt = try verifyOnce(
                presented: presented, setAside: setAside, store: store, trustedStack: trustedStack,
                trustedStackRevocationLists: trustedStackRevocationLists, time: validationTime, options: options)
            switch attempt {
            case .validated(let chain):
                guard let violation = WebPKIChecks.firstViolation(in: chain) else { return chain }
                firstFailure = firstFailure ?? violation.trustError(chain: chain)
                guard let index = presentedIndex(of: chain[violation.depth], in: presented, excluding: setAside) else {
                    throw firstFailure!
                }
                setAside.formUnion(indices(equalTo: index, in: presented))
            case .failed(let failure):
                if failure.expiresAtValidationTime, validationTime == time {
                    // Not a failure under RFC 5280: validate again inside the certificate's last second.
                    validationTime = time.addingTimeInterval(-1)
                    continue
                }
                firstFailure = firstFailure ?? failure.error
                guard let index = failure.presentedCulprit else { throw firstFailure! }
                setAside.formUnion(indices(equalTo: index, in: presented))
            }
        }
        throw firstFailure!
    }

    enum Attempt {
        case validated([Certificate])
        case failed(Failure)
    }

    struct Failure {
        let error: TrustError
        /// Index in the presented chain (never 0) of the certificate to set aside before trying
        /// another path, or nil when no other path can help.
        let presentedCulprit: Int?
        /// The failure is `X509_V_ERR_CERT_HAS_EXPIRED` for a certificate whose notAfter is the
        /// validation time to the second.
        let expiresAtValidationTime: Bool
    }

    /// Errors about the leaf itself, which no other path can cure.
    private static let leafOnlyErrors: Set<Int32> = [
        X509_V_ERR_CERT_HAS_EXPIRED, X509_V_ERR_CERT_NOT_YET_VALID, X509_V_ERR_INVALID_PURPOSE,
        X509_V_ERR_EE_KEY_TOO_SMALL, X509_V_ERR_ERROR_IN_CERT_NOT_AFTER_FIELD,
        X509_V_ERR_ERROR_IN_CERT_NOT_BEFORE_FIELD, X509_V_ERR_INVALID_EXTENSION,
        X509_V_ERR_UNHANDLED_CRITICAL_EXTENSION, X509_V_ERR_CERT_REVOKED,
    ]

    /// One attempt. With the anchors' CRLs, the attempt first runs without them and keeps the
    /// chain when ``PathCRLShortcut`` shows it unrevoked at constant cost; otherwise (and for
    /// every failure) it runs again with OpenSSL's CRL processing, whose result is the attempt's.
    private static func verifyOnce(
        presented: [Certificate],
        setAside: Set<Int>,
        store: X509TrustStore,
        trustedStack: [Certificate]?,
        trustedStackRevocationLists: [CertificateRevocationList],
        time: Date,
        options: PathValidationOptions
    ) throws -> Attempt {
        if trustedStack == nil, let shortcut = store.crlShortcut,
            case .validated(let chain) = try verifyOnce(
                presented: presented, setAside: setAside, store: store, trustedStack: nil,
                trustedStackRevocationLists: [], time: time, options: options, checkingCRLs: false),
            shortcut.showsNoneRevoked(chain, at: time)
        {
            return .validated(chain)
        }
        return try verifyOnce(
            presented: presented, setAside: setAside, store: store, trustedStack: trustedStack,
            trustedStackRevocationLists: trustedStackRevocationLists, time: time, options: options, checkingCRLs: true)
    }

    static func verifyOnce(
        presented: [Certificate],
        setAside: Set<Int>,
        store: X509TrustStore,
        trustedStack: [Certificate]?,
        trustedStackRevocationLists: [CertificateRevocationList],
        time: Date,
        options: PathValidationOptions,
        checkingCRLs: Bool
    ) throws -> Attempt {
        let leaf = presented[0]
        guard let ctx = X509_STORE_CTX_new() else {
            throw TrustError(.openSSLFailure, "X509_STORE_CTX_new failed.")
        }
        defer { X509_STORE_CTX_free(ctx) }
        guard let untrusted = CServerTrustShims_sk_X509_new_null() else {
            throw TrustError(.openSSLFailure, "sk_X509_new_null failed.")
        }
        defer { CServerTrustShims_sk_X509_free(untrusted) }  // borrowed pointers: free the stack only
        for (index, certificate) in presented.enumerated().dropFirst() where !setAside.contains(index) {
            _ = CServerTrustShims_sk_X509_push(untrusted, certificate.x509)
        }

        var trusted: OpaquePointer?
        defer { if let trusted { CServerTrustShims_sk_X509_free(trusted) } }
        if let trustedStack {
            trusted = CServerTrustShims_sk_X509_new_null()
            guard let trusted else { throw TrustError(.openSSLFailure, "sk_X509_new_null failed.") }
            for certificate in trustedStack { _ = CServerTrustShims_sk_X509_push(trusted, certificate.x509) }
        }
        // The path-level CRL engine, for CRLs given to TrustAnchors; the per-certificate one is
        // CRLVerifier, run by RevocationTrustEvaluator. Kept for what only OpenSSL's RFC 5280
        // CRL processing proves (indirect CRLs, rollover keys): RevocationBehaviour.md, "Two CRL engines".
        let checksRevocation = checkingCRLs && !store.revocationLists.isEmpty && trustedStack == nil
        // With pins as the only anchors, the anchor is often an intermediate whose own issuer's
        // CRL is out of reach: check the leaf (OpenSSL's plain CRL_CHECK), not the whole chain.
        let checksLeafRevocation = checkingCRLs && trustedStack != nil && !trustedStackRevocationLists.isEmpty
        let revocationLists = checksRevocation ? store.revocationLists : checksLeafRevocation ? trustedStackRevocationLists : []
        var crls: OpaquePointer?
        defer { if let crls { CServerTrustShims_sk_X509_CRL_pop_free(crls) } }
        if !revocationLists.isEmpty {
            crls = CServerTrustShims_sk_X509_CRL_new_null()
            guard let crls else { throw TrustError(.openSSLFailure, "sk_X509_CRL_new_null failed.") }
            for list in revocationLists {
                X509_CRL_up_ref(list.crl)  // the stack is freed with pop_free: give it references of its own
                if CServerTrustShims_sk_X509_CRL_push(crls, list.crl) <= 0 { X509_CRL_free(list.crl) }
            }
        }

        clearOpenSSLErrors()
        guard X509_STORE_CTX_init(ctx, store.pointer, leaf.x509, untrusted) == 1 else {
            var evidence = TrustError.Evidence()
            evidence.openSSLErrors = drainOpenSSLErrors()
            throw TrustError(.openSSLFailure, "X509_STORE_CTX_init failed.", evidence: evidence)
        }
        if let trusted { X509_STORE_CTX_set0_trusted_stack(ctx, trusted) }
        // Also searched before the store, and the only place indirect CRLs are found.
        if let crls { X509_STORE_CTX_set0_crls(ctx, crls) }
        // Purpose and trust of a TLS server: EKU serverAuth, key usage, Netscape cert type; for
        // a data signer, OpenSSL's default parameters (no purpose).
        let parameters = options.purpose == .tlsServer ? "ssl_server" : "default"
        guard X509_STORE_CTX_set_default(ctx, parameters) == 1 else {
            throw TrustError(.openSSLFailure, "X509_STORE_CTX_set_default(\(parameters)) failed.")
        }
        let param = X509_STORE_CTX_get0_param(ctx)
        var flags = UInt(X509_V_FLAG_PARTIAL_CHAIN) | UInt(X509_V_FLAG_TRUSTED_FIRST)
        if options.strict { flags |= UInt(X509_V_FLAG_X509_STRICT) }
        if checksRevocation {
            flags |= UInt(X509_V_FLAG_CRL_CHECK) | UInt(X509_V_FLAG_CRL_CHECK_ALL)
                | UInt(X509_V_FLAG_EXTENDED_CRL_SUPPORT) | UInt(X509_V_FLAG_USE_DELTAS)
        } else if checksLeafRevocation {
            flags |= UInt(X509_V_FLAG_CRL_CHECK) | UInt(X509_V_FLAG_EXTENDED_CRL_SUPPORT) | UInt(X509_V_FLAG_USE_DELTAS)
        }
        X509_VERIFY_PARAM_set_flags(param, flags)
        // Names are matched in subjectAltName only (HostNameVerifier), so the subject CN must not
        // be held to DNS name constraints either: OpenSSL does so unless told the CN is never a name.
        X509_VERIFY_PARAM_set_hostflags(param, UInt32(X509_CHECK_FLAG_NEVER_CHECK_SUBJECT))
        X509_VERIFY_PARAM_set_time(param, time_t(time.timeIntervalSince1970.rounded(.down)))
        X509_VERIFY_PARAM_set_auth_level(param, Int32(options.authenticationLevel))
        X509_VERIFY_PARAM_set_depth(param, Int32(options.maximumDepth))

        guard X509_verify_cert(ctx) == 1 else {
            return .failed(failure(of: ctx, presented: presented, setAside: setAside, time: time))
        }
        guard let chain = X509_STORE_CTX_get1_chain(ctx) else {
            throw TrustError(.openSSLFailure, "X509_STORE_CTX_get1_chain returned nothing after a successful verification.")
        }
        defer { CServerTrustShims_sk_X509_free(chain) }
        // get1_chain up-refs every element: adopt those references, then free the stack alone.
        return .validated(
            (0..<CServerTrustShims_sk_X509_num(chain)).compactMap { index in
                CServerTrustShims_sk_X509_value(chain, index).map { Certificate(takingOwnership: $0) }
            })
    }

    /// The path OpenSSL built, as far as it got (after a failure: up to the failing certificate).
    private static func builtChain(_ ctx: OpaquePointer) -> [Certificate] {
        guard let chain = X509_STORE_CTX_get1_chain(ctx) else { return [] }
        defer { CServerTrustShims_sk_X509_free(chain) }
        return (0..<CServerTrustShims_sk_X509_num(chain)).compactMap { index in
            CServerTrustShims_sk_X509_value(chain, index).map { Certificate(takingOwnership: $0) }
        }
    }

    /// Reads OpenSSL's verdict out of a failed `ctx` and decides what, if anything, to retry.
    private static func failure(of ctx: OpaquePointer, presented: [Certificate], setAside: Set<Int>, time: Date) -> Failure {
        let error = X509_STORE_CTX_get_error(ctx)
        let depth = Int(X509_STORE_CTX_get_error_depth(ctx))
        var evidence = TrustError.Evidence()
        evidence.verifyResult = error
        evidence.verifyResultText = String(cString: X509_verify_cert_error_string(Int(error)))
        evidence.depth = depth
        evidence.openSSLErrors = drainOpenSSLErrors()
        evidence.chain = builtChain(ctx).map(\.summary)
        if evidence.chain.isEmpty { evidence.chain = presented.map(\.summary) }
        let current = X509_STORE_CTX_get_current_cert(ctx)
        let subject = current.map { distinguishedName(X509_get_subject_name($0)) } ?? ""
        let code: TrustError.Code = error == X509_V_ERR_CERT_REVOKED ? .revoked : .chainValidationFailed
        let trustError = TrustError(
            code,
            "Certificate chain validation failed: \(evidence.verifyResultText ?? "error \(error)")"
                + (subject.isEmpty ? "" : " (depth \(depth): \(subject))") + ".",
            evidence: evidence)

        var expiresAtValidationTime = false
        if error == X509_V_ERR_CERT_HAS_EXPIRED, let current,
            let moment = ASN1_TIME_set(nil, time_t(time.timeIntervalSince1970.rounded(.down)))
        {
            defer { ASN1_TIME_free(moment) }
            var days: Int32 = 0
            var seconds: Int32 = 0
            expiresAtValidationTime =
                ASN1_TIME_diff(&days, &seconds, moment, X509_get0_notAfter(current)) == 1 && days == 0 && seconds == 0
        }
        return Failure(
            error: trustError,
            presentedCulprit: expiresAtValidationTime
                ? nil : culprit(in: ctx, error: error, depth: depth, presented: presented, setAside: setAside),
            expiresAtValidationTime: expiresAtValidationTime)
    }

    /// Name-constraint failures, reported at the constrained certificate but caused by a CA above.
    private static let nameConstraintErrors: Set<Int32> = [
        X509_V_ERR_PERMITTED_VIOLATION, X509_V_ERR_EXCLUDED_VIOLATION, X509_V_ERR_SUBTREE_MINMAX,
        X509_V_ERR_UNSUPPORTED_CONSTRAINT_TYPE, X509_V_ERR_UNSUPPORTED_CONSTRAINT_SYNTAX,
        X509_V_ERR_UNSUPPORTED_NAME_SYNTAX,
    ]

    /// The presented certificate to set aside after a failure, or nil when the leaf alone is at
    /// fault: for a name-constraint failure the nearest presented CA above the error depth that
    /// carries nameConstraints; otherwise the certificate at the error depth, or the nearest
    /// presented one above it (a signature failure at depth 0 is its issuer's key).
    private static func culprit(
        in ctx: OpaquePointer, error: Int32, depth: Int, presented: [Certificate], setAside: Set<Int>
    ) -> Int? {
        if depth == 0 && leafOnlyErrors.contains(error) { return nil }
        guard let built = X509_STORE_CTX_get0_chain(ctx) else { return nil }
        let count = Int(CServerTrustShims_sk_X509_num(built))
        let above = max(depth, 1)..<max(count, 1)
        let candidates: [Int] = above.compactMap { position in
            CServerTrustShims_sk_X509_value(built, Int32(position)).flatMap {
                presentedIndex(of: $0, in: presented, excluding: setAside)
            }
        }
        if nameConstraintErrors.contains(error),
            let constraining = candidates.first(where: { X509_get_ext_by_NID(presented[$0].x509, NID_name_constraints, -1) >= 0 })
        {
            return constraining
        }
        return candidates.first
    }

    /// The index (never 0, the leaf) of a presented certificate equal to `x509` that is not yet
    /// set aside.
    private static func presentedIndex(of x509: OpaquePointer, in presented: [Certificate], excluding setAside: Set<Int>) -> Int? {
        presented.indices.dropFirst().first { !setAside.contains($0) && X509_cmp(presented[$0].x509, x509) == 0 }
    }

    private static func presentedIndex(of certificate: Certificate, in presented: [Certificate], excluding setAside: Set<Int>) -> Int? {
        presentedIndex(of: certificate.x509, in: presented, excluding: setAside)
    }

    /// Every presented index (never 0) holding the same certificate as `index`: a duplicate
    /// would otherwise let OpenSSL build the same path again.
    private static func indices(equalTo index: Int, in presented: [Certificate]) -> Set<Int> {
        Set(presented.indices.dropFirst().filter { X509_cmp(presented[$0].x509, presented[index].x509) == 0 })
    }
}

extension Certificate {
    /// `sha256/…: subject`, as failure messages list chains.
    var summary: TrustError.CertificateSummary { .init(pin: spkiPin, subject: subject) }
}
