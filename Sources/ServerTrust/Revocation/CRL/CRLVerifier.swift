package import Foundation
internal import COpenSSL

/// Establishes one certificate's revocation status from a CRL, offline, at an explicit time.
///
/// For a (certificate, issuer) pair the CRL must, in this order: be a complete CRL (not a
/// delta); name the issuer as its issuer; come from an issuer whose keyUsage, if present,
/// allows cRLSign; carry a signature that verifies under the issuer's key
/// (`X509_CRL_verify`); have no critical extension, in the CRL or in any entry, that we do not
/// process; be current at the validation time (thisUpdate not in the future, nextUpdate not
/// past, and without a nextUpdate not older than the maximum age, all within the clock-skew
/// tolerance); and cover the certificate (its issuing distribution point not limited to other
/// kinds of certificates or to another distribution point). Only then does the certificate's
/// absence from the list mean `RevocationStatus.good`; its presence means
/// `RevocationStatus.revoked(reason:date:)`. The first check that fails gives
/// `RevocationStatus.unknown(_:)` with its reason.
///
/// A CRL limited to some reasons (onlySomeReasons) can still prove a revocation, but its
/// silence is `RevocationStatus.UnknownReason.notCoveredByCRL`.
///
/// A delta CRL, when given, must pass the same checks, be a delta (delta CRL indicator) whose
/// base number is at most the complete CRL's number, and be newer than it; it is consulted
/// first (an entry with reason removeFromCRL lifts a hold). A delta that fails is ignored, with
/// its failure in the explanation: the complete CRL still answers on its own.
///
/// The lookup is OpenSSL's binary search over the CRL's sorted entries, so a CRL of a million
/// entries costs microseconds per certificate; no entry is copied into Swift.
///
/// This is one of the two CRL engines, the per-certificate one: ``RevocationTrustEvaluator``
/// runs it for the CRLs it is given, caches and fetches. The other is OpenSSL's path-level
/// check, run during path validation for CRLs given to
/// ``TrustAnchors/init(_:revocationLists:origin:)`` (`servertrust verify --crl`, the
/// conformance runs). This one does not implement indirect CRLs (cRLIssuer), CRLs signed by
/// another key of the issuing CA (key rollover, self-issued certificates), distribution points
/// named by directory name, or reason partitions spread over several CRLs: the status is then
/// unknown, never good. On PKITS that costs 23 valid chains compared with the path-level
/// engine, and accepts none it refuses, which is why both engines are kept
/// (<doc:RevocationBehaviour>, "Two CRL engines").
package struct CRLVerifier: Hashable, Sendable {
    /// How far the issuer's clock and ours may disagree. Default 300 seconds.
    /// - Warning: a larger tolerance accepts CRLs that are further out of date.
    package var clockSkewTolerance: TimeInterval
    /// How old a CRL *without* nextUpdate may be, by thisUpdate. Default 7 days.
    package var maximumAgeWithoutNextUpdate: TimeInterval

    /// - Parameters:
    ///   - clockSkewTolerance: default 300 seconds.
    ///   - maximumAgeWithoutNextUpdate: default 604,800 seconds (7 days).
    package init(clockSkewTolerance: TimeInterval = 300, maximumAgeWithoutNextUpdate: TimeInterval = 7 * 24 * 60 * 60) {
        self.clockSkewTolerance = clockSkewTolerance
        self.maximumAgeWithoutNextUpdate = maximumAgeWithoutNextUpdate
    }

    /// The status of `certificate` according to `crl` (and `delta`, if given) at `time`.
    ///
    /// - Parameters:
    ///   - crl: a complete CRL.
    ///   - delta: a delta CRL for it, optional.
    ///   - certificate: the certificate whose status is wanted.
    ///   - issuer: the certificate that issued it, from the validated chain.
    ///   - time: the validation time; the clock is never read.
    package func verify(
        _ crl: CertificateRevocationList,
        delta: CertificateRevocationList? = nil,
        for certificate: Certificate,
        issuedBy issuer: Certificate,
        at time: Date
    ) -> CRLVerificationResult {
        verify(ProfiledCRL(crl), delta: delta.map(ProfiledCRL.init), for: certificate, issuedBy: issuer, at: time)
    }

    func verify(
        _ crl: ProfiledCRL, delta: ProfiledCRL?, for certificate: Certificate, issuedBy issuer: Certificate, at time: Date
    ) -> CRLVerificationResult {
        do throws(RevocationFailure) {
            try checkUsable(crl, for: certificate, issuedBy: issuer, at: time, asDelta: false)
            var deltaNote = ""
            if let delta {
                do throws(RevocationFailure) {
                    try checkUsable(delta, for: certificate, issuedBy: issuer, at: time, asDelta: true)
                    try checkDelta(delta, against: crl)
                    if let result = lookUp(certificate, in: delta, issuer: issuer, base: crl, isDelta: true) { return result }
                    deltaNote = " The delta CRL \(delta.number.map { "number \($0) " } ?? "")does not list it either."
                } catch {
                    deltaNote = " The delta CRL was ignored: \(error.explanation)"
                }
            }
            if let result = lookUp(certificate, in: crl, issuer: issuer, base: crl, isDelta: false) { return result }
            if crl.scope?.onlySomeReasons == true {
                throw RevocationFailure(
                    .notCoveredByCRL,
                    "The CRL of \(issuer.subject) covers only some revocation reasons, so its silence does not show that "
                        + "\(certificate.subject) is not revoked.")
            }
            return CRLVerificationResult(
                status: .good,
                explanation: "The CRL \(describe(crl)) signed by \(issuer.subject) does not list serial \(certificate.serialNumber)."
                    + deltaNote,
                thisUpdate: crl.crl.thisUpdate, nextUpdate: crl.crl.nextUpdate, crlNumber: crl.number)
        } catch {
            return CRLVerificationResult(
                status: .unknown(error.reason), explanation: error.explanation, thisUpdate: crl.crl.thisUpdate,
                nextUpdate: crl.crl.nextUpdate, crlNumber: crl.number)
        }
    }

    /// Every check but the lookup: type, issuer, signature, extensions, time, scope.
    func checkUsable(
        _ profiled: ProfiledCRL, for certificate: Certificate, issuedBy issuer: Certificate, at time: Date, asDelta: Bool
    ) throws(RevocationFailure) {
        let crl = profiled.crl
        let what = asDelta ? "delta CRL" : "CRL"
        if asDelta, profiled.deltaBase == nil {
            throw RevocationFailure(.malformed, "The \(what) has no delta CRL indicator.")
        }
        if !asDelta, profiled.deltaBase != nil {
            throw RevocationFailure(.malformed, "The CRL of \(crl.issuer) is a delta CRL where a complete CRL is needed.")
        }
        guard X509_NAME_cmp(X509_CRL_get_issuer(crl.crl), X509_get_subject_name(issuer.x509)) == 0,
            X509_NAME_cmp(X509_get_issuer_name(certificate.x509), X509_get_subject_name(issuer.x509)) == 0
        else {
            throw RevocationFailure(
                .unauthorizedSigner,
                "The \(what) is issued by \(crl.issuer), not by \(issuer.subject), the issuer of \(certificate.subject).")
        }
        let flags = X509_get_extension_flags(issuer.x509)
        if flags & UInt32(EXFLAG_KUSAGE) != 0, X509_get_key_usage(issuer.x509) & UInt32(KU_CRL_SIGN) == 0 {
            throw RevocationFailure(.unauthorizedSigner, "The key usage of \(issuer.subject) does not allow it to sign CRLs (cRLSign).")
        }
        guard profiled.signatureVerifies(issuer: issuer) else {
            throw RevocationFailure(.badSignature, "The signature of the \(what) of \(crl.issuer) does not verify under the key of \(issuer.subject).")
        }
        if let oid = profiled.unhandledCriticalExtension {
            throw RevocationFailure(.unhandledCriticalExtension, "The \(what) has a critical extension \(oid) this verifier does not process.")
        }
        try checkCurrency(crl, what: what, at: time)
        try checkScope(profiled, what: what, for: certificate)
    }

    private func checkCurrency(_ crl: CertificateRevocationList, what: String, at time: Date) throws(RevocationFailure) {
        let skew = clockSkewTolerance
        guard let thisUpdate = crl.thisUpdate else {
            throw RevocationFailure(.malformed, "The \(what)'s thisUpdate is not a valid time.")
        }
        if thisUpdate > time.addingTimeInterval(skew) {
            throw RevocationFailure(
                .notYetValid,
                "The \(what)'s thisUpdate \(format(thisUpdate)) is after the validation time \(format(time)) "
                    + "(clock-skew tolerance \(Int(skew)) s).")
        }
        if let nextUpdate = crl.nextUpdate {
            if nextUpdate < time.addingTimeInterval(-skew) {
                throw RevocationFailure(
                    .stale,
                    "The \(what)'s nextUpdate \(format(nextUpdate)) is before the validation time \(format(time)) "
                        + "(clock-skew tolerance \(Int(skew)) s).")
            }
        } else if thisUpdate < time.addingTimeInterval(-maximumAgeWithoutNextUpdate - skew) {
            throw RevocationFailure(
                .tooOld,
                "The \(what) has no nextUpdate and its thisUpdate \(format(thisUpdate)) is more than "
                    + "\(Int(maximumAgeWithoutNextUpdate)) s before the validation time \(format(time)).")
        }
    }

    /// RFC 5280 §6.3.3 (b): the issuing distribution point must not exclude the certificate.
    private func checkScope(_ profiled: ProfiledCRL, what: String, for certificate: Certificate) throws(RevocationFailure) {
        guard let scope = profiled.scope else { return }
        let subject = certificate.subject
        if scope.onlyAttributeCertificates {
            throw RevocationFailure(.notCoveredByCRL, "The \(what) covers only attribute certificates, not \(subject).")
        }
        if scope.onlyUserCertificates && certificate.isCA {
            throw RevocationFailure(.notCoveredByCRL, "The \(what) covers only end-entity certificates, and \(subject) is a CA.")
        }
        if scope.onlyCACertificates && !certificate.isCA {
            throw RevocationFailure(.notCoveredByCRL, "The \(what) covers only CA certificates, and \(subject) is not one.")
        }
        if scope.relativePointName {
            throw RevocationFailure(.notCoveredByCRL, "The \(what)'s distribution point name is relative to its issuer, which is not supported.")
        }
        if let pointURIs = scope.pointURIs {
            let certificateURIs = Set(certificate.distributionPoints.flatMap(\.uris))
            guard pointURIs.contains(where: certificateURIs.contains) else {
                throw RevocationFailure(
                    .notCoveredByCRL,
                    "The \(what) is for the distribution point \(pointURIs.joined(separator: ", ")), which \(subject) does not name.")
            }
        }
    }

    private func checkDelta(_ delta: ProfiledCRL, against base: ProfiledCRL) throws(RevocationFailure) {
        guard let baseNumber = base.number, let deltaNumber = delta.number, let deltaBase = delta.deltaBase else {
            throw RevocationFailure(.malformed, "The complete CRL or the delta CRL lacks a cRLNumber.")
        }
        guard !ProfiledCRL.isGreater(deltaBase, than: baseNumber) else {
            throw RevocationFailure(
                .malformed, "The delta CRL is based on CRL number \(deltaBase), newer than the complete CRL's \(baseNumber).")
        }
        guard ProfiledCRL.isGreater(deltaNumber, than: baseNumber) else {
            throw RevocationFailure(.stale, "The delta CRL's number \(deltaNumber) is not newer than the complete CRL's \(baseNumber).")
        }
        guard delta.scope == base.scope else {
            throw RevocationFailure(.notCoveredByCRL, "The delta CRL's issuing distribution point differs from the complete CRL's.")
        }
    }

    /// The result when `crl` lists the certificate, or `nil` when it does not.
    private func lookUp(
        _ certificate: Certificate, in profiled: ProfiledCRL, issuer: Certificate, base: ProfiledCRL, isDelta: Bool
    ) -> CRLVerificationResult? {
        var entry: OpaquePointer?
        let found = X509_CRL_get0_by_cert(profiled.crl.crl, &entry, certificate.x509)
        let source = isDelta ? "delta CRL \(describe(profiled))" : "CRL \(describe(profiled))"
        switch found {
        case 1:
            guard let entry else { return nil }
            let date = asn1Date(X509_REVOKED_get0_revocationDate(entry)) ?? Date(timeIntervalSince1970: 0)
            let reason = reasonCode(of: entry).flatMap(RevocationReason.init(rawValue:))
            return CRLVerificationResult(
                status: .revoked(reason: reason, date: date),
                explanation: "The \(source) signed by \(issuer.subject) lists serial \(certificate.serialNumber) as revoked at "
                    + "\(format(date))" + (reason.map { " (\($0))" } ?? "") + ".",
                thisUpdate: base.crl.thisUpdate, nextUpdate: base.crl.nextUpdate, crlNumber: base.number)
        case 2 where isDelta:
            // removeFromCRL in a delta: the certificate was on hold and no longer is.
            return CRLVerificationResult(
                status: .good,
                explanation: "The \(source) signed by \(issuer.subject) removes serial \(certificate.serialNumber) from the CRL "
                    + "(removeFromCRL).",
                thisUpdate: base.crl.thisUpdate, nextUpdate: base.crl.nextUpdate, crlNumber: base.number)
        default:
            return nil
        }
    }

    private func reasonCode(of entry: OpaquePointer) -> Int? {
        var critical: Int32 = 0
        guard let raw = X509_REVOKED_get_ext_d2i(entry, NID_crl_reason, &critical, nil) else { return nil }
        // An ASN1_ENUMERATED, opaque from OpenSSL 4 (OpenSSLObjectPointer).
        defer { ASN1_ENUMERATED_free(openSSLPointer(raw)) }
        return Int(ASN1_ENUMERATED_get(openSSLPointer(raw)))
    }

    private func describe(_ crl: ProfiledCRL) -> String {
        (crl.number.map { "number \($0), " } ?? "") + "thisUpdate \(crl.crl.thisUpdate.map(format) ?? "?")"
    }
}

/// What `CRLVerifier` concluded about one certificate, with the evidence.
package struct CRLVerificationResult: Hashable, Sendable, CustomStringConvertible {
    /// The status. `good` only when a current, verified, covering CRL does not list the certificate.
    package let status: RevocationStatus
    /// One or two sentences on why, naming the dates, the CRL number, or what failed.
    package let explanation: String
    /// thisUpdate of the complete CRL.
    package let thisUpdate: Date?
    /// nextUpdate of the complete CRL, if it has one.
    package let nextUpdate: Date?
    /// cRLNumber of the complete CRL in hexadecimal, if it has one.
    package let crlNumber: String?

    package var description: String { "\(status): \(explanation)" }
}

private func format(_ date: Date) -> String { date.formatted(.iso8601) }
