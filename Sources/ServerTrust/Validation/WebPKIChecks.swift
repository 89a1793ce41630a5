internal import COpenSSL

/// A rule of the Web PKI that OpenSSL 3.0's `X509_verify_cert` does not enforce, checked on a
/// chain OpenSSL has already validated.
///
/// Each rule is a MUST of RFC 5280 or of the CA/Browser Forum Baseline Requirements that Chrome
/// or Firefox enforce as well, so a chain it rejects is already broken in browsers; rules that
/// would reject certificates in real use (roots with an issuer-and-serial AKI, CA certificates
/// without key identifiers, leaves without EKU, `*.s3.amazonaws.com`, …) are deliberately left
/// out and listed with the reason in `docs/CONFORMANCE.md`.
///
/// The chain passed in is leaf first and ends at the anchor. A chain of one certificate is a
/// leaf trusted directly (a pinned or self-signed server certificate): rules about the leaf's
/// issuer then have nothing to judge, and anchors are otherwise taken as configured, except
/// where a rule is about what an issuer may be (``issuerNotCA``, ``dsaKey``).
enum WebPKICheck: String, CaseIterable, Sendable {
    /// An extension OpenSSL knows cannot be decoded (an undecodable Authority Information
    /// Access, say: OpenSSL only decodes the extensions path validation reads). Chrome refuses
    /// to parse such a certificate. Anchors excepted.
    case malformedExtension = "malformed-extension"
    /// A DSA key anywhere in the chain, anchor included. DSA is not allowed by the Baseline
    /// Requirements, cannot authenticate TLS 1.3, and Chrome and Firefox removed it.
    case dsaKey = "dsa-key"
    /// A certificate that issued the one below it is not a CA: no basicConstraints with cA
    /// set, and not a version 1 self-signed root. OpenSSL accepts such a certificate as the
    /// anchor; Firefox (mozilla::pkix) does not, and RFC 5280 §4.2.1.9 forbids verifying
    /// certificate signatures with its key.
    case issuerNotCA = "issuer-not-ca"
    /// A leaf issued by a CA whose two CA bits disagree: basicConstraints cA set while a
    /// keyUsage extension does not allow keyCertSign, or keyCertSign without cA. RFC 5280
    /// §4.2.1.3 and §4.2.1.9; Chrome's `kTargetCertInconsistentCaBits`. A self-signed CA
    /// certificate used directly as a server certificate is not judged (it is the anchor), and a
    /// pathLenConstraint in a non-CA leaf is tolerated as OpenSSL does by default: it means
    /// nothing there.
    case inconsistentLeafCABits = "leaf-ca-bits"
    /// nameConstraints in a leaf that is not a CA certificate: "MUST be used only in a CA
    /// certificate" (RFC 5280 §4.2.1.10).
    case nameConstraintsInEndEntity = "name-constraints-in-end-entity"
    /// nameConstraints with neither permitted nor excluded subtrees, which RFC 5280 §4.2.1.10
    /// forbids and Chrome refuses to parse. Anchors excepted.
    case emptyNameConstraints = "empty-name-constraints"
    /// A leaf dNSName that is not a well-formed name (an empty label, a character outside
    /// letters, digits, `-` and `_`, a `*` other than a whole leftmost label) while a CA of the
    /// chain constrains DNS names: constraint matching is only meaningful on well-formed names.
    case malformedNameUnderConstraints = "malformed-name-under-constraints"
    /// A leaf wildcard `*.example.com` while a CA excludes a name it matches (`bar.example.com`).
    /// OpenSSL compares the wildcard as text and lets it through; a client would then accept the
    /// leaf for the excluded host (CVE-2025-61727 in Go).
    case wildcardIntoExcludedSubtree = "wildcard-into-excluded-subtree"

    /// The first breach of this rule in `chain`, or nil.
    func violation(in chain: [Certificate]) -> WebPKIViolation? {
        switch self {
        case .malformedExtension: Self.malformedExtension(in: chain)
        case .dsaKey: Self.dsaKey(in: chain)
        case .issuerNotCA: Self.issuerNotCA(in: chain)
        case .inconsistentLeafCABits: Self.inconsistentLeafCABits(in: chain)
        case .nameConstraintsInEndEntity: Self.nameConstraintsInEndEntity(in: chain)
        case .emptyNameConstraints: Self.emptyNameConstraints(in: chain)
        case .malformedNameUnderConstraints: Self.malformedNameUnderConstraints(in: chain)
        case .wildcardIntoExcludedSubtree: Self.wildcardIntoExcludedSubtree(in: chain)
        }
    }
}

/// A breach of a ``WebPKICheck``: which rule, at which depth of the chain (0 = leaf), and why.
struct WebPKIViolation: Hashable, Sendable {
    let check: WebPKICheck
    let depth: Int
    let detail: String

    /// The error path validation throws for this breach: `chainValidationFailed`, with the
    /// validated chain and the depth as evidence (there is no OpenSSL verify result: OpenSSL
    /// accepted the chain).
    func trustError(chain: [Certificate]) -> TrustError {
        var evidence = TrustError.Evidence()
        evidence.depth = depth
        evidence.chain = chain.map(\.summary)
        return TrustError(
            .chainValidationFailed,
            "Certificate chain validation failed: \(detail) (depth \(depth): \(chain[depth].subject); Web PKI rule \(check.rawValue)).",
            evidence: evidence)
    }
}

/// Runs every ``WebPKICheck`` on a chain OpenSSL validated.
enum WebPKIChecks {
    /// The first violation in rule order, or nil when the chain meets every rule.
    static func firstViolation(in chain: [Certificate]) -> WebPKIViolation? {
        guard !chain.isEmpty else { return nil }
        for check in WebPKICheck.allCases {
            if let violation = check.violation(in: chain) { return violation }
        }
        return nil
    }
}

// MARK: - Certificate profile rules

extension WebPKICheck {
    /// Extensions `X509_verify_cert` already decodes, failing with `X509_V_ERR_INVALID_EXTENSION`
    /// (or an invalid-policy error) when it cannot: not decoded a second time.
    private static let decodedByOpenSSL: Set<Int32> = [
        NID_basic_constraints, NID_key_usage, NID_ext_key_usage, NID_subject_key_identifier,
        NID_authority_key_identifier, NID_subject_alt_name, NID_name_constraints, NID_crl_distribution_points,
        NID_netscape_cert_type, NID_proxyCertInfo, NID_certificate_policies,
    ]

    private static func malformedExtension(in chain: [Certificate]) -> WebPKIViolation? {
        for (depth, certificate) in chain.enumerated().dropLast() {
            let x509 = certificate.x509
            for location in 0..<X509_get_ext_count(x509) {
                guard let ext = X509_get_ext(x509, location),
                    !decodedByOpenSSL.contains(OBJ_obj2nid(X509_EXTENSION_get_object(ext))),
                    let method = X509V3_EXT_get(ext)
                else { continue }
                guard let decoded = X509V3_EXT_d2i(ext) else {
                    _ = drainOpenSSLErrors()
                    let nid = OBJ_obj2nid(X509_EXTENSION_get_object(ext))
                    let name = OBJ_nid2ln(nid).map { String(cString: $0) } ?? "nid \(nid)"
                    return WebPKIViolation(check: .malformedExtension, depth: depth, detail: "its \(name) extension cannot be decoded")
                }
                if let item = method.pointee.it {
                    ASN1_item_free(OpaquePointer(decoded), item())
                } else {
                    method.pointee.ext_free?(decoded)
                }
            }
        }
        return nil
    }

    private static func dsaKey(in chain: [Certificate]) -> WebPKIViolation? {
        for (depth, certificate) in chain.enumerated() {
            guard let key = X509_get0_pubkey(certificate.x509), EVP_PKEY_get_base_id(key) == NID_dsa else { continue }
            return WebPKIViolation(check: .dsaKey, depth: depth, detail: "it has a DSA key, which the Web PKI no longer allows")
        }
        return nil
    }

    private static func issuerNotCA(in chain: [Certificate]) -> WebPKIViolation? {
        for (depth, certificate) in chain.enumerated().dropFirst() {
            // 1: basicConstraints cA; 3: version 1 self-signed root. 4 and 5 (keyUsage or
            // Netscape type without basicConstraints) are what OpenSSL tolerates in an anchor.
            let kind = X509_check_ca(certificate.x509)
            guard kind != 1 && kind != 3 else { continue }
            return WebPKIViolation(
                check: .issuerNotCA, depth: depth,
                detail: "it issued the certificate below it but is not a CA certificate (no basicConstraints with cA set)")
        }
        return nil
    }

    private static func inconsistentLeafCABits(in chain: [Certificate]) -> WebPKIViolation? {
        guard chain.count > 1 else { return nil }
        let leaf = chain[0].x509
        let flags = X509_get_extension_flags(leaf)
        let isCA = flags & UInt32(EXFLAG_CA) != 0
        let hasKeyUsage = flags & UInt32(EXFLAG_KUSAGE) != 0
        let signsCertificates = hasKeyUsage && X509_get_key_usage(leaf) & UInt32(KU_KEY_CERT_SIGN) != 0
        if isCA && hasKeyUsage && !signsCertificates {
            return WebPKIViolation(
                check: .inconsistentLeafCABits, depth: 0,
                detail: "the leaf is marked as a CA (basicConstraints cA) but its keyUsage does not allow certificate signing")
        }
        if signsCertificates && !isCA {
            return WebPKIViolation(
                check: .inconsistentLeafCABits, depth: 0,
                detail: "the leaf's keyUsage allows certificate signing (keyCertSign) but it is not a CA")
        }
        return nil
    }

    private static func nameConstraintsInEndEntity(in chain: [Certificate]) -> WebPKIViolation? {
        guard chain.count > 1 else { return nil }
        let leaf = chain[0].x509
        guard X509_get_extension_flags(leaf) & UInt32(EXFLAG_CA) == 0,
            X509_get_ext_by_NID(leaf, NID_name_constraints, -1) >= 0
        else { return nil }
        return WebPKIViolation(
            check: .nameConstraintsInEndEntity, depth: 0,
            detail: "the leaf carries nameConstraints, which only a CA certificate may")
    }
}
