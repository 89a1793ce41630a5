import Foundation
import ServerTrust

/// The files and flags of an offline verification, loaded and checked before anything runs.
struct VerificationInput {
    let presented: [Certificate]
    let anchors: TrustAnchors
    let pins: [Pin]
    let time: Date
    /// The stapled-OCSP step, when `--ocsp-response` or `--require-ocsp` asks for one.
    var ocspCheck: StapledOCSPCheck? = nil

    init(chainPath: String, rootsPath: String, crlPaths: [String], pins: [String], time timeText: String?) throws {
        presented = try Certificate.certificates(contentsOfFile: chainPath)
        let crls = try crlPaths.map(CertificateRevocationList.init(contentsOfFile:))
        anchors = try TrustAnchors(contentsOfFile: rootsPath, revocationLists: crls)
        if let timeText {
            guard let parsed = RFC3339.parse(timeText) else {
                throw TrustError(.invalidConfiguration, "--time \"\(timeText)\" is not an RFC 3339 time such as 2026-01-31T12:00:00Z.")
            }
            time = parsed
        } else {
            time = Date()
        }
        self.pins = try pins.map(Pin.init)
    }

    /// Runs the evaluation; with no host, the host check is skipped.
    func verify(host: String?) -> VerificationReport {
        let trust = ServerTrust(
            presentedChain: presented, anchors: anchors, validationTime: time,
            stapledOCSPResponse: ocspCheck?.stapledResponse)
        let chosen: any ServerTrustEvaluating
        do {
            chosen = pins.isEmpty
                ? DefaultTrustEvaluator(validateHost: host != nil)
                : try PinnedKeyHashesTrustEvaluator(pins: pins, validateHost: host != nil)
        } catch let error as TrustError {
            return VerificationReport(evaluator: "configuration", host: host, validatedChain: [], failure: error)
        } catch {
            return VerificationReport(evaluator: "configuration", host: host, validatedChain: [], failure: TrustError(.openSSLFailure, "\(error)"))
        }
        do {
            try chosen.evaluate(trust, forHost: host ?? "")
            return checkingRevocation(trust, VerificationReport(evaluator: chosen.name, host: host, validatedChain: (try? trust.validatedChain()) ?? [], failure: nil))
        } catch let error as TrustError {
            return checkingRevocation(trust, VerificationReport(evaluator: chosen.name, host: host, validatedChain: (try? trust.validatedChain()) ?? [], failure: error))
        } catch {
            return VerificationReport(evaluator: chosen.name, host: host, validatedChain: [], failure: TrustError(.openSSLFailure, "\(error)"))
        }
    }

    private func checkingRevocation(_ trust: ServerTrust, _ report: VerificationReport) -> VerificationReport {
        ocspCheck?.apply(to: trust, report: report) ?? report
    }
}

/// The outcome of one verification, printable as text or JSON.
struct VerificationReport {
    let evaluator: String
    let host: String?
    let validatedChain: [Certificate]
    var failure: TrustError?
    /// The revocation outcome; `nil` when no revocation check was asked for.
    var revocation: RevocationSummary? = nil
    /// Problems that did not lead to a rejection, for standard error.
    var warnings: [String] = []

    var jsonText: String {
        var object: [String: Any] = [
            "trusted": failure == nil,
            "evaluator": failure?.evaluator ?? evaluator,
            "validatedChain": validatedChain.map { ["subject": $0.subject, "pin": $0.spkiPin.description] },
        ]
        if let host { object["host"] = host }
        object["revocation"] = (revocation ?? .notRequested).json
        if let failure {
            var error: [String: Any] = ["code": failure.code.description, "reason": failure.reason, "message": failure.description]
            if let result = failure.evidence.verifyResult { error["openSSLVerifyError"] = Int(result) }
            if let depth = failure.evidence.depth { error["depth"] = depth }
            if !failure.evidence.configuredPins.isEmpty { error["configuredPins"] = failure.evidence.configuredPins.map(\.description) }
            if !failure.evidence.chain.isEmpty {
                error["chain"] = failure.evidence.chain.map { ["pin": $0.pin.description, "subject": $0.subject] }
            }
            object["error"] = error
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
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
