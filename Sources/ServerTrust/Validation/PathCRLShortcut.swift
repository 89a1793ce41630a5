import Foundation
internal import COpenSSL

/// The CRLs of a ``TrustAnchors`` checked at constant cost when that cannot change the verdict.
///
/// OpenSSL's CRL processing in path validation verifies every CRL's signature again on every
/// validation, so its cost grows with the CRL (about 17 ms a handshake at 1,000,000 entries).
/// This runs `CRLVerifier` instead — the engine of ``RevocationTrustEvaluator``: a CRL's
/// signature verified once, then a binary search — over a chain OpenSSL validated without CRLs,
/// and it may only *accept*. It says `true` when every certificate of the chain, the anchor too
/// (as `X509_V_FLAG_CRL_CHECK_ALL` checks it), is shown not revoked by the one CRL of its issuer,
/// in a case where OpenSSL would select that same CRL and judge it the same way. Anything else —
/// a revoked certificate; a missing, stale, future or badly signed CRL; and all that
/// `CRLVerifier` does not implement (indirect CRLs, delta CRLs, reason partitions, CRLs signed
/// by another key of the CA, several CRLs of one issuer) or judges otherwise than OpenSSL
/// (critical extensions, clock skew) — says `false`, and the attempt runs OpenSSL's full RFC 5280
/// processing as before, whose verdict and error are the answer. Verdicts are OpenSSL's; only
/// the cost of the common case changes (<doc:RevocationBehaviour>, "Two CRL engines").
final class PathCRLShortcut: Sendable {
    private let revocationLists: [ProfiledCRL]
    /// CRLs whose critical extensions OpenSSL would refuse and `CRLVerifier` would not.
    private let refusedByOpenSSL: Set<ObjectIdentifier>
    /// Clock skew 0: OpenSSL allows none.
    private let verifier = CRLVerifier(clockSkewTolerance: 0)

    /// nil when some CRL is a delta or indirect: OpenSSL may then combine several CRLs for one
    /// certificate, which one CRL at a time cannot reproduce.
    init?(_ revocationLists: [CertificateRevocationList]) {
        let profiled = revocationLists.map(ProfiledCRL.init)
        guard !profiled.isEmpty, !profiled.contains(where: { $0.deltaBase != nil || $0.scope?.indirect == true }) else {
            return nil
        }
        self.revocationLists = profiled
        refusedByOpenSSL = Set(profiled.filter { Self.hasCriticalExtensionOpenSSLRefuses($0.crl.crl) }.map(ObjectIdentifier.init))
    }

    /// Whether every certificate of `chain` (leaf first, ending at the anchor) is shown not
    /// revoked at `time`, as OpenSSL would show it; `false` means "ask OpenSSL", never "revoked".
    func showsNoneRevoked(_ chain: [Certificate], at time: Date) -> Bool {
        // OpenSSL compares CRL times with the validation time in whole seconds.
        let second = Date(timeIntervalSince1970: time.timeIntervalSince1970.rounded(.down))
        for (depth, certificate) in chain.enumerated() {
            let issuer: Certificate
            if depth + 1 < chain.count {
                issuer = chain[depth + 1]
            } else {
                // The anchor's CRL is its own: OpenSSL fails an anchor that is not self-issued.
                guard X509_check_issued(certificate.x509, certificate.x509) == X509_V_OK else { return false }
                issuer = certificate
            }
            // Reasons or a cRLIssuer in the certificate's distribution points: OpenSSL needs more
            // than the issuer's one CRL.
            guard !certificate.distributionPoints.contains(where: { $0.hasReasons || $0.hasCRLIssuer }) else { return false }
            let named = revocationLists.filter {
                X509_NAME_cmp(X509_CRL_get_issuer($0.crl.crl), X509_get_subject_name(issuer.x509)) == 0
            }
            guard named.count == 1, let crl = named.first, crl.crl.isIssued(by: issuer),
                !refusedByOpenSSL.contains(ObjectIdentifier(crl)),
                // OpenSSL's CRL has expired at its nextUpdate second, CRLVerifier's only after it.
                crl.crl.nextUpdate.map({ $0 > second }) ?? true
            else { return false }
            guard case .good = verifier.verify(crl, delta: nil, for: certificate, issuedBy: issuer, at: second).status else {
                return false
            }
        }
        return true
    }

    /// OpenSSL refuses a CRL with a critical extension other than issuingDistributionPoint,
    /// authorityKeyIdentifier and deltaCRLIndicator, or an entry with a critical extension other
    /// than certificateIssuer (`crl_cb`, `crl_set_issuers`); `CRLVerifier` also processes
    /// cRLNumber, reasonCode and invalidityDate.
    private static func hasCriticalExtensionOpenSSLRefuses(_ crl: OpaquePointer) -> Bool {
        let understood: Set<Int32> = [NID_issuing_distribution_point, NID_authority_key_identifier, NID_delta_crl]
        for index in 0..<X509_CRL_get_ext_count(crl) {
            let `extension` = X509_CRL_get_ext(crl, index)
            if X509_EXTENSION_get_critical(`extension`) != 0, !understood.contains(OBJ_obj2nid(X509_EXTENSION_get_object(`extension`))) {
                return true
            }
        }
        guard let entries = X509_CRL_get_REVOKED(crl) else { return false }
        for entryIndex in 0..<OPENSSL_sk_num(entries) {
            guard let raw = OPENSSL_sk_value(entries, entryIndex) else { continue }
            let entry = OpaquePointer(raw)
            for index in 0..<X509_REVOKED_get_ext_count(entry) {
                let `extension` = X509_REVOKED_get_ext(entry, index)
                if X509_EXTENSION_get_critical(`extension`) != 0,
                    OBJ_obj2nid(X509_EXTENSION_get_object(`extension`)) != NID_certificate_issuer
                {
                    return true
                }
            }
        }
        return false
    }
}
