import Foundation

/// The logic the pinning evaluators share: validate, then look for a pin in the *validated*
/// chain.
///
/// With default validation on, the chain is validated against the trust's anchors and a pin must
/// appear on that path. With it off, the pinned material itself becomes the only anchors, so
/// signatures and validity are still checked: the leaf must chain, by signatures, to a pinned
/// certificate or key. A pinned certificate that was merely *sent* but is not on the verified
/// path never satisfies a pin.
///
/// ## Which certificate may be the anchor without default validation
///
/// OpenSSL checks nothing about an anchor's own signature, and takes its validity, CA flag,
/// path length and name constraints as written. A key pin knows a key, not the genuine
/// certificate's fields, so a presented certificate carrying a pinned key is an anchor only
/// when something trusted vouches for those fields:
///
/// - a **configured** certificate (``PinnedCertificatesTrustEvaluator``): the application
///   supplied it whole;
/// - a certificate **self-signed by the pinned key** whose signature verifies: the key holder
///   chose its fields (a pinned private root the server sends);
/// - the **leaf** itself: its fields constrain nothing below it, and the TLS handshake proves
///   the server holds its key — the holder of a pinned key could as well sign a new
///   certificate for it.
///
/// Any other presented certificate with a pinned key — an intermediate signed by an issuer
/// nothing trusts here, or a "self-signed" copy whose signature does not verify — is refused
/// with `TrustError.Code.chainValidationFailed`: a copy with a later notAfter, no name
/// constraints, no path length or `CA:TRUE` would carry the same key and look the same, and
/// would let everything the pinned key ever signed pass beyond what the genuine certificate
/// allows. Every certificate between the leaf and the anchor is validated in full. Pin such an
/// intermediate with default validation on (its root among the anchors), or pin the
/// certificate itself.
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

    /// Looks for a pin in the validated chain — with default validation, the path extended
    /// upward through the anchors that issued its top (``PeerTrust/validatedChain()``), so a
    /// pin on a root matches whether or not the anchors also hold its intermediate — and
    /// records which certificates matched (``PeerTrust/pinMatches``).
    ///
    /// - Returns: the validated chain the pin was found in.
    @discardableResult
    func evaluate(_ trust: PeerTrust, host: String, matches: (Certificate) -> Bool) throws -> [Certificate] {
        do {
            let path: ValidatedPath
            if performDefaultValidation {
                path = try trust.validatedPath()
            } else {
                path = ValidatedPath(validated: try validatedWithPinsAsAnchors(trust, matches: matches))
            }
            let chain = path.certificates
            let matched = chain.indices.filter { matches(chain[$0]) }
            guard !matched.isEmpty else { throw mismatch(path: path) }
            if validateHost { try HostNameVerifier.verify(chain[0], host: host) }
            trust.recordPinMatches(
                matched.map {
                    PinMatch(evaluator: evaluatorName, certificate: chain[$0], depth: $0, isAnchorExtension: path.isAnchorExtension($0))
                })
            return chain
        } catch let error as TrustError {
            throw error.attributed(to: evaluatorName, host: host)
        }
    }

    /// Validates with the pinned material as the only anchors: the configured certificates and
    /// the presented certificates with a pinned key that something vouches for (see the type's
    /// documentation).
    private func validatedWithPinsAsAnchors(_ trust: PeerTrust, matches: (Certificate) -> Bool) throws -> [Certificate] {
        let presented = trust.presentedChain
        let matching = presented.filter(matches)
        let vouched = matching.filter { $0 == presented[0] || pinnedCertificates.contains($0) || $0.isSelfSignedWithVerifiedSignature }
        let unvouched = matching.filter { !vouched.contains($0) }
        let anchors = pinnedCertificates + vouched
        if !anchors.isEmpty {
            do {
                return try trust.validatedChain(trusting: anchors, emptyStore: emptyStore)
            } catch let error as TrustError where Self.noPathToAnchor(error) && unvouched.isEmpty {
                throw noPathToPin(error)
            } catch let error as TrustError where Self.noPathToAnchor(error) {
                // No path to what may anchor; say why the other pinned certificates may not.
            }
        }
        guard !unvouched.isEmpty else { throw mismatch(chain: presented, validated: false) }
        // Validated against the certificates nothing vouches for only to report the most useful
        // failure: what OpenSSL finds wrong with them (expired, a constraint the leaf breaks,
        // revoked) comes first. Whatever it finds, the evaluation fails, and nothing is recorded.
        let diagnosis: [Certificate]
        do {
            diagnosis = try trust.validatedChain(trusting: unvouched, emptyStore: emptyStore, recording: false)
        } catch let error as TrustError where Self.noPathToAnchor(error) {
            throw noPathToPin(error)
        }
        throw unvouchedAnchor(diagnosis.last ?? unvouched[0], presented: presented)
    }

    /// The leaf does not chain to any pinned material: a pin mismatch, shown with the path
    /// OpenSSL did build (never the pinned certificate that was merely sent).
    private func noPathToPin(_ error: TrustError) -> TrustError {
        var evidence = error.evidence
        evidence.configuredPins = configuredPins
        return TrustError(
            .pinMismatch,
            "The leaf does not chain to a pinned certificate or key (\(error.evidence.verifyResultText ?? "no path")). "
                + "If this server is genuine, pin one of the peer keys listed below (servertrust fetch --pin sha256/…).",
            evidence: evidence)
    }

    /// The leaf chains to a presented certificate with a pinned key, but nothing vouches for
    /// that certificate's validity and constraints.
    private func unvouchedAnchor(_ certificate: Certificate, presented: [Certificate]) -> TrustError {
        var evidence = TrustError.Evidence()
        evidence.configuredPins = configuredPins
        evidence.chain = presented.map(\.summary)
        evidence.depth = presented.firstIndex(of: certificate)
        let why =
            certificate.isSelfIssued
            ? "names itself as its issuer but its signature does not verify with that key, so it is a copy signed by someone else"
            : "is signed by \(certificate.issuer), whom nothing trusts without default validation"
        return TrustError(
            .chainValidationFailed,
            "The pinned key \(certificate.spkiPin) is carried by \(certificate.subject) (depth \(evidence.depth ?? 0)), which \(why). "
                + "Nothing vouches for its validity, CA flag, path length or name constraints: a copy with a later notAfter and "
                + "no constraints would carry the same key, so it cannot be the anchor. Set performDefaultValidation: true with "
                + "its root among the anchors, pin this certificate itself (PinnedCertificatesTrustEvaluator), or pin the key of "
                + "a self-signed root the server sends.",
            evidence: evidence)
    }

    /// OpenSSL errors meaning "no path from the leaf to an anchor": unable to get issuer
    /// (2, 20), self-signed leaf or chain root not trusted (18, 19), unable to verify the first
    /// certificate (21).
    private static func noPathToAnchor(_ error: TrustError) -> Bool {
        guard error.code == .chainValidationFailed, let result = error.evidence.verifyResult else { return false }
        return [2, 18, 19, 20, 21].contains(result)
    }

    private func mismatch(path: ValidatedPath) -> TrustError {
        let added = path.certificates.count - path.validatedCount
        return mismatch(
            chain: path.certificates, validated: true,
            note: added == 0 ? "" : ", \(added == 1 ? "the last" : "the last \(added)") an anchor above the validated path")
    }

    private func mismatch(chain: [Certificate], validated: Bool, note: String = "") -> TrustError {
        var evidence = TrustError.Evidence()
        evidence.configuredPins = configuredPins
        evidence.chain = chain.map(\.summary)
        let what = validated ? "validated chain" : "presented chain"
        return TrustError(
            .pinMismatch,
            "No certificate of the \(what) (\(chain.count) certificate\(chain.count == 1 ? "" : "s")\(note)) matches a configured pin. "
                + "If this server is genuine, pin one of the peer keys listed below (servertrust fetch --pin sha256/…).",
            evidence: evidence)
    }
}
