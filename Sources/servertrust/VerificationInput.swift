import Foundation
import ServerTrust

/// The files and flags of an offline verification, loaded and checked before anything runs,
/// as the library's ``ChainVerification``.
struct VerificationInput {
    private(set) var verification: ChainVerification

    /// - Throws: ``TrustError/Code/unreadableInput`` for a file that cannot be read,
    ///   ``TrustError/Code/invalidConfiguration`` for a bad time, pin or maximum age. An OCSP
    ///   response file that is not an OCSP response is *not* an error here: it is the server's
    ///   problem and gives an unknown status.
    init(
        chainPath: String, rootsPath: String, crlPaths: [String], pins: [String], time timeText: String?,
        ocspResponsePath: String?, requireOCSP: Bool, ocspMaximumAge: Int?
    ) throws {
        let presented = try Certificate.certificates(contentsOfFile: chainPath)
        let crls = try crlPaths.map(CertificateRevocationList.init(contentsOfFile:))
        let anchors = try TrustAnchors(contentsOfFile: rootsPath, revocationLists: crls)
        var time = Date()
        if let timeText {
            guard let parsed = RFC3339.parse(timeText) else {
                throw TrustError(.invalidConfiguration, "--time \"\(timeText)\" is not an RFC 3339 time such as 2026-01-31T12:00:00Z.")
            }
            time = parsed
        }
        var staple: ChainVerification.StapleCheck?
        if ocspResponsePath != nil || requireOCSP {
            let response = try ocspResponsePath.map { path in
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw TrustError(.unreadableInput, "Cannot read the OCSP response \(path).")
                }
                return [UInt8](data)
            }
            if let ocspMaximumAge, ocspMaximumAge <= 0 {
                throw TrustError(.invalidConfiguration, "--ocsp-max-age must be a positive number of seconds, not \(ocspMaximumAge).")
            }
            staple = try ChainVerification.StapleCheck(
                response: response, required: requireOCSP,
                maximumAge: ocspMaximumAge.map(TimeInterval.init) ?? RevocationOptions.ocspStapled.maximumResponseAge)
        } else if ocspMaximumAge != nil {
            throw TrustError(.invalidConfiguration, "--ocsp-max-age needs --ocsp-response or --require-ocsp.")
        }
        verification = ChainVerification(
            presentedChain: presented, anchors: anchors, validationTime: time, pins: try pins.map(Pin.init), staple: staple)
        verification.validationTimeIsTheClock = timeText == nil
    }

    /// Checks Certificate Transparency against `list` once the chain validates: enforced with
    /// `required`, a stale list included (`--require-ct` rejects unless the leaf meets the
    /// policy, and a stale list cannot show that it does), else reported only.
    mutating func checkCertificateTransparency(_ list: CTLogList, required: Bool) throws {
        verification.certificateTransparency = (try CTLogStore(list), required ? .enforced(staleLogList: .failClosed) : .reportOnly())
    }

    /// Problems that did not lead to a rejection, for standard error: an UNKNOWN status the
    /// soft-fail check accepted, Certificate Transparency reported but not enforced.
    static func warnings(for report: ChainVerification.Report) -> [String] {
        guard report.trusted else { return [] }
        var warnings: [String] = []
        if report.revocation.status == "unknown" {
            let subject = report.validatedChain.first?.subject ?? "the leaf"
            warnings.append(
                "revocation status UNKNOWN (\(report.revocation.reason ?? "?")) for \(subject): \(report.revocation.explanation ?? "") "
                    + "Accepted because --require-ocsp is not set.")
        }
        if let ct = report.certificateTransparency, let reason = ct.reason {
            warnings.append(
                "Certificate Transparency (\(reason)): \(ct.detail ?? "") Accepted because --require-ct is not set.")
        }
        return warnings
    }
}

extension ChainVerification.Report.Revocation {
    /// One line for the text output of a trusted chain.
    var text: String {
        status + (reason.map { " (\($0))" } ?? "") + (explanation.map { ": \($0)" } ?? "")
    }
}

enum RFC3339 {
    static func parse(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }
}
