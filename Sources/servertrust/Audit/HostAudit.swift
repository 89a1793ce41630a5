import Foundation
import ServerTrust
import ServerTrustHTTP

/// What `audit` found for one host of a policy file: the policy's verdict on the live chain
/// today and at the warning horizon, the backup situation and the dates that matter.
struct HostAudit {
    enum Status: String {
        /// Passes today and at the warning horizon.
        case ok
        /// Passes today, fails at the horizon (a pin, the set or a certificate expires first).
        case failsWithinWarnDays
        /// The policy rejects the live chain today.
        case fails
        /// No handshake: nothing to judge.
        case unreachable
        /// A wildcard pattern with no `--probe` host.
        case skipped

        var isFailure: Bool { self == .failsWithinWarnDays || self == .fails }
    }

    /// One dated item and the days left until it.
    struct Expiry {
        let what: String
        let date: Date
        let days: Int
    }

    let policy: TrustPolicyFile.HostPolicy
    /// The host connected to, or nil when skipped.
    let host: String?
    let status: Status
    /// Today's rejection, if any.
    let failure: TrustError?
    /// The rejection at the horizon, if any (and none today).
    let futureFailure: TrustError?
    /// Report-only failures and canary disagreements today.
    let findings: [TrustFinding]
    /// The configured pins found in the validated chain.
    let matchingPins: [PinSet.Entry]
    /// Whether an active pin is *not* in the chain; nil without a pin set or a validated chain.
    let hasBackup: Bool?
    let expiries: [Expiry]
    /// Why the host was skipped or unreachable.
    let note: String?

    private init(
        policy: TrustPolicyFile.HostPolicy, host: String?, status: Status, failure: TrustError?, futureFailure: TrustError?,
        findings: [TrustFinding], matchingPins: [PinSet.Entry], hasBackup: Bool?, expiries: [Expiry], note: String?
    ) {
        self.policy = policy
        self.host = host
        self.status = status
        self.failure = failure
        self.futureFailure = futureFailure
        self.findings = findings
        self.matchingPins = matchingPins
        self.hasBackup = hasBackup
        self.expiries = expiries
        self.note = note
    }

    static func skipped(_ policy: TrustPolicyFile.HostPolicy, note: String) -> HostAudit {
        HostAudit(
            policy: policy, host: nil, status: .skipped, failure: nil, futureFailure: nil, findings: [], matchingPins: [],
            hasBackup: nil, expiries: [], note: note)
    }

    static func unreachable(_ policy: TrustPolicyFile.HostPolicy, host: String, note: String) -> HostAudit {
        HostAudit(
            policy: policy, host: host, status: .unreachable, failure: nil, futureFailure: nil, findings: [], matchingPins: [],
            hasBackup: nil, expiries: [], note: note)
    }

    /// Judges `presented` (the live chain of `host`) under the host's whole policy at `now`,
    /// revocation included (the staple, then live queries through `resolve`), and its enforced
    /// pins and certificate dates at `now + warnDays`.
    init(
        policy: TrustPolicyFile.HostPolicy, host: String, presented: [Certificate], stapledOCSPResponse: [UInt8]?,
        anchors: TrustAnchors, resolve: [String], now: Date, warnDays: Int
    ) {
        let horizon = now.addingTimeInterval(TimeInterval(warnDays) * 86_400)
        let today = ServerTrust(
            presentedChain: presented, anchors: anchors, validationTime: now, stapledOCSPResponse: stapledOCSPResponse,
            revocationFetcher: CurlRevocationFetcher(resolve: resolve))
        let failure = Self.failure(of: policy.evaluator, today, host)
        let future = Self.failure(
            of: Self.horizonEvaluator(policy), ServerTrust(presentedChain: presented, anchors: anchors, validationTime: horizon), host)
        let validated = (try? today.validatedChain()) ?? []

        var expiries: [Expiry] = []
        func add(_ what: String, _ date: Date) { expiries.append(Expiry(what: what, date: date, days: PinSet.days(from: now, to: date))) }
        if let pinSet = policy.pinSet {
            for entry in pinSet.entries { if let date = entry.notAfter { add("pin \(entry)", date) } }
            if let date = pinSet.expiration { add("pin set", date) }
        }
        if let canary = policy.canary, let date = canary.effectiveExpiration { add("canary pin set", date) }
        if let leaf = presented.first { add("leaf certificate \(leaf.subject)", leaf.notValidAfter) }
        if let earliest = validated.dropFirst().min(by: { $0.notValidAfter < $1.notValidAfter }) {
            add("issuer certificate \(earliest.subject)", earliest.notValidAfter)
        }

        self.policy = policy
        self.host = host
        self.failure = failure
        futureFailure = failure == nil ? future : nil
        findings = today.findings
        matchingPins = policy.pinSet.map { $0.matchingEntries(in: validated, at: now) } ?? []
        hasBackup = validated.isEmpty ? nil : policy.pinSet.map { $0.hasBackup(for: validated, at: now) }
        self.expiries = expiries.sorted { $0.date < $1.date }
        note = nil
        status = failure != nil ? .fails : future != nil ? .failsWithinWarnDays : .ok
    }

    /// What can be judged ahead of time: the enforced pin set (or default validation) against
    /// the chain's dates. Revocation is not: no OCSP response or CRL for a future date exists
    /// yet, and an informational or canary policy never rejects.
    private static func horizonEvaluator(_ policy: TrustPolicyFile.HostPolicy) -> any ServerTrustEvaluating {
        guard policy.mode == .enforced, let pinSet = policy.pinSet, let pinned = try? PinSetTrustEvaluator(pinSet: pinSet) else {
            return DefaultTrustEvaluator()
        }
        return pinned
    }

    private static func failure(of evaluator: any ServerTrustEvaluating, _ trust: ServerTrust, _ host: String) -> TrustError? {
        do {
            try evaluator.evaluate(trust, forHost: host)
            return nil
        } catch let error as TrustError {
            return error
        } catch {
            return TrustError(.openSSLFailure, "\(evaluator.name) threw \(error)", evaluator: evaluator.name, host: host)
        }
    }

    // MARK: Output

    var lines: [String] {
        let name = policy.pattern.description + (host.map { $0 == policy.pattern.description ? "" : " (\($0))" } ?? "")
        switch status {
        case .skipped, .unreachable:
            return ["\(name): \(status.rawValue): \(note ?? "")"]
        case .ok, .fails, .failsWithinWarnDays:
            var lines = ["\(name): \(status.rawValue)"]
            if let failure { lines.append("  rejected today: \(failure.code): \(failure.reason)") }
            if let futureFailure { lines.append("  rejected at the warning horizon: \(futureFailure.code): \(futureFailure.reason)") }
            for finding in findings { lines.append("  \(finding.mode) failure: \(finding.error.code): \(finding.error.reason)") }
            if policy.pinSet != nil {
                lines.append("  matching pins: " + (matchingPins.isEmpty ? "none" : matchingPins.map(\.description).joined(separator: ", ")))
                switch hasBackup {
                case true?: lines.append("  backup pin: yes")
                case false?: lines.append("  backup pin: NO — every active pin is in the live chain, or none is")
                case nil: break
                }
            }
            for expiry in expiries {
                lines.append("  \(expiry.what) expires in \(expiry.days) day\(expiry.days == 1 ? "" : "s") (\(JSONText.date(expiry.date)))")
            }
            return lines
        }
    }

    var json: [String: Any] {
        var object: [String: Any] = [
            "pattern": policy.pattern.description, "mode": policy.mode.description, "status": status.rawValue,
            "line": policy.line,
        ]
        if let host { object["host"] = host }
        if let note { object["note"] = note }
        if let failure { object["failure"] = Self.json(failure) }
        if let futureFailure { object["failureAtWarnHorizon"] = Self.json(futureFailure) }
        object["findings"] = findings.map { ["mode": $0.mode.description] .merging(Self.json($0.error)) { $1 } }
        object["matchingPins"] = matchingPins.map { ["pin": $0.pin.description, "label": $0.label] }
        if let hasBackup { object["hasBackup"] = hasBackup }
        object["expirations"] = expiries.map { ["what": $0.what, "date": JSONText.date($0.date), "days": $0.days] as [String: Any] }
        return object
    }

    private static func json(_ error: TrustError) -> [String: Any] {
        ["code": error.code.description, "reason": error.reason, "evaluator": error.evaluator ?? ""]
    }
}
