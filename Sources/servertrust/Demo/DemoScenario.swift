import Foundation
import ServerTrust
import ServerTrustHTTP

/// One row of the demo: a server, the client policy that meets it, and the verdict expected.
struct DemoScenario {
    /// What the client expects to happen.
    enum Expectation: Equatable {
        case accepted
        case rejected(TrustError.Code)

        var text: String {
            switch self {
            case .accepted: "accepted"
            case .rejected(let code): "rejected (\(code))"
            }
        }
    }

    let server: String
    let evaluator: String
    let expected: Expectation
    /// Runs the scenario and returns what happened.
    let run: () async -> DemoOutcome
}

/// What happened in one scenario.
struct DemoOutcome {
    /// `nil` means accepted.
    let failure: TrustError?
    /// Why, in a few words.
    let reason: String

    var verdict: DemoScenario.Expectation { failure.map { .rejected($0.code) } ?? .accepted }

    static func accepted(_ reason: String) -> DemoOutcome { DemoOutcome(failure: nil, reason: reason) }

    static func rejected(_ error: TrustError) -> DemoOutcome {
        DemoOutcome(failure: error, reason: "\(error.code): \(firstSentence(error.reason))")
    }

    /// A failure that is not a trust decision (a local server that did not answer).
    static func broken(_ error: any Error) -> DemoOutcome {
        DemoOutcome(failure: TrustError(.openSSLFailure, "\(error)"), reason: "error: \(firstLine("\(error)"))")
    }

    private static func firstSentence(_ text: String) -> String {
        let line = firstLine(text)
        guard let end = line.range(of: ". ") else { return line }
        return String(line[..<end.lowerBound]) + "."
    }

    private static func firstLine(_ text: String) -> String {
        String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
    }
}

extension DemoScenario {
    /// A GET of `/` on `url` through `session`, judged by the session's policy.
    static func request(_ url: String, through session: Session, explainAcceptance: @escaping (TrustReport) -> String) -> () async -> DemoOutcome {
        {
            do {
                let response = try await session.get(url)
                return .accepted(explainAcceptance(response.trust))
            } catch let error as SessionError {
                if let trust = error.trustError { return .rejected(trust) }
                return .broken(error)
            } catch {
                return .broken(error)
            }
        }
    }
}
