package import Foundation
import Logging

extension TrustAudit {
    /// What the audit found for one host of a policy file.
    ///
    /// JSON fields: `pattern`, `mode`, `line` (in the policy file), `status`, `host` (absent
    /// when skipped), `note` (why skipped or unreachable), `failure` and `failureAtWarnHorizon`
    /// (`{code, reason, evaluator}`), `findings` (report-only failures,
    /// `{mode, code, reason, evaluator}`), `matchingPins` (`{pin, label}`), `hasBackup` (absent
    /// without a pin set or a validated chain) and `expirations` (``Expiry``, soonest first).
    package struct HostReport: Sendable, Encodable {
        package let pattern: HostPattern
        package let mode: EnforcementMode
        /// The policy's line in its file.
        package let line: Int
        /// Whether the policy pins keys (and so has matching pins and a backup to report).
        package let isPinned: Bool
        /// The host connected to, or `nil` when skipped.
        package let host: String?
        package let status: Status
        /// Today's rejection, if any.
        package let failure: TrustError?
        /// The rejection at the horizon, if any (and none today).
        package let failureAtWarnHorizon: TrustError?
        /// Report-only failures and canary disagreements today.
        package let findings: [TrustFinding]
        /// The configured pins found in the validated chain.
        package let matchingPins: [PinSet.Entry]
        /// Whether an active pin is *not* in the chain; `nil` without a pin set or a validated chain.
        package let hasBackup: Bool?
        /// Soonest first.
        package let expirations: [Expiry]
        /// Why the host was skipped or unreachable.
        package let note: String?

        private init(
            policy: TrustPolicyFile.Host, host: String?, status: Status, failure: TrustError? = nil,
            failureAtWarnHorizon: TrustError? = nil, findings: [TrustFinding] = [], matchingPins: [PinSet.Entry] = [],
            hasBackup: Bool? = nil, expirations: [Expiry] = [], note: String?
        ) {
            pattern = policy.pattern
            mode = policy.policy.mode == .enforced ? .enforced : .informational
            line = policy.line
            isPinned = policy.policy.pins != nil
            self.host = host
            self.status = status
            self.failure = failure
            self.failureAtWarnHorizon = failureAtWarnHorizon
            self.findings = findings
            self.matchingPins = matchingPins
            self.hasBackup = hasBackup
            self.expirations = expirations
            self.note = note
        }

        /// A wildcard pattern with no host to probe.
        package static func skipped(_ policy: TrustPolicyFile.Host, note: String) -> HostReport {
            HostReport(policy: policy, host: nil, status: .skipped, note: note)
        }

        /// A host whose server could not be reached: `note` says why.
        package static func unreachable(_ policy: TrustPolicyFile.Host, host: String, note: String) -> HostReport {
            HostReport(policy: policy, host: host, status: .unreachable, note: note)
        }

        /// Judges `presentedChain` (the live chain of `host`) under the host's whole policy at
        /// `now`, revocation included (the staple, then live queries through
        /// `revocationFetcher`), and its enforced pins and certificate dates at
        /// `now + warnDays`.
        ///
        /// Only the enforced pin set (or default validation) is judged at the horizon:
        /// revocation cannot be (no OCSP response or CRL for a future date exists yet), and an
        /// informational or canary policy never rejects.
        ///
        /// - Parameters:
        ///   - policy: the host's entry in the policy file: its evaluator, mode and pin set.
        ///   - host: the host name the chain was fetched from, checked against the leaf.
        ///   - presentedChain: the chain the server sent, leaf first.
        ///   - stapledOCSPResponse: the DER OCSP response the server stapled, or `nil` if none.
        ///   - anchors: the roots the chain is validated against.
        ///   - revocationFetcher: for live revocation queries; `nil` leaves a status no staple
        ///     answers unknown.
        ///   - now: the instant the chain is judged at today.
        ///   - warnDays: how many days after `now` the horizon lies.
        package init(
            policy: TrustPolicyFile.Host, host: String, presentedChain: [Certificate], stapledOCSPResponse: [UInt8]?,
            anchors: TrustAnchors, revocationFetcher: (any RevocationFetcher)?, now: Date, warnDays: Int
        ) {
            let horizon = now.addingTimeInterval(TimeInterval(warnDays) * 86_400)
            // Both through the entry point every client path uses; the audit reports what it
            // finds itself, so nothing is logged.
            let resolved = ResolvedHostPolicy.failingClosed(host: NormalizedHost(host), pattern: policy.pattern, policy: policy.policy)
            let evaluation = resolved.evaluate(
                presentedChain, handshake: HandshakeEvidence(stapledOCSPResponse: stapledOCSPResponse),
                in: TrustEvaluationContext(anchors: anchors, revocationFetcher: revocationFetcher, clock: { now }, logger: Self.silent))
            let today = evaluation.trust
            let failure = evaluation.failure
            // Only the enforced pins (or default validation): nothing trialled, no revocation.
            var atHorizon = policy.policy
            if atHorizon.mode.pins != .enforced { atHorizon.pins = nil }
            (atHorizon.revocation, atHorizon.canary, atHorizon.mode) = (nil, nil, .enforced)
            let future = ResolvedHostPolicy.failingClosed(host: resolved.host, pattern: policy.pattern, policy: atHorizon)
                .evaluate(presentedChain, in: TrustEvaluationContext(anchors: anchors, clock: { horizon }, logger: Self.silent)).failure
            let validated = (try? today.validatedChain()) ?? []

            var expirations: [Expiry] = []
            func add(_ what: String, _ date: Date) {
                expirations.append(Expiry(what: what, date: date, days: PinSet.days(from: now, to: date)))
            }
            if let pinSet = policy.policy.pins {
                for entry in pinSet.entries { if let date = entry.notAfter { add("pin \(entry)", date) } }
                if let date = pinSet.expiration { add("pin set", date) }
            }
            if let canary = policy.policy.canary, let date = canary.effectiveExpiration { add("canary pin set", date) }
            if let leaf = presentedChain.first { add("leaf certificate \(leaf.subject)", leaf.notValidAfter) }
            if let earliest = validated.dropFirst().min(by: { $0.notValidAfter < $1.notValidAfter }) {
                add("issuer certificate \(earliest.subject)", earliest.notValidAfter)
            }

            self.init(
                policy: policy, host: host, status: failure != nil ? .fails : future != nil ? .failsWithinWarnDays : .ok,
                failure: failure, failureAtWarnHorizon: failure == nil ? future : nil, findings: today.findings,
                matchingPins: policy.policy.pins.map { $0.matchingEntries(in: validated, at: now) } ?? [],
                hasBackup: validated.isEmpty ? nil : policy.policy.pins.map { $0.hasBackup(for: validated, at: now) },
                expirations: expirations.sorted { $0.date < $1.date }, note: nil)
        }

        private static let silent = Logger(label: TrustLogging.label, factory: { _ in SwiftLogNoOpLogHandler() })

        // MARK: JSON

        private enum CodingKeys: String, CodingKey {
            case pattern, mode, line, status, host, note, failure, failureAtWarnHorizon, findings, matchingPins, hasBackup,
                expirations
        }

        /// `{code, reason, evaluator}` of a rejection; with `mode`, of a finding.
        private struct Rejection: Encodable {
            let mode: String?
            let code: String
            let reason: String
            let evaluator: String

            init(_ error: TrustError, mode: EnforcementMode? = nil) {
                self.mode = mode?.description
                code = error.code.description
                reason = error.reason
                evaluator = error.evaluator ?? ""
            }
        }

        private struct MatchingPin: Encodable {
            let pin: String
            let label: String
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(pattern.description, forKey: .pattern)
            try container.encode(mode.description, forKey: .mode)
            try container.encode(line, forKey: .line)
            try container.encode(status, forKey: .status)
            try container.encodeIfPresent(host, forKey: .host)
            try container.encodeIfPresent(note, forKey: .note)
            try container.encodeIfPresent(failure.map { Rejection($0) }, forKey: .failure)
            try container.encodeIfPresent(failureAtWarnHorizon.map { Rejection($0) }, forKey: .failureAtWarnHorizon)
            try container.encode(findings.map { Rejection($0.error, mode: $0.mode) }, forKey: .findings)
            try container.encode(matchingPins.map { MatchingPin(pin: $0.pin.description, label: $0.label) }, forKey: .matchingPins)
            try container.encodeIfPresent(hasBackup, forKey: .hasBackup)
            try container.encode(expirations, forKey: .expirations)
        }
    }
}
