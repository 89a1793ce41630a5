/// Runs an evaluator in report-only mode: its failure is recorded as a ``TrustFinding`` with
/// mode ``EnforcementMode/informational`` and the connection is accepted.
///
/// Works around any evaluator, revocation included: `.informational(try .pinnedKeyHashes(…))`,
/// `.informational(RevocationTrustEvaluator(…))`. A session marks the response's trust result
/// failed, logs the failure at error level and sends a failure report. Policies are compared by
/// identity, so a connection accepted under an informational policy is re-evaluated before an
/// enforced policy for the same host may use it.
///
/// The wrapped evaluator sees a report-only view of the trust: a chain it validates (against
/// anchors of its own, say) is never adopted by an enforcing evaluator such as
/// ``RevocationTrustEvaluator``, so a trial cannot widen what the enforced policy accepts.
///
/// - Warning: nothing is enforced. Combine with enforced validation, e.g.
///   `.composite([.default(), .informational(newPins)])`, so the host keeps default protection.
public final class InformationalTrustEvaluator: ServerTrustEvaluating {
    /// The evaluator whose verdict is reported but not enforced.
    public let evaluator: any ServerTrustEvaluating

    public init(_ evaluator: any ServerTrustEvaluating) {
        self.evaluator = evaluator
    }

    public func evaluate(_ trust: PeerTrust, forHost host: String) throws {
        do {
            try evaluator.evaluate(trust.reportOnly(), forHost: host)
        } catch let error as TrustError {
            trust.record(TrustFinding(error: error.attributed(to: evaluator.name, host: host), mode: .informational))
        } catch {
            trust.record(TrustFinding(
                error: TrustError(.openSSLFailure, "\(evaluator.name) threw \(error)", evaluator: evaluator.name, host: host),
                mode: .informational))
        }
    }

    public var usesStapledOCSPResponse: Bool { evaluator.usesStapledOCSPResponse }

    public var usesSignedCertificateTimestamps: Bool { evaluator.usesSignedCertificateTimestamps }

    /// Report-only, but it runs in the handshake all the same: its fetches count.
    public var mayFetchRevocationData: Bool { evaluator.mayFetchRevocationData }

    public var name: String { "InformationalTrustEvaluator(\(evaluator.name))" }
}

extension ServerTrustEvaluating where Self == InformationalTrustEvaluator {
    /// Report-only: `evaluator`'s failures are recorded and reported, never enforced.
    public static func informational(_ evaluator: any ServerTrustEvaluating) -> InformationalTrustEvaluator {
        InformationalTrustEvaluator(evaluator)
    }
}
