package import Foundation

/// Verifies a presented chain offline, as a client with this policy would in the handshake:
/// path validation to the anchors, the host, the pins, and optionally the stapled OCSP
/// response. What `servertrust verify` runs, for an application's own tests and tooling.
///
/// Nothing here decides anything itself: the checks are the library's evaluators —
/// ``DefaultTrustEvaluator`` without pins, ``PinnedKeyHashesTrustEvaluator`` with them, and a
/// ``RevocationTrustEvaluator`` composed after either when a staple is to be judged — so an
/// offline verdict is the verdict a ``ServerTrustManager`` with the same policy would give.
package struct ChainVerification: Sendable {
    /// How the stapled OCSP response is judged: revocation checking from the staple alone, never
    /// the network.
    package struct StapleCheck: Sendable {
        /// The DER response, treated as stapled; `nil` to judge a server that stapled nothing.
        package var response: [UInt8]?
        /// ``RevocationOptions/stapleRequired`` (hard-fail) or ``RevocationOptions/ocspStapled``
        /// (soft-fail: REVOKED rejects, UNKNOWN is accepted and reported, but rejects a
        /// must-staple leaf), with the maximum response age chosen.
        package var options: RevocationOptions

        /// - Parameters:
        ///   - response: the DER response, or `nil` for none.
        ///   - required: hard-fail: only a verified, fresh GOOD is accepted.
        ///   - maximumAge: the oldest response accepted, by thisUpdate; default 7 days.
        /// - Throws: `TrustError.Code.invalidConfiguration` for a maximum age that is not
        ///   positive.
        package init(response: [UInt8]?, required: Bool, maximumAge: TimeInterval = 7 * 24 * 60 * 60) throws {
            guard maximumAge > 0 else {
                throw TrustError(.invalidConfiguration, "The maximum OCSP response age must be a positive number of seconds, not \(maximumAge).")
            }
            self.response = response
            options = required ? .stapleRequired : .ocspStapled
            options.maximumResponseAge = maximumAge
        }
    }

    package var presentedChain: [Certificate]
    package var anchors: TrustAnchors
    package var validationTime: Date
    /// SPKI pins any certificate of the validated chain may match — the anchors above the
    /// validated path that issued its top included (``PeerTrust/validatedChain()``); empty for
    /// no pinning.
    package var pins: [Pin]
    /// The staple to judge; `nil` for no revocation check.
    package var staple: StapleCheck?
    /// Certificate Transparency to check once the chain validates: the list's store and the
    /// requirement (an enforced one rejects, `TrustError.Code.certificateTransparency`); nil
    /// (the default) for none. The leaf's embedded SCTs are verified with the chain's issuer,
    /// and the staple's SCTs too.
    package var certificateTransparency: (logs: CTLogStore, requirement: CertificateTransparencyRequirement)?
    /// Whether ``validationTime`` is the clock's rather than a time chosen to judge at
    /// (`servertrust verify --at`). For a chosen time, a CT log list dated after it is no sign of
    /// a wrong clock: each log is judged by the state it had entered by then. Default true.
    package var validationTimeIsTheClock = true

    /// - Parameters:
    ///   - presentedChain: as the server would send it, leaf first.
    ///   - anchors: the trust anchors (and CRLs, which turn on CRL checking of the whole chain).
    ///   - validationTime: default now.
    ///   - pins: default none.
    ///   - staple: default `nil`, no revocation check.
    package init(
        presentedChain: [Certificate], anchors: TrustAnchors, validationTime: Date = Date(), pins: [Pin] = [],
        staple: StapleCheck? = nil
    ) {
        self.presentedChain = presentedChain
        self.anchors = anchors
        self.validationTime = validationTime
        self.pins = pins
        self.staple = staple
    }

    /// Runs the evaluation. Never throws: a rejection, and a configuration the evaluators refuse
    /// (evaluator `configuration`), are in the report's ``Report/error``.
    ///
    /// - Parameter host: the host or IP address the leaf must be valid for; `nil` skips the
    ///   host check.
    package func verify(host: String?) -> Report {
        let trust = PeerTrust(
            presentedChain: presentedChain, anchors: anchors, validationTime: validationTime,
            stapledOCSPResponse: staple?.response)
        let primary: any ServerTrustEvaluating
        let evaluator: any ServerTrustEvaluating
        do {
            primary = pins.isEmpty
                ? DefaultTrustEvaluator(anchors: nil, checksHost: host != nil)
                : try PinnedKeyHashesTrustEvaluator(pins: pins, performDefaultValidation: true, checksHost: host != nil)
            // A private cache: an offline verdict rests on the given staple alone, never on an
            // answer an earlier verification in this process left behind.
            evaluator = try staple.map { staple in
                try CompositeTrustEvaluator([primary, RevocationTrustEvaluator(options: staple.options, cache: RevocationCache())])
            } ?? primary
        } catch {
            return Report(
                evaluator: "configuration", host: host, validatedChain: [], matchedPins: pins.isEmpty ? nil : [],
                failure: Self.trustError(error),
                revocation: .notRequested)
        }
        var failure: TrustError?
        var transparency: CertificateTransparencyOutcome?
        do {
            if let host {
                try evaluator.evaluateAsPolicy(trust, forHost: host)
            } else {
                try evaluator.evaluate(trust, forHost: "")
            }
            if let (logs, requirement) = certificateTransparency {
                let outcome = logs.evaluate(
                    trust.certificateTransparencyChain, handshake: trust.handshake, requirement: requirement, at: validationTime,
                    timeIsTheClock: validationTimeIsTheClock)
                transparency = outcome
                if requirement.mode == .enforced, outcome.isEnforceable, let refusal = outcome.error(host: host ?? "the server") { throw refusal }
            }
        } catch {
            failure = Self.trustError(error)
        }
        var report = Report(
            evaluator: primary.name, host: host, validatedChain: (try? trust.validatedChain()) ?? [],
            matchedPins: pins.isEmpty ? nil : trust.pinMatches, failure: failure,
            revocation: revocationSummary(trust))
        report.certificateTransparency = transparency.map { CertificateTransparencyReport($0, requirement: certificateTransparency!.requirement) }
        return report
    }

    private func revocationSummary(_ trust: PeerTrust) -> Report.Revocation {
        guard staple != nil else { return .notRequested }
        // No result: the evaluator before the revocation check rejected the chain.
        guard let leaf = trust.revocationResults?.first else {
            return Report.Revocation(status: "notChecked", reason: "chainValidationFailed")
        }
        return Report.Revocation(leaf)
    }

    private static func trustError(_ error: any Error) -> TrustError {
        error as? TrustError ?? TrustError(.openSSLFailure, "\(error)")
    }
}
