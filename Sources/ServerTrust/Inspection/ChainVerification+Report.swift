package import Foundation

extension ChainVerification {
    /// The outcome of one verification: the JSON object of `servertrust verify --json`.
    ///
    /// Encode it with sorted keys and ISO 8601 dates. Fields:
    /// - `trusted`: whether every check passed;
    /// - `evaluator`: the evaluator that failed, else the one that accepted;
    /// - `host`: the host checked, absent when none was;
    /// - `validatedChain`: `[{subject, pin}]`, leaf first, empty when no chain validated; it
    ///   ends with the anchors above the validated path that issued its top, if any
    ///   (``PeerTrust/validatedChain()``);
    /// - `matchedPins`: with pins, `[{subject, pin, depth, anchorExtension}]`, the certificates
    ///   of `validatedChain` the pins matched (`anchorExtension`: an anchor above the validated
    ///   path); absent without pins;
    /// - `revocation`: see ``Revocation``;
    /// - `error`: on a rejection, see ``Failure``.
    package struct Report: Sendable, Encodable {
        /// One certificate of the validated chain.
        package struct Entry: Sendable, Encodable {
            package let subject: String
            /// `sha256/<base64>` of its SubjectPublicKeyInfo.
            package let pin: String
        }

        /// A certificate the pins matched (``PinMatch``).
        package struct MatchedPin: Sendable, Encodable {
            package let subject: String
            /// `sha256/<base64>` of its SubjectPublicKeyInfo.
            package let pin: String
            /// Its position in `validatedChain`, 0 for the leaf.
            package let depth: Int
            /// Whether it is an anchor above the validated path, added because the path's top is
            /// an anchor it issued.
            package let anchorExtension: Bool

            init(_ match: PinMatch) {
                subject = match.subject
                pin = match.pin.description
                depth = match.depth
                anchorExtension = match.isAnchorExtension
            }
        }

        /// The revocation outcome for the leaf.
        package struct Revocation: Sendable, Encodable {
            /// `good`, `revoked`, `unknown`, or `notChecked`.
            package let status: String
            /// For `unknown` and `notChecked`, why (`badSignature`, `tooOld`, `notRequested`,
            /// `chainValidationFailed`…); for `revoked`, the CRLReason when the responder gave one.
            package let reason: String?
            package var explanation: String?
            package var revokedAt: Date?
            /// thisUpdate and nextUpdate of the response the status comes from.
            package var thisUpdate: Date?
            package var nextUpdate: Date?

            init(status: String, reason: String?) {
                self.status = status
                self.reason = reason
            }

            init(_ result: CertificateRevocationResult) {
                switch result.status {
                case .good:
                    self.init(status: "good", reason: nil)
                case .revoked(let reason, let date):
                    self.init(status: "revoked", reason: reason?.description)
                    revokedAt = date
                case .unknown(let reason):
                    self.init(status: "unknown", reason: reason.identifier)
                }
                explanation = result.explanation
                thisUpdate = result.thisUpdate
                nextUpdate = result.nextUpdate
            }

            static let notRequested = Revocation(status: "notChecked", reason: "notRequested")
        }

        /// Why the chain was rejected.
        package struct Failure: Sendable, Encodable {
            /// The `TrustError.Code`, e.g. `pinMismatch`.
            package let code: String
            package let reason: String
            /// The whole message, with the evidence.
            package let message: String
            /// OpenSSL's `X509_V_ERR_*` number, when path validation failed.
            package let openSSLVerifyError: Int?
            package let depth: Int?
            package let configuredPins: [String]?
            /// The chain the check ran against, `[{pin, subject}]`.
            package let chain: [Entry]?

            init(_ error: TrustError) {
                code = error.code.description
                reason = error.reason
                message = error.description
                openSSLVerifyError = error.evidence.verifyResult.map(Int.init)
                depth = error.evidence.depth
                configuredPins = error.evidence.configuredPins.isEmpty ? nil : error.evidence.configuredPins.map(\.description)
                chain = error.evidence.chain.isEmpty ? nil : error.evidence.chain.map { Entry(subject: $0.subject, pin: $0.pin.description) }
            }
        }

        package let trusted: Bool
        package let evaluator: String
        package let host: String?
        package let validatedChain: [Entry]
        /// With pins, the certificates they matched; nil without pins.
        package let matchedPins: [MatchedPin]?
        package let revocation: Revocation
        package let error: Failure?
        /// The rejection itself, for callers that want the typed error.
        package let failure: TrustError?
        /// The Certificate Transparency outcome, when the verification checked CT
        /// (``ChainVerification/certificateTransparency``) and the chain validated; absent otherwise.
        package internal(set) var certificateTransparency: CertificateTransparencyReport?

        init(
            evaluator: String, host: String?, validatedChain: [Certificate], matchedPins: [PinMatch]?, failure: TrustError?,
            revocation: Revocation
        ) {
            trusted = failure == nil
            self.evaluator = failure?.evaluator ?? evaluator
            self.host = host
            self.validatedChain = validatedChain.map { Entry(subject: $0.subject, pin: $0.spkiPin.description) }
            self.matchedPins = matchedPins.map { $0.map(MatchedPin.init) }
            self.revocation = revocation
            error = failure.map(Failure.init)
            self.failure = failure
        }

        private enum CodingKeys: String, CodingKey {
            case trusted, evaluator, host, validatedChain, matchedPins, revocation, error, certificateTransparency
        }
    }
}
