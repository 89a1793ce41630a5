package import Foundation

/// What a server presents and how default validation judges it, check by check, without
/// rejecting anything: what `servertrust inspect` and `pins` show.
///
/// Inspection exists to show chains that default validation rejects — an expired leaf, a
/// private CA, a wrong name, a proxy's impostor — so each check's outcome is recorded instead
/// of thrown. It is a report, never a decision: nothing here admits a server.
///
/// JSON fields (the library half of `servertrust inspect --json`): `host`, `validationTime`,
/// `passesDefaultValidation`, `checks` (`chain`, `host`, `stapledOCSP`, each a ``Check``),
/// `presentedChain` (``CertificateInspection``, as sent) and `validatedChain` (leaf to anchor,
/// each with `presentedIndex`, its index in the presented chain, or `null` for a certificate
/// the anchors supplied). Days left are counted from `validationTime`.
package struct ChainInspection: Sendable, Encodable {
    /// The outcome of one check.
    package enum Check: Sendable, Encodable {
        case passed(String)
        case failed(TrustError)
        case notChecked(String)

        package var passed: Bool {
            if case .passed = self { return true }
            return false
        }

        /// `passed`, `failed` or `notChecked`: the JSON `result`.
        package var identifier: String {
            switch self {
            case .passed: "passed"
            case .failed: "failed"
            case .notChecked: "notChecked"
            }
        }

        /// The one-line explanation: the JSON `detail`.
        package var detail: String {
            switch self {
            case .passed(let detail), .notChecked(let detail): detail
            case .failed(let error): error.reason
            }
        }

        private enum CodingKeys: String, CodingKey {
            case result, detail, code, openSSLVerifyError, depth
        }

        /// `{result, detail}`, and for a failure `code`, `openSSLVerifyError` (OpenSSL's text)
        /// and `depth` where known.
        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(identifier, forKey: .result)
            try container.encode(detail, forKey: .detail)
            if case .failed(let error) = self {
                try container.encode(error.code.description, forKey: .code)
                try container.encodeIfPresent(error.evidence.verifyResultText, forKey: .openSSLVerifyError)
                try container.encodeIfPresent(error.evidence.depth, forKey: .depth)
            }
        }
    }

    package let host: String
    package let validationTime: Date
    /// As sent, leaf first.
    package let presentedChain: [Certificate]
    /// Leaf to anchor; empty when the chain check failed.
    package let validatedChain: [Certificate]
    /// Chain to the anchors: signatures, validity at ``validationTime``, serverAuth purpose.
    package let chain: Check
    /// The leaf against the host name or IP address.
    package let hostName: Check
    /// The stapled OCSP response, if any, verified for the leaf. Informational: default
    /// validation does not require one.
    package let stapledOCSP: Check
    /// The stapled OCSP response as received.
    package let stapledOCSPResponse: [UInt8]?
    /// What the handshake negotiated: protocol, cipher suite, key-exchange group, ALPN.
    package let handshake: HandshakeEvidence

    /// Whether a client with default validation would accept the server.
    package var passesDefaultValidation: Bool { chain.passed && hostName.passed }

    /// For each certificate of the validated chain, its index in the presented chain, `nil`
    /// for one the server did not send.
    package var presentedIndices: [Int?] {
        validatedChain.map { certificate in presentedChain.firstIndex(of: certificate) }
    }

    /// Runs each default check on `trust` for `host` and records its outcome.
    package init(trust: PeerTrust, host: String) {
        self.host = host
        validationTime = trust.validationTime
        presentedChain = trust.presentedChain
        stapledOCSPResponse = trust.stapledOCSPResponse
        handshake = trust.handshake
        var validated: [Certificate] = []
        do {
            // Both evaluators validate against the trust's anchors, so OpenSSL runs once and the
            // second evaluation adds only the host check.
            try DefaultTrustEvaluator(anchors: nil, checksHost: false).evaluate(trust, forHost: host)
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
    private static func checkHostOnLeafAlone(_ trust: PeerTrust, host: String) -> Check {
        guard let leaf = trust.presentedChain.first, let anchors = try? TrustAnchors([leaf]) else {
            return .notChecked("no leaf to check")
        }
        let middle = Date(
            timeIntervalSince1970: (leaf.notValidBefore.timeIntervalSince1970 + leaf.notValidAfter.timeIntervalSince1970) / 2)
        let alone = PeerTrust(presentedChain: [leaf], anchors: anchors, validationTime: middle, validationOptions: trust.validationOptions)
        do {
            try DefaultTrustEvaluator().evaluate(alone, forHost: host)
            return .passed("the leaf is valid for \(host) (checked on the leaf alone, as the chain failed)")
        } catch let error as TrustError where error.code == .hostMismatch {
            return .failed(error)
        } catch {
            return .notChecked("the chain failed, and the leaf alone fails other checks too")
        }
    }

    private static func checkStaple(_ trust: PeerTrust, chainValidated: Bool) -> Check {
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

    // MARK: JSON

    private enum CodingKeys: String, CodingKey {
        case host, validationTime, passesDefaultValidation, checks, negotiated, presentedChain, validatedChain
    }

    /// The negotiated parameters, as `inspect --json` reports them.
    private struct Negotiated: Encodable {
        let `protocol`: String?
        let cipherSuite: String?
        let keyExchangeGroup: String?
        let postQuantumKeyExchange: Bool
        let applicationProtocol: String?
    }

    private struct Checks: Encodable {
        let chain: Check
        let host: Check
        let stapledOCSP: Check
    }

    /// A certificate of the validated chain with its place in the presented one.
    private struct ValidatedEntry: Encodable {
        let certificate: CertificateInspection
        let presentedIndex: Int?

        private enum CodingKeys: String, CodingKey {
            case presentedIndex
        }

        func encode(to encoder: any Encoder) throws {
            try certificate.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            // Explicitly `null`, not absent: "supplied by the anchors" is an answer.
            try container.encode(presentedIndex, forKey: .presentedIndex)
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(host, forKey: .host)
        try container.encode(validationTime, forKey: .validationTime)
        try container.encode(passesDefaultValidation, forKey: .passesDefaultValidation)
        try container.encode(Checks(chain: chain, host: hostName, stapledOCSP: stapledOCSP), forKey: .checks)
        try container.encode(
            Negotiated(
                protocol: handshake.protocolVersion?.description, cipherSuite: handshake.cipherSuite, keyExchangeGroup: handshake.keyExchangeGroup,
                postQuantumKeyExchange: handshake.keyExchangeGroup.map(KeyExchangeRequirement.isPostQuantum(group:)) ?? false,
                applicationProtocol: handshake.applicationProtocol),
            forKey: .negotiated)
        try container.encode(presentedChain.map { CertificateInspection($0, now: validationTime) }, forKey: .presentedChain)
        let validated = zip(validatedChain, presentedIndices).map { certificate, index in
            ValidatedEntry(certificate: CertificateInspection(certificate, now: validationTime), presentedIndex: index)
        }
        try container.encode(validated, forKey: .validatedChain)
    }
}
