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
    }

    /// Checks Certificate Transparency against the v3 log list at `path` once the chain
    /// validates: enforced with `required`, else reported only. With `keyPath` (a PEM public
    /// key), the list's detached signature (`signaturePath`, default the list's path with
    /// `.sig` for `.json`) must verify first.
    mutating func checkCertificateTransparency(logListPath path: String, keyPath: String?, signaturePath: String?, required: Bool) throws {
        func read(_ path: String, _ what: String) throws -> [UInt8] {
            guard let data = FileManager.default.contents(atPath: path) else { throw TrustError(.unreadableInput, "Cannot read the \(what) \(path).") }
            return [UInt8](data)
        }
        let json = try read(path, "CT log list")
        let name = URL(fileURLWithPath: path).lastPathComponent
        let list: CTLogList
        if let keyPath {
            let key: SignaturePublicKey
            do {
                key = try SignaturePublicKey(pem: String(decoding: try read(keyPath, "CT log list key"), as: UTF8.self))
            } catch let error as SignatureKeyError {
                throw TrustError(.invalidConfiguration, "--ct-log-list-key \(keyPath): \(error.reason)")
            }
            let signature = signaturePath ?? (path.hasSuffix(".json") ? String(path.dropLast(5)) : path) + ".sig"
            list = try CTLogList(json: json, signature: try read(signature, "CT log list signature"), key: key, fileName: name)
        } else {
            list = try CTLogList(json: json, fileName: name)
        }
        verification.certificateTransparency = (try CTLogStore(list), required ? .enforced() : .reportOnly())
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
                "Certificate Transparency (\(reason)): \(ct.detail ?? "") Accepted because "
                    + (ct.mode == "enforced" ? "a stale log list fails open." : "--require-ct is not set."))
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
