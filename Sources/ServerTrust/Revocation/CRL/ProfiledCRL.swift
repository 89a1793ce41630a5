import Foundation
internal import COpenSSL

/// A CRL with the facts verification needs read out once: numbers, scope, unhandled critical
/// extensions, and a memo of which issuer keys its signature verified under.
///
/// Reading a CRL of a million entries for critical entry extensions, or hashing it for the
/// signature, costs tens of milliseconds; a cached CRL answers many handshakes, so both are
/// done at most once per CRL (and issuer key) here, while the per-certificate lookup stays a
/// binary search inside OpenSSL (`X509_CRL_get0_by_cert` over its sorted stack).
final class ProfiledCRL: Sendable {
    /// The issuing distribution point extension (RFC 5280 §5.2.5).
    struct Scope: Hashable, Sendable {
        /// fullName URIs of the distribution point; `nil` when the IDP names no point.
        let pointURIs: [String]?
        /// The IDP names its point relative to the issuer, which is not supported.
        let relativePointName: Bool
        let onlyUserCertificates: Bool
        let onlyCACertificates: Bool
        let onlySomeReasons: Bool
        let indirect: Bool
        let onlyAttributeCertificates: Bool
    }

    let crl: CertificateRevocationList
    /// The cRLNumber as upper-case hex without leading zeros; `nil` when absent.
    let number: String?
    /// For a delta CRL, the BaseCRLNumber (delta CRL indicator) in the same form.
    let deltaBase: String?
    /// `nil` when the CRL has no issuing distribution point.
    let scope: Scope?
    /// The dotted OID of the first critical extension (of the CRL or of any entry) this
    /// verifier does not process, if any.
    let unhandledCriticalExtension: String?
    /// URIs of the CRL's own freshestCRL extension (where its deltas are).
    let freshestURIs: [String]

    private let signatureMemo = Locked<[[UInt8]: Bool]>([:])

    /// CRL extensions we process (RFC 5280 §5.2). freshestCRL must be non-critical, and is
    /// only used as a location, so a critical one is not "processed" and is refused.
    private static let understoodCRLExtensions: Set<Int32> = [
        NID_authority_key_identifier, NID_crl_number, NID_delta_crl, NID_issuing_distribution_point,
    ]
    /// Entry extensions we process (RFC 5280 §5.3): reason, invalidity date, and the
    /// certificate issuer of indirect CRLs, which `X509_CRL_get0_by_cert` honours.
    private static let understoodEntryExtensions: Set<Int32> = [
        NID_crl_reason, NID_invalidity_date, NID_certificate_issuer,
    ]

    init(_ crl: CertificateRevocationList) {
        self.crl = crl
        let pointer = crl.crl
        number = Self.integerExtension(pointer, nid: NID_crl_number)
        deltaBase = Self.integerExtension(pointer, nid: NID_delta_crl)
        scope = Self.scope(of: pointer)
        unhandledCriticalExtension = Self.firstUnhandledCriticalExtension(pointer)
        if let raw = X509_CRL_get_ext_d2i(pointer, NID_freshest_crl, nil, nil) {
            let points = OpaquePointer(raw)
            freshestURIs = parseDistributionPoints(points).flatMap(\.fetchableURLs)
            CRL_DIST_POINTS_free(points)
        } else {
            freshestURIs = []
        }
    }

    /// Whether the CRL's signature verifies under `issuer`'s key; computed once per key.
    func signatureVerifies(issuer: Certificate) -> Bool {
        let key = issuer.subjectPublicKeyInfoDER
        if let known = signatureMemo.withLock({ $0[key] }) { return known }
        clearOpenSSLErrors()
        let verified = X509_get0_pubkey(issuer.x509).map { X509_CRL_verify(crl.crl, $0) == 1 } ?? false
        _ = drainOpenSSLErrors()
        signatureMemo.withLock { $0[key] = verified }
        return verified
    }

    /// Whether `number` (hex, no leading zeros) is greater than `other`.
    static func isGreater(_ number: String, than other: String) -> Bool {
        number.count != other.count ? number.count > other.count : number > other
    }

    private static func integerExtension(_ crl: OpaquePointer, nid: Int32) -> String? {
        guard let raw = X509_CRL_get_ext_d2i(crl, nid, nil, nil) else { return nil }
        // An ASN1_INTEGER, opaque from OpenSSL 4 (OpenSSLObjectPointer).
        defer { ASN1_INTEGER_free(openSSLPointer(raw)) }
        guard let bignum = ASN1_INTEGER_to_BN(openSSLPointer(raw), nil) else { return nil }
        defer { BN_free(bignum) }
        guard let hex = BN_bn2hex(bignum) else { return nil }
        defer { CRYPTO_free(hex, #fileID, #line) }
        return String(cString: hex)
    }

    private static func scope(of crl: OpaquePointer) -> Scope? {
        guard let raw = X509_CRL_get_ext_d2i(crl, NID_issuing_distribution_point, nil, nil) else { return nil }
        let idp = raw.assumingMemoryBound(to: ISSUING_DIST_POINT.self)
        defer { ISSUING_DIST_POINT_free(idp) }
        let point = idp.pointee.distpoint
        return Scope(
            pointURIs: point.map { _ in fullNameURIs(point) },
            relativePointName: point.map { $0.pointee.type != 0 } ?? false,
            onlyUserCertificates: idp.pointee.onlyuser > 0,
            onlyCACertificates: idp.pointee.onlyCA > 0,
            onlySomeReasons: idp.pointee.onlysomereasons != nil,
            indirect: idp.pointee.indirectCRL > 0,
            onlyAttributeCertificates: idp.pointee.onlyattr > 0)
    }

    private static func firstUnhandledCriticalExtension(_ crl: OpaquePointer) -> String? {
        for index in 0..<X509_CRL_get_ext_count(crl) {
            if let oid = unhandledCritical(X509_CRL_get_ext(crl, index), understood: understoodCRLExtensions) { return oid }
        }
        // Entry extensions are rare, so this walk over a large CRL is mostly a count per entry.
        guard let entries = X509_CRL_get_REVOKED(crl) else { return nil }
        for entryIndex in 0..<OPENSSL_sk_num(entries) {
            guard let raw = OPENSSL_sk_value(entries, entryIndex) else { continue }
            let entry = OpaquePointer(raw)
            let count = X509_REVOKED_get_ext_count(entry)
            guard count > 0 else { continue }
            for index in 0..<count {
                if let oid = unhandledCritical(X509_REVOKED_get_ext(entry, index), understood: understoodEntryExtensions) {
                    return oid
                }
            }
        }
        return nil
    }

    private static func unhandledCritical(_ extension: OpaquePointer?, understood: Set<Int32>) -> String? {
        guard let `extension`, X509_EXTENSION_get_critical(`extension`) != 0 else { return nil }
        let object = X509_EXTENSION_get_object(`extension`)
        guard !understood.contains(OBJ_obj2nid(object)) else { return nil }
        var buffer = [CChar](repeating: 0, count: 128)
        _ = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
        return decodeCString(buffer)
    }
}
