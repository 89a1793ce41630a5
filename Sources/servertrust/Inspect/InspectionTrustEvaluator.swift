import Foundation
import ServerTrust

/// Records what a server presents and how default validation judges it, then accepts it.
///
/// `inspect` and `pins` exist to show chains that default validation rejects — an expired leaf,
/// a private CA, a wrong name, a proxy's impostor — and the handshake has to complete for the
/// chain to be seen at all. So this evaluator runs ``DefaultTrustEvaluator``, records each
/// check's outcome, and never throws.
///
/// That is safe only because of how ``ServerProbe`` uses it, which is its only use: one `HEAD`
/// (or `GET`) of `/` with no credentials, cookies or body, no redirect followed, and nothing of
/// the response used but its status line. `fetch`, which sends requests and prints what comes
/// back, never sees this type.
///
/// - Warning: Accepts every server. Never give it to a session that sends or trusts data.
final class InspectionTrustEvaluator: ServerTrustEvaluating {
    /// The first evaluation (later ones, on a reused connection, would see the same chain).
    private let recorded = Locked<Observation?>(nil)

    func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        guard recorded.withLock({ $0 == nil }) else { return }
        let observation = Observation(trust: trust, host: host)
        recorded.withLock { if $0 == nil { $0 = observation } }
    }

    var name: String { "InspectionTrustEvaluator" }

    /// Asks the server for an OCSP staple, so the report can show it.
    var usesStapledOCSPResponse: Bool { true }

    /// What the evaluation saw, or nil when no handshake reached the evaluator.
    var observation: Observation? { recorded.withLock { $0 } }
}

/// The outcome of one check, as `inspect` reports it.
enum CheckOutcome: Sendable {
    case passed(String)
    case failed(TrustError)
    case notChecked(String)

    var passed: Bool {
        if case .passed = self { return true }
        return false
    }

    /// `passed`, `failed` or `notChecked`, for JSON.
    var identifier: String {
        switch self {
        case .passed: "passed"
        case .failed: "failed"
        case .notChecked: "notChecked"
        }
    }

    /// The one-line explanation.
    var detail: String {
        switch self {
        case .passed(let detail), .notChecked(let detail): detail
        case .failed(let error): error.reason
        }
    }
}

/// One server's chain and the outcome of each default check on it.
struct Observation: Sendable {
    let host: String
    let validationTime: Date
    /// As sent, leaf first.
    let presentedChain: [Certificate]
    /// Leaf to anchor; empty when the chain check failed.
    let validatedChain: [Certificate]
    /// Chain to the anchors: signatures, validity at ``validationTime``, serverAuth purpose.
    let chain: CheckOutcome
    /// The leaf against the host name or IP address.
    let hostName: CheckOutcome
    /// The stapled OCSP response, if any, verified for the leaf. Informational: default
    /// validation does not require one.
    let stapledOCSP: CheckOutcome
    /// The stapled OCSP response as received, for `audit` to judge revocation with.
    let stapledOCSPResponse: [UInt8]?

    /// Whether a client with default validation would accept the server.
    var passesDefaultValidation: Bool { chain.passed && hostName.passed }

    init(trust: ServerTrust, host: String) {
        self.host = host
        validationTime = trust.validationTime
        presentedChain = trust.presentedChain
        stapledOCSPResponse = trust.stapledOCSPResponse
        var validated: [Certificate] = []
        do {
            // Both evaluators validate against the trust's anchors, so OpenSSL runs once and the
            // second evaluation adds only the host check.
            try DefaultTrustEvaluator(validateHost: false).evaluate(trust, forHost: host)
            validated = try trust.validatedChain()
            chain = .passed("validates to \(validated.last?.subject ?? "an anchor") (\(validated.count) certificates): signatures, validity, serverAuth")
        } catch {
            chain = .failed(Self.trustError(error))
        }
        validatedChain = validated
        if chain.passed {
            do {
                try DefaultTrustEvaluator().evaluate(trust, forHost: host)
                hostName = .passed("the leaf is valid for \(host)")
            } catch {
                hostName = .failed(Self.trustError(error))
            }
        } else {
            hostName = Self.checkHostOnLeafAlone(trust, host: host)
        }
        stapledOCSP = Self.checkStaple(trust, chainValidated: !validated.isEmpty)
    }

    /// The host check when the chain fails, so one run shows both problems: the leaf made its
    /// own anchor and judged inside its validity period, so only the name can fail. When the
    /// leaf fails something else too (no serverAuth), the name is reported as not checked.
    private static func checkHostOnLeafAlone(_ trust: ServerTrust, host: String) -> CheckOutcome {
        guard let leaf = trust.presentedChain.first, let anchors = try? TrustAnchors([leaf]) else {
            return .notChecked("no leaf to check")
        }
        let middle = Date(
            timeIntervalSince1970: (leaf.notValidBefore.timeIntervalSince1970 + leaf.notValidAfter.timeIntervalSince1970) / 2)
        let alone = ServerTrust(presentedChain: [leaf], anchors: anchors, validationTime: middle, validationOptions: trust.validationOptions)
        do {
            try DefaultTrustEvaluator().evaluate(alone, forHost: host)
            return .passed("the leaf is valid for \(host) (checked on the leaf alone, as the chain failed)")
        } catch let error as TrustError where error.code == .hostMismatch {
            return .failed(error)
        } catch {
            return .notChecked("the chain failed, and the leaf alone fails other checks too")
        }
    }

    private static func checkStaple(_ trust: ServerTrust, chainValidated: Bool) -> CheckOutcome {
        guard trust.stapledOCSPResponse != nil else {
            return .notChecked("no OCSP response was stapled")
        }
        guard chainValidated else {
            return .notChecked("a response was stapled; not verified, as the chain failed")
        }
        do {
            let result = try trust.stapledOCSPStatus()
            switch result.status {
            case .good:
                return .passed("GOOD: \(result.explanation)")
            case .revoked:
                return .failed(TrustError(.revoked, "REVOKED: \(result.explanation)", evaluator: "StapledOCSP"))
            case .unknown(let reason):
                return .failed(TrustError(.revocationStatusUnknown, "UNKNOWN (\(reason.identifier)): \(result.explanation)", evaluator: "StapledOCSP"))
            }
        } catch {
            return .notChecked("the staple could not be checked: \(trustError(error).reason)")
        }
    }

    private static func trustError(_ error: any Error) -> TrustError {
        error as? TrustError ?? TrustError(.openSSLFailure, "\(error)")
    }
}
