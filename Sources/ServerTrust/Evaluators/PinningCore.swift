import Foundation

/// The logic the three pinning evaluators share: validate, then look for a pin in the
/// *validated* chain.
///
/// With default validation on, the chain is validated against the trust's anchors and a pin must
/// appear on that path. With it off, the pinned material itself becomes the only anchors, so
/// signatures and validity are still checked: the leaf must chain, by signatures, to a pinned
/// certificate or key. A pinned certificate that was merely *sent* but is not on the verified
/// path never satisfies a pin.
struct PinningCore: Sendable {
    let evaluatorName: String
    let configuredPins: [Pin]
    let performDefaultValidation: Bool
    let validateHost: Bool
    /// Pinned certificates that may act as anchors when default validation is off.
    let pinnedCertificates: [Certificate]
    /// An empty store: with default validation off, anchors come only from the trusted stack.
    let emptyStore: X509TrustStore

    init(
        evaluatorName: String, configuredPins: [Pin], pinnedCertificates: [Certificate] = [],
        performDefaultValidation: Bool, validateHost: Bool
    ) throws {
        guard !configuredPins.isEmpty else {
            throw TrustError(.invalidConfiguration, "\(evaluatorName) needs at least one pin.", evaluator: evaluatorName)
        }
        self.evaluatorName = evaluatorName
        self.configuredPins = configuredPins
        self.pinnedCertificates = pinnedCertificates
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
        emptyStore = try X509TrustStore(anchors: [])
    }

    /// - Returns: the validated chain the pin was found in.
    @discardableResult
    func evaluate(_ trust: ServerTrust, host: String, matches: (Certificate) -> Bool) throws -> [Certificate] {
        do {
            let chain: [Certificate]
            if performDefaultValidation {
                chain = try trust.validatedChain()
            } else {
                let anchors = pinnedCertificates + trust.presentedChain.filter(matches)
                guard !anchors.isEmpty else { throw mismatch(chain: trust.presentedChain, validated: false) }
                do {
                    chain = try trust.validatedChain(trusting: anchors, emptyStore: emptyStore)
                } catch let error as TrustError where Self.noPathToAnchor(error) {
                    // The leaf does not chain to any pinned material: that is a pin mismatch,
                    // shown with the path OpenSSL did build (never the pinned certificate that
                    // was merely sent).
                    var evidence = error.evidence
                    evidence.configuredPins = configuredPins
                    throw TrustError(
                        .pinMismatch,
                        "The leaf does not chain to a pinned certificate or key (\(error.evidence.verifyResultText ?? "no path")). "
                            + "If this server is genuine, pin one of the peer keys listed below (servertrust fetch --pin sha256/…).",
                        evidence: evidence)
                }
            }
            guard chain.contains(where: matches) else { throw mismatch(chain: chain, validated: true) }
            if validateHost { try HostNameVerifier.verify(chain[0], host: host) }
            return chain
        } catch let error as TrustError {
            throw error.attributed(to: evaluatorName, host: host)
        }
    }

    /// OpenSSL errors meaning "no path from the leaf to an anchor": unable to get issuer
    /// (2, 20), self-signed leaf or chain root not trusted (18, 19), unable to verify the first
    /// certificate (21).
    private static func noPathToAnchor(_ error: TrustError) -> Bool {
        guard error.code == .chainValidationFailed, let result = error.evidence.verifyResult else { return false }
        return [2, 18, 19, 20, 21].contains(result)
    }

    private func mismatch(chain: [Certificate], validated: Bool) -> TrustError {
        var evidence = TrustError.Evidence()
        evidence.configuredPins = configuredPins
        evidence.chain = chain.map(\.summary)
        let what = validated ? "validated chain" : "presented chain"
        return TrustError(
            .pinMismatch,
            "No certificate of the \(what) (\(chain.count) certificate\(chain.count == 1 ? "" : "s")) matches a configured pin. "
                + "If this server is genuine, pin one of the peer keys listed below (servertrust fetch --pin sha256/…).",
            evidence: evidence)
    }
}
