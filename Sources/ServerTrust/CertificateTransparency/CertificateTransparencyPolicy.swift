public import Foundation

/// The Certificate Transparency policy the platforms apply (Chrome's, as Android's Conscrypt
/// implements it), as a pure function of the verified SCTs, the certificate's lifetime, the
/// log list and the time.
///
/// Only a ``SCTObservation/Status/verified`` SCT from a log the list names with a state counts;
/// an SCT from an unknown log, or one that does not verify, is never counted. Then:
///
/// - **Embedded SCTs**: at least one from a log that is qualified, usable or read-only at the
///   evaluation time; SCTs from at least 2 distinct such logs (or retired ones) for a
///   certificate valid for 180 days or less, 3 above; those logs run by at least 2 operators.
/// - **TLS-extension and OCSP SCTs** (either way, if the embedded ones fall short): SCTs from at
///   least 2 distinct logs that are qualified, usable or read-only, run by at least 2 operators.
///
/// A log counts only in a state it had entered by the evaluation time. A retired log's SCT
/// counts only when the certificate was logged before the log retired, judged as Chrome judges
/// it: by the earliest verified SCT from a log that has *not* retired. A retired log's key may
/// sign any timestamp an attacker asks for, so its own SCTs cannot date the certificate
/// (Conscrypt dates it by the earliest SCT of any log, which a backdated SCT from a retired
/// log would move).
public enum CertificateTransparencyPolicy {
    /// Certificates valid longer than this need 3 embedded SCTs, not 2.
    public static let shortLivedLimit: TimeInterval = 180 * 86_400

    /// Judges observations against the policy.
    ///
    /// - Parameters:
    ///   - observations: every SCT seen, verified (`CTLogStore.verify(_:leaf:issuer:at:)`).
    ///   - notValidBefore: the leaf's notBefore.
    ///   - notValidAfter: the leaf's notAfter.
    ///   - list: the log list the SCTs were verified with.
    ///   - requirement: the host's requirement (list age and stale-list behaviour).
    ///   - time: the evaluation time.
    ///   - timeIsTheClock: whether `time` is the clock's (a handshake): a list dated after it
    ///     then means a wrong clock, and is stale. False for a time the caller chose to judge
    ///     at (`servertrust verify --at`): a later list is then judged by the state each log
    ///     had entered by `time` (``CTLogList/Log/state(at:)``). Default true.
    /// - Returns: the outcome, naming what was missing.
    public static func evaluate(
        _ observations: [SCTObservation], notValidBefore: Date, notValidAfter: Date, list: CTLogList,
        requirement: CertificateTransparencyRequirement, at time: Date, timeIsTheClock: Bool = true
    ) -> CertificateTransparencyOutcome {
        let age = time.timeIntervalSince(list.timestamp)
        if age > requirement.maximumLogListAge || (age < 0 && timeIsTheClock) {
            let detail =
                age < 0
                ? "The CT log list is dated \(list.timestamp.formatted(.iso8601)), in the future (is the clock right?)."
                : "The CT log list is \(Int(age / 86_400)) days old, over the \(Int(requirement.maximumLogListAge / 86_400))-day limit."
            return CertificateTransparencyOutcome(
                reason: .staleLogList, detail: detail, observations: observations, isEnforceable: requirement.staleLogList == .failClosed)
        }
        let counted = observations.filter { $0.status == .verified && $0.log?.state(at: time) != nil }
        // When the certificate was logged: the earliest SCT from a log that has not retired.
        let earliest = counted.filter {
            if case .retired = $0.log?.state(at: time) { return false }
            return true
        }.map(\.sct.timestampMilliseconds).min()
        func counts(_ observation: SCTObservation, retiredToo: Bool) -> Bool {
            switch observation.log?.state(at: time) {
            case .qualified, .usable, .readOnly: return true
            case .retired(let since):
                guard retiredToo, let earliest else { return false }
                return Double(earliest) / 1000 < since.timeIntervalSince1970
            default: return false
            }
        }
        let embedded = counted.filter { $0.sct.source == .embedded }
        let delivered = counted.filter { $0.sct.source != .embedded }
        var shortfall: (CertificateTransparencyOutcome.Reason, String)?
        if !embedded.isEmpty {
            let required = notValidAfter.timeIntervalSince(notValidBefore) <= shortLivedLimit ? 2 : 3
            let logs = embedded.filter { counts($0, retiredToo: true) }.compactMap(\.log)
            shortfall = judge(logs: logs, required: required, what: "embedded", current: embedded.contains { counts($0, retiredToo: false) })
            if shortfall == nil { return CertificateTransparencyOutcome(reason: nil, detail: "", observations: observations) }
        }
        if !delivered.isEmpty || embedded.isEmpty {
            let logs = delivered.filter { counts($0, retiredToo: false) }.compactMap(\.log)
            shortfall = judge(logs: logs, required: 2, what: "TLS-extension or OCSP", current: !logs.isEmpty)
            if shortfall == nil { return CertificateTransparencyOutcome(reason: nil, detail: "", observations: observations) }
        }
        var (reason, detail) = shortfall!
        // What was wrong with the SCTs that did not count, when that is why the count fell short.
        if reason == .notEnoughSCTs {
            if observations.contains(where: { $0.status == .badSignature }) {
                reason = .badSCTSignature
            } else if observations.contains(where: { $0.status == .unknownLog }) {
                reason = .unknownLog
            }
        }
        let ignored = observations.filter { !counted.contains($0) || !counts($0, retiredToo: $0.sct.source == .embedded) }
        if !ignored.isEmpty { detail += " Not counted: " + ignored.map { explain($0, at: time) }.joined(separator: "; ") + "." }
        return CertificateTransparencyOutcome(reason: reason, detail: detail, observations: observations)
    }

    private static func judge(logs: [CTLogList.Log], required: Int, what: String, current: Bool) -> (CertificateTransparencyOutcome.Reason, String)? {
        let distinct = Set(logs.map(\.id)).count
        guard current else {
            return (.notEnoughSCTs, "No \(what) SCT is from a log that is qualified, usable or read-only now.")
        }
        guard distinct >= required else {
            return (.notEnoughSCTs, "\(distinct) \(what) SCT\(distinct == 1 ? "" : "s") from distinct logs counted; \(required) are required.")
        }
        let operators = Set(logs.map(\.operatorName))
        guard operators.count >= 2 else {
            return (.notEnoughOperators, "The \(what) SCTs that count are all from logs of \(operators.sorted().joined()); 2 operators are required.")
        }
        return nil
    }

    private static func explain(_ observation: SCTObservation, at time: Date) -> String {
        let log = observation.log.map(\.name) ?? "unknown log \(observation.sct.logIDBase64)"
        if observation.status != .verified { return "\(observation.sct.source) SCT from \(log): \(observation.status.rawValue)" }
        switch observation.log?.state(at: time) {
        case nil: return "\(observation.sct.source) SCT from \(log): the log has no state at this time"
        case .retired(let since): return "\(observation.sct.source) SCT from \(log): the log retired \(since.formatted(.iso8601))"
        case let state?: return "\(observation.sct.source) SCT from \(log): the log is \(state.name)"
        }
    }
}

/// What the Certificate Transparency policy concluded for one server: compliant, or the reason
/// it was not, with every SCT seen.
public struct CertificateTransparencyOutcome: Hashable, Sendable, CustomStringConvertible {
    /// Why a certificate does not meet the policy.
    public enum Reason: String, Hashable, Sendable, CaseIterable {
        /// Too few SCTs from distinct logs the list counts.
        case notEnoughSCTs
        /// Enough SCTs, but all from logs of one operator.
        case notEnoughOperators
        /// Too few SCTs counted, and some were from logs outside the list.
        case unknownLog
        /// Too few SCTs counted, and some did not verify (another certificate's, a changed
        /// TBS, a forgery).
        case badSCTSignature
        /// The log list is older than the requirement allows, or dated in the future.
        case staleLogList
        /// No log list to check against (a policy evaluated without its manager's list): fails
        /// closed, whatever the stale-list behaviour.
        case noLogList
    }

    /// nil when the certificate meets the policy.
    public let reason: Reason?
    /// What was missing and what was not counted, in a sentence or two; empty when compliant.
    public let detail: String
    /// Every SCT seen, with its log, source, timestamp and verdict.
    public let observations: [SCTObservation]
    /// Whether an enforced requirement refuses on this outcome: false only for a stale list
    /// under ``CertificateTransparencyRequirement/StaleLogListBehaviour/failOpen``.
    public let isEnforceable: Bool

    public init(reason: Reason?, detail: String, observations: [SCTObservation], isEnforceable: Bool = true) {
        self.reason = reason
        self.detail = detail
        self.observations = observations
        self.isEnforceable = isEnforceable
    }

    /// Whether the certificate meets the policy.
    public var isCompliant: Bool { reason == nil }

    /// The error a failure is refused or reported with, naming the reason first; nil when compliant.
    func error(host: String) -> TrustError? {
        guard let reason else { return nil }
        return TrustError(
            .certificateTransparency,
            "Certificate Transparency (\(reason.rawValue)) for \(host): \(detail)"
                + (observations.isEmpty ? "" : " SCTs seen: " + observations.map(\.description).joined(separator: "; ") + "."),
            evaluator: "CertificateTransparency", host: host)
    }

    public var description: String {
        guard let reason else { return "compliant (\(observations.filter { $0.status == .verified }.count) verified SCTs)" }
        return "\(reason.rawValue): \(detail)"
    }
}
