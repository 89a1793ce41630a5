import Foundation
import ServerTrust

/// `verify`'s revocation step: the OCSP response given with `--ocsp-response`, treated as
/// stapled, judged at `--time` for the leaf of the validated chain.
///
/// Policy: REVOKED always rejects. UNKNOWN rejects with `--require-ocsp`, or when the leaf is
/// OCSP must-staple (RFC 7633), and is otherwise accepted with a warning.
struct StapledOCSPCheck {
    /// The response bytes, as read; `nil` when only `--require-ocsp` was given.
    let stapledResponse: [UInt8]?
    let required: Bool
    let verifier: OCSPVerifier

    /// - Throws: ``TrustError/Code/unreadableInput`` for a file that cannot be read,
    ///   ``TrustError/Code/invalidConfiguration`` for a maximum age that is not positive.
    ///   A file that is not an OCSP response is *not* an error here: it is the server's
    ///   problem and gives an unknown status.
    init(responsePath: String?, required: Bool, maximumAgeSeconds: Int?) throws {
        stapledResponse = try responsePath.map { path in
            guard let data = FileManager.default.contents(atPath: path) else {
                throw TrustError(.unreadableInput, "Cannot read the OCSP response \(path).")
            }
            return [UInt8](data)
        }
        self.required = required
        var configuration = OCSPVerifier.Configuration()
        if let maximumAgeSeconds {
            guard maximumAgeSeconds > 0 else {
                throw TrustError(.invalidConfiguration, "--ocsp-max-age must be a positive number of seconds, not \(maximumAgeSeconds).")
            }
            configuration.maximumAge = TimeInterval(maximumAgeSeconds)
        }
        verifier = OCSPVerifier(configuration: configuration)
    }

    /// The report with the revocation outcome added: unchanged but for ``VerificationReport/revocation``
    /// when the chain was already rejected (revocation is only checked for a validated chain).
    func apply(to trust: ServerTrust, report: VerificationReport) -> VerificationReport {
        var report = report
        guard report.failure == nil else {
            report.revocation = RevocationSummary(status: "notChecked", reason: "chainValidationFailed")
            return report
        }
        let result: OCSPVerificationResult
        do {
            result = try trust.stapledOCSPStatus(using: verifier)
        } catch let error as TrustError {
            report.failure = error
            return report
        } catch {
            report.failure = TrustError(.openSSLFailure, "\(error)")
            return report
        }
        let leaf = report.validatedChain.first
        let subject = leaf?.subject ?? "the leaf"
        let mustStaple = leaf?.hasMustStaple ?? false
        report.revocation = RevocationSummary(result)
        switch result.status {
        case .good:
            break
        case .revoked:
            report.failure = TrustError(
                .revoked,
                "Revocation status REVOKED for \(subject): \(result.explanation)",
                evaluator: "StapledOCSP")
        case .unknown(let reason) where required || mustStaple:
            let rule = required
                ? "--require-ocsp accepts only a verified GOOD response"
                : "the leaf is OCSP must-staple (RFC 7633), so only a verified GOOD response is accepted"
            report.failure = TrustError(
                .revocationStatusUnknown,
                "Revocation status UNKNOWN (\(reason.identifier)) for \(subject): \(result.explanation) \(rule).",
                evaluator: "StapledOCSP")
        case .unknown(let reason):
            report.warnings.append(
                "revocation status UNKNOWN (\(reason.identifier)) for \(subject): \(result.explanation) "
                    + "Accepted because --require-ocsp is not set.")
        }
        return report
    }
}

/// The `"revocation"` object of `verify --json`.
struct RevocationSummary {
    /// `good`, `revoked`, `unknown`, or `notChecked`.
    let status: String
    /// For `unknown` and `notChecked`, why (`badSignature`, `stale`, `notRequested`…); for
    /// `revoked`, the CRLReason when the responder gave one.
    let reason: String?
    var explanation: String?
    var revokedAt: Date?
    var thisUpdate: Date?
    var nextUpdate: Date?

    init(status: String, reason: String?) {
        self.status = status
        self.reason = reason
    }

    init(_ result: OCSPVerificationResult) {
        switch result.status {
        case .good:
            self.init(status: "good", reason: nil)
        case .revoked(let reason, let date):
            self.init(status: "revoked", reason: reason?.description)
            revokedAt = date
        case .unknown(let reason):
            self.init(status: "unknown", reason: reason.identifier)
        }
        explanation = result.explanation
        thisUpdate = result.thisUpdate
        nextUpdate = result.nextUpdate
    }

    static let notRequested = RevocationSummary(status: "notChecked", reason: "notRequested")

    var json: [String: Any] {
        var object: [String: Any] = ["status": status]
        if let reason { object["reason"] = reason }
        if let explanation { object["explanation"] = explanation }
        if let revokedAt { object["revokedAt"] = revokedAt.formatted(.iso8601) }
        if let thisUpdate { object["thisUpdate"] = thisUpdate.formatted(.iso8601) }
        if let nextUpdate { object["nextUpdate"] = nextUpdate.formatted(.iso8601) }
        return object
    }

    /// One line for the text output of a trusted chain.
    var text: String {
        status + (reason.map { " (\($0))" } ?? "") + (explanation.map { ": \($0)" } ?? "")
    }
}
