/// Runs several evaluators in order; all must pass, and the first failure is thrown as is,
/// naming the evaluator that failed.
public final class CompositeTrustEvaluator: ServerTrustEvaluating {
    /// The evaluators, in the order they run.
    public let evaluators: [any ServerTrustEvaluating]

    /// - Throws: `TrustError.Code.invalidConfiguration` for an empty list, which would accept
    ///   everything.
    public init(_ evaluators: [any ServerTrustEvaluating]) throws {
        guard !evaluators.isEmpty else {
            throw TrustError(.invalidConfiguration, "A composite evaluator needs at least one evaluator.", evaluator: "CompositeTrustEvaluator")
        }
        self.evaluators = evaluators
    }

    public func evaluate(_ trust: PeerTrust, forHost host: String) throws {
        for evaluator in evaluators {
            try evaluator.attributing(host: host) { try evaluator.evaluate(trust, forHost: host) }
        }
    }

    public var usesStapledOCSPResponse: Bool { evaluators.contains { $0.usesStapledOCSPResponse } }

    public var usesSignedCertificateTimestamps: Bool { evaluators.contains { $0.usesSignedCertificateTimestamps } }

    public var mayFetchRevocationData: Bool { evaluators.contains { $0.mayFetchRevocationData } }

    public var name: String { "CompositeTrustEvaluator(" + evaluators.map(\.name).joined(separator: ", ") + ")" }
}

extension ServerTrustEvaluating where Self == CompositeTrustEvaluator {
    /// All of `evaluators` must pass: `.composite([.default(), try .pinnedKeyHashes([…])])`.
    public static func composite(_ evaluators: [any ServerTrustEvaluating]) throws -> CompositeTrustEvaluator {
        try CompositeTrustEvaluator(evaluators)
    }
}
