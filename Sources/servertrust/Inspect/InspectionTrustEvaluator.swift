import Foundation
import ServerTrust

/// Records what a server presents and how default validation judges it (a
/// ``ChainInspection``), then accepts it.
///
/// `inspect` and `pins` exist to show chains that default validation rejects — an expired leaf,
/// a private CA, a wrong name, a proxy's impostor — and the handshake has to complete for the
/// chain to be seen at all. So this evaluator records the inspection and never throws.
///
/// That is safe only because of how ``ServerProbe`` uses it, which is its only use: one `HEAD`
/// (or `GET`) of `/` with no credentials, cookies or body, no redirect followed, and nothing of
/// the response used but its status line. `fetch`, which sends requests and prints what comes
/// back, never sees this type.
///
/// - Warning: Accepts every server. Never give it to a session that sends or trusts data.
final class InspectionTrustEvaluator: ServerTrustEvaluating {
    /// The first evaluation (later ones, on a reused connection, would see the same chain).
    private let recorded = Locked<ChainInspection?>(nil)

    func evaluate(_ trust: PeerTrust, forHost host: String) throws {
        guard recorded.withLock({ $0 == nil }) else { return }
        let observation = ChainInspection(trust: trust, host: host)
        recorded.withLock { if $0 == nil { $0 = observation } }
    }

    var name: String { "InspectionTrustEvaluator" }

    /// Asks the server for an OCSP staple, so the report can show it.
    var usesStapledOCSPResponse: Bool { true }

    /// Asks for the SCTs of the TLS extension, so the report can show them.
    var usesSignedCertificateTimestamps: Bool { true }

    /// What the evaluation saw, or nil when no handshake reached the evaluator.
    var observation: ChainInspection? { recorded.withLock { $0 } }
}
