package import Foundation
internal import COpenSSL
internal import CServerTrustShims

/// Verifies an OCSP response about one certificate, offline, at an explicit time.
///
/// For a (certificate, issuer) pair the response must, in this order: have the status
/// `successful` and a basic response; be signed by the issuer or by a responder the issuer
/// certified directly with id-kp-OCSPSigning; carry no critical extension we do not process;
/// echo the request's nonce when a request with a nonce is given; have been produced while the
/// certificate was valid; contain a single response whose CertID matches the certificate; and
/// that single response must be current at the validation time (thisUpdate not in the future,
/// nextUpdate not past, not older than ``Configuration/maximumAge``, all within
/// ``Configuration/clockSkewTolerance``). The first check that fails gives
/// `RevocationStatus.unknown(_:)` with its reason; only a response passing all of them can
/// give `RevocationStatus.good`.
///
/// When several current single responses match, the most severe wins (revoked, then unknown,
/// then good), so a response cannot hide a revocation behind a "good" for the same certificate.
/// A matching single response that is out of date is ignored when another one is current (as
/// Chromium does); when none is current, the first one's date problem is the reason.
///
/// The validation time is always a parameter: the verifier never reads the clock (OpenSSL's
/// `OCSP_check_validity` does, which is why it is not used).
///
/// Not checked: the revocation status of a delegated responder's own certificate (RFC 6960
/// §4.2.2.2.1 leaves it to the responder's id-pkix-ocsp-nocheck or to local policy).
package struct OCSPVerifier: Hashable, Sendable {
    package var configuration: Configuration

    /// Critical response extensions we process: the nonce (checked when a request is given).
    private static let understoodResponseExtensions: Set<Int32> = [NID_id_pkix_OCSP_Nonce]
    /// Critical single-response extensions we accept: embedded SCTs (RFC 6962 §3.3), which say
    /// nothing about revocation, so ignoring their content is safe.
    private static let understoodSingleExtensions: Set<Int32> = [NID_ct_cert_scts]

    /// - Parameter configuration: time tolerances; see ``Configuration`` for the defaults.
    package init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Verifies a parsed response about `certificate` at `time`.
    ///
    /// - Parameters:
    ///   - response: the response (stapled, fetched or cached).
    ///   - certificate: the certificate whose status is wanted.
    ///   - issuer: the certificate that issued it, from the validated chain.
    ///   - time: the validation time; the clock is never read.
    ///   - request: the request the response answers, for a live query. When it carries a nonce
    ///     the response must echo it (`RevocationStatus.UnknownReason.nonceMismatch` if not).
    ///     Pass `nil` for stapled and cached responses.
    package func verify(
        _ response: OCSPResponse,
        for certificate: Certificate,
        issuedBy issuer: Certificate,
        at time: Date,
        request: OCSPRequest? = nil
    ) -> OCSPVerificationResult {
        do throws(RevocationFailure) {
            return try evaluate(response, for: certificate, issuedBy: issuer, at: time, request: request)
        } catch {
            return OCSPVerificationResult(
                status: .unknown(error.reason), explanation: error.explanation, producedAt: response.producedAt)
        }
    }

    /// Parses and verifies a DER response; bytes that do not parse give
    /// `RevocationStatus.UnknownReason.malformed`, since a bad response from a server is
    /// an unknown status, not an error of the caller.
    package func verify(
        derEncoded der: [UInt8],
        for certificate: Certificate,
        issuedBy issuer: Certificate,
        at time: Date,
        request: OCSPRequest? = nil
    ) -> OCSPVerificationResult {
        let response: OCSPResponse
        do {
            response = try OCSPResponse(derEncoded: der)
        } catch let error as TrustError {
            return OCSPVerificationResult(status: .unknown(.malformed), explanation: error.reason)
        } catch {
            return OCSPVerificationResult(status: .unknown(.malformed), explanation: "\(error)")
        }
        return verify(response, for: certificate, issuedBy: issuer, at: time, request: request)
    }

    private func evaluate(
        _ response: OCSPResponse, for certificate: Certificate, issuedBy issuer: Certificate, at time: Date,
        request: OCSPRequest?
    ) throws(RevocationFailure) -> OCSPVerificationResult {
        guard response.responseStatus == .successful, let basic = response.basic else {
            throw RevocationFailure(
                .responderError(response.responseStatus),
                "The OCSP responder answered \(response.responseStatus) (an unsigned error message) instead of a status.")
        }
        let authenticated = try OCSPResponderAuthentication.authenticate(basic, issuer: issuer, at: time)

        if let unhandled = basic.criticalExtensions.first(where: { !Self.understoodResponseExtensions.contains($0.nid) }) {
            throw RevocationFailure(
                .unhandledCriticalExtension, "The OCSP response has a critical extension \(unhandled.oid) this verifier does not process.")
        }
        if let request { try checkNonce(of: authenticated, against: request) }

        guard let producedAt = basic.producedAt else {
            throw RevocationFailure(.malformed, "The OCSP response's producedAt is not a valid time.")
        }
        guard certificate.notValidBefore <= producedAt, producedAt <= certificate.notValidAfter else {
            throw RevocationFailure(
                .producedOutsideCertificateValidity,
                "The OCSP response was produced at \(format(producedAt)), outside the validity of \(certificate.subject) "
                    + "(\(format(certificate.notValidBefore)) to \(format(certificate.notValidAfter))).")
        }

        let id = OCSPCertificateID(certificate: certificate, issuer: issuer)
        let matching = basic.singleResponses.filter(id.matches)
        guard !matching.isEmpty else {
            throw RevocationFailure(
                .certificateIDMismatch,
                "None of the \(basic.singleResponses.count) single responses is about \(certificate.subject) "
                    + "(serial \(certificate.serialNumber)) issued by \(issuer.subject).")
        }

        var current: [CurrentSingleResponse] = []
        var firstDateFailure: RevocationFailure?
        for single in matching {
            do throws(RevocationFailure) {
                current.append(try assess(single, of: authenticated, at: time))
            } catch {
                if error.reason == .malformed || error.reason == .unhandledCriticalExtension { throw error }
                firstDateFailure = firstDateFailure ?? error
            }
        }
        guard let chosen = current.max(by: { $0.severity < $1.severity }) else {
            throw firstDateFailure ?? RevocationFailure(.malformed, "No single response could be assessed.")
        }
        return chosen.result(producedAt: producedAt, maximumAge: configuration.maximumAge)
    }

    private func checkNonce(of response: AuthenticatedOCSPResponse, against request: OCSPRequest) throws(RevocationFailure) {
        guard request.nonce != nil else { return }
        // 1: present in both and equal. 0: both present, different. -1: the response lacks it.
        switch OCSP_check_nonce(request.request, response.basic.pointer) {
        case 1:
            return
        case -1:
            throw RevocationFailure(.nonceMismatch, "The request carried a nonce and the OCSP response carries none.")
        default:
            throw RevocationFailure(.nonceMismatch, "The OCSP response's nonce differs from the request's.")
        }
    }

    /// The status of one matching single response, if it is current at `time`.
    private func assess(
        _ single: OpaquePointer, of response: AuthenticatedOCSPResponse, at time: Date
    ) throws(RevocationFailure) -> CurrentSingleResponse {
        if let unhandled = criticalExtensions(ofSingleResponse: single).first(where: {
            !Self.understoodSingleExtensions.contains($0.nid)
        }) {
            throw RevocationFailure(
                .unhandledCriticalExtension,
                "The single response has a critical extension \(unhandled.oid) this verifier does not process.")
        }
        var reasonCode: Int32 = -1
        var revocationTime: UnsafeRawPointer?
        var thisUpdateTime: UnsafeRawPointer?
        var nextUpdateTime: UnsafeRawPointer?
        let certificateStatus = CServerTrustShims_OCSP_single_get0_status(single, &reasonCode, &revocationTime, &thisUpdateTime, &nextUpdateTime)
        guard let thisUpdate = asn1Date(thisUpdateTime) else {
            throw RevocationFailure(.malformed, "The single response's thisUpdate is not a valid time.")
        }
        var nextUpdate: Date?
        if let nextUpdateTime {
            guard let parsed = asn1Date(nextUpdateTime), parsed >= thisUpdate else {
                throw RevocationFailure(.malformed, "The single response's nextUpdate is not a valid time after thisUpdate.")
            }
            nextUpdate = parsed
        }
        try checkCurrency(thisUpdate: thisUpdate, nextUpdate: nextUpdate, at: time)

        let status: CurrentSingleResponse.Status
        switch certificateStatus {
        case V_OCSP_CERTSTATUS_GOOD:
            status = .good
        case V_OCSP_CERTSTATUS_REVOKED:
            guard let date = asn1Date(revocationTime) else {
                throw RevocationFailure(.malformed, "The single response's revocationTime is not a valid time.")
            }
            status = .revoked(reason: reasonCode >= 0 ? RevocationReason(rawValue: Int(reasonCode)) : nil, date: date)
        case V_OCSP_CERTSTATUS_UNKNOWN:
            status = .unknown
        default:
            throw RevocationFailure(.malformed, "The single response's certificate status is not good, revoked or unknown.")
        }
        return CurrentSingleResponse(
            status: status, response: response, thisUpdate: thisUpdate, nextUpdate: nextUpdate)
    }

    private func checkCurrency(thisUpdate: Date, nextUpdate: Date?, at time: Date) throws(RevocationFailure) {
        let skew = configuration.clockSkewTolerance
        if thisUpdate > time.addingTimeInterval(skew) {
            throw RevocationFailure(
                .notYetValid,
                "The OCSP response's thisUpdate \(format(thisUpdate)) is after the validation time \(format(time)) "
                    + "(clock-skew tolerance \(Int(skew)) s).")
        }
        if let nextUpdate, nextUpdate < time.addingTimeInterval(-skew) {
            throw RevocationFailure(
                .stale,
                "The OCSP response's nextUpdate \(format(nextUpdate)) is before the validation time \(format(time)) "
                    + "(clock-skew tolerance \(Int(skew)) s).")
        }
        if thisUpdate < time.addingTimeInterval(-configuration.maximumAge - skew) {
            throw RevocationFailure(
                .tooOld,
                "The OCSP response's thisUpdate \(format(thisUpdate)) is more than the maximum age of "
                    + "\(Int(configuration.maximumAge)) s before the validation time \(format(time)).")
        }
    }
}

/// A matching single response that passed every check, of an authenticated response: the only
/// thing a status can come from, and so the only way to `RevocationStatus.good`.
private struct CurrentSingleResponse {
    enum Status {
        case good
        case revoked(reason: RevocationReason?, date: Date)
        case unknown
    }

    let status: Status
    let response: AuthenticatedOCSPResponse
    let thisUpdate: Date
    let nextUpdate: Date?

    /// Revoked beats unknown beats good.
    var severity: Int {
        switch status {
        case .good: 0
        case .unknown: 1
        case .revoked: 2
        }
    }

    func result(producedAt: Date, maximumAge: TimeInterval) -> OCSPVerificationResult {
        let signer = response.signer.subject
        let by = response.signerIsIssuer ? "the issuer \(signer)" : "the delegated responder \(signer)"
        let window = "thisUpdate \(format(thisUpdate))" + (nextUpdate.map { ", nextUpdate \(format($0))" } ?? "")
        let freshUntil = min(nextUpdate ?? .distantFuture, thisUpdate.addingTimeInterval(maximumAge))
        let status: RevocationStatus
        let explanation: String
        switch self.status {
        case .good:
            status = .good
            explanation = "The OCSP response signed by \(by) says good (\(window))."
        case .revoked(let reason, let date):
            status = .revoked(reason: reason, date: date)
            explanation = "The OCSP response signed by \(by) says revoked at \(format(date))"
                + (reason.map { " (\($0))" } ?? "") + " (\(window))."
        case .unknown:
            status = .unknown(.responderSaysUnknown)
            explanation = "The OCSP response signed by \(by) says unknown: the responder does not know the certificate."
        }
        let cacheable = if case .unknown = status { false } else { true }
        return OCSPVerificationResult(
            status: status, explanation: explanation, signer: signer, producedAt: producedAt,
            thisUpdate: thisUpdate, nextUpdate: nextUpdate, freshUntil: cacheable ? freshUntil : nil)
    }
}

private func format(_ date: Date) -> String { date.formatted(.iso8601) }
