public import Foundation

/// What a revocation evaluation established about one certificate of the validated chain, and
/// from where.
///
/// Read them after an evaluation from `PeerTrust.revocationResults`, leaf first.
public struct CertificateRevocationResult: Hashable, Sendable, CustomStringConvertible {
    /// Where a status came from.
    public struct Source: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: Hashable, Sendable {
            case none
            case staple
            case ocsp
            case crl
            case localCRL
        }

        private let kind: Kind
        /// The responder or distribution point URL, for fetched (or cached fetched) data.
        public let url: String?

        private init(_ kind: Kind, url: String? = nil) {
            self.kind = kind
            self.url = url
        }

        /// No source answered.
        public static let none = Source(.none)
        /// The OCSP response the server stapled.
        public static let stapledOCSP = Source(.staple)
        /// An OCSP response from the responder at `url`.
        public static func ocsp(_ url: String) -> Source { Source(.ocsp, url: url) }
        /// A CRL from the distribution point at `url`.
        public static func crl(_ url: String) -> Source { Source(.crl, url: url) }
        /// A CRL the application supplied to the evaluator.
        public static let localCRL = Source(.localCRL)

        /// Whether the status comes from OCSP (stapled or fetched).
        public var isOCSP: Bool { kind == .staple || kind == .ocsp }
        /// Whether the status comes from a CRL.
        public var isCRL: Bool { kind == .crl || kind == .localCRL }

        public var description: String {
            switch kind {
            case .none: "none"
            case .staple: "stapled OCSP"
            case .ocsp: "OCSP \(url ?? "")"
            case .crl: "CRL \(url ?? "")"
            case .localCRL: "local CRL"
            }
        }
    }

    /// The certificate checked.
    public let certificate: Certificate
    /// Its position in the validated chain (0 = leaf).
    public let depth: Int
    /// The status. `good` only from a verified, fresh response or CRL.
    public let status: RevocationStatus
    /// Where the status came from; ``Source/none`` for an unknown status no source answered.
    public let source: Source
    /// Whether the answer was taken from the `RevocationCache` rather than fetched or stapled
    /// during this evaluation. A cached staple keeps ``Source/stapledOCSP`` as its source; an
    /// OCSP response loaded from the cache's directory, whose provenance the file does not
    /// record, is reported as from the certificate's first responder.
    public let fromCache: Bool
    /// Why: the dates, the signer, or what failed.
    public let explanation: String
    /// What was tried before, and why it gave no answer, oldest first.
    public let attempts: [String]
    /// Until when the answer holds: the OCSP response's freshness limit (its nextUpdate, or
    /// thisUpdate plus the maximum age) or the CRL's nextUpdate, plus the clock-skew tolerance
    /// the verifiers allow past it; nil for an unknown status or a source without a date. A
    /// session connection accepted on this answer is not reused after it.
    public let validUntil: Date?
    /// thisUpdate of the OCSP response or complete CRL the status comes from; `nil` for an
    /// unknown status, which no verified response gave.
    public let thisUpdate: Date?
    /// nextUpdate of that response or CRL, if it had one.
    public let nextUpdate: Date?

    package init(
        certificate: Certificate, depth: Int, status: RevocationStatus, source: Source, fromCache: Bool = false,
        explanation: String, attempts: [String] = [], validUntil: Date? = nil, thisUpdate: Date? = nil, nextUpdate: Date? = nil
    ) {
        self.validUntil = validUntil
        self.certificate = certificate
        self.depth = depth
        self.status = status
        self.source = source
        self.fromCache = fromCache
        self.explanation = explanation
        self.attempts = attempts
        self.thisUpdate = thisUpdate
        self.nextUpdate = nextUpdate
    }

    public var description: String {
        "\(certificate.subject): \(status) from \(source)\(fromCache ? " (cached)" : ""): \(explanation)"
    }
}
