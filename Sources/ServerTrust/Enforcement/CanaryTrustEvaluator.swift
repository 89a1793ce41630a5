/// Runs a trial policy beside the enforced one and records every disagreement, so a new pin set
/// (or revocation setting) can be trialled on real traffic before it is enforced.
///
/// The enforced evaluator alone decides. Both always run on the same ``PeerTrust`` (sharing
/// its path validation), the trial through its report-only view: a chain the trial validates
/// (against other anchors, say) is never adopted by the enforced side, so the trial cannot
/// widen what is enforced. When exactly one of them rejects, a ``TrustFinding`` with mode
/// ``EnforcementMode/canary`` and code `TrustError.Code.canaryDisagreement` is recorded,
/// carrying the trial's evidence (its configured pins and the chain), and a session reports it.
/// Agreement — both accept, or both reject — records nothing of the canary's.
public final class CanaryTrustEvaluator: ServerTrustEvaluating {
    public let enforced: any ServerTrustEvaluating
    public let trial: any ServerTrustEvaluating

    public init(enforced: any ServerTrustEvaluating, trial: any ServerTrustEvaluating) {
        self.enforced = enforced
        self.trial = trial
    }

    public func evaluate(_ trust: PeerTrust, forHost host: String) throws {
        let trialError = Self.failure(of: trial, trust.reportOnly(), host)
        let enforcedError = Self.failure(of: enforced, trust, host)
        switch (enforcedError, trialError) {
        case (nil, let trialError?):
            trust.record(TrustFinding(
                error: TrustError(
                    .canaryDisagreement,
                    "The trial policy \(trial.name) would reject this server, which the enforced policy \(enforced.name) accepts: "
                        + "\(trialError.code): \(trialError.reason)",
                    evaluator: trial.name, host: host, evidence: trialError.evidence),
                mode: .canary))
        case (let enforcedError?, nil):
            trust.record(TrustFinding(
                error: TrustError(
                    .canaryDisagreement,
                    "The trial policy \(trial.name) would accept this server, which the enforced policy \(enforced.name) rejects: "
                        + "\(enforcedError.code): \(enforcedError.reason)",
                    evaluator: trial.name, host: host, evidence: enforcedError.evidence),
                mode: .canary))
        default:
            break
        }
        if let enforcedError { throw enforcedError }
    }

    private static func failure(of evaluator: any ServerTrustEvaluating, _ trust: PeerTrust, _ host: String) -> TrustError? {
        do {
            try evaluator.evaluate(trust, forHost: host)
            return nil
        } catch let error as TrustError {
            return error.attributed(to: evaluator.name, host: host)
        } catch {
            return TrustError(.openSSLFailure, "\(evaluator.name) threw \(error)", evaluator: evaluator.name, host: host)
        }
    }

    public var usesStapledOCSPResponse: Bool { enforced.usesStapledOCSPResponse || trial.usesStapledOCSPResponse }

    public var usesSignedCertificateTimestamps: Bool {
        enforced.usesSignedCertificateTimestamps || trial.usesSignedCertificateTimestamps
    }

    /// The trial runs in the handshake too, so its fetches count.
    public var mayFetchRevocationData: Bool { enforced.mayFetchRevocationData || trial.mayFetchRevocationData }

    public var name: String { "CanaryTrustEvaluator(\(enforced.name), trial: \(trial.name))" }
}

extension ServerTrustEvaluating where Self == CanaryTrustEvaluator {
    /// `enforced` decides; `trial` runs beside it and its disagreements are reported.
    public static func canary(enforced: any ServerTrustEvaluating, trial: any ServerTrustEvaluating) -> CanaryTrustEvaluator {
        CanaryTrustEvaluator(enforced: enforced, trial: trial)
    }
}
