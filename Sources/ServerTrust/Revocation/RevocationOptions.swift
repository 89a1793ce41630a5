public import Foundation

/// How ``RevocationTrustEvaluator`` checks revocation. The defaults are soft-fail checking of
/// the leaf, OCSP first and CRLs second, with a 3-second budget per evaluation.
///
/// A definite "revoked" rejects the server in every configuration. The options decide where
/// the evaluator looks and what it does when it cannot find out: with
/// ``requirePositiveResponse`` off (soft-fail, the default) an unknown status is accepted and
/// recorded in ``PeerTrust/revocationResults``; with it on (hard-fail) it is rejected. A
/// network failure is never taken for "good". See <doc:RevocationBehaviour> for the complete
/// table.
public struct RevocationOptions: Hashable, Sendable {
    /// Which revocation sources are used, and in which order. Default ``preferOCSP``.
    ///
    /// A stapled OCSP response is used under every method but ``crl``: it costs no network
    /// access and tells the CA nothing about the client. A must-staple leaf requires a valid
    /// staple under every method.
    public struct Methods: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: Hashable, Sendable {
            case ocsp
            case crl
            case ocspThenCRL
            case crlThenOCSP
        }

        private let kind: Kind
        private init(_ kind: Kind) { self.kind = kind }

        /// OCSP only: the staple, cached responses, then the responders named in the
        /// certificate's Authority Information Access extension.
        public static let ocsp = Methods(.ocsp)
        /// CRLs only: cached CRLs, then the certificate's CRL distribution points. Staples are
        /// ignored (but still required for a must-staple leaf).
        public static let crl = Methods(.crl)
        /// OCSP first, then CRLs when OCSP gives no answer (the default). OCSP responses are
        /// small; a CRL can be megabytes.
        public static let preferOCSP = Methods(.ocspThenCRL)
        /// CRLs first, then OCSP: one CRL answers for every certificate of an issuer, and
        /// fetching it does not tell the CA which server the client visits.
        public static let preferCRL = Methods(.crlThenOCSP)

        /// The live methods, in the order they are tried.
        var order: [RevocationMethod] {
            switch kind {
            case .ocsp: [.ocsp]
            case .crl: [.crl]
            case .ocspThenCRL: [.ocsp, .crl]
            case .crlThenOCSP: [.crl, .ocsp]
            }
        }

        /// Whether stapled responses are consulted.
        var usesStaples: Bool { kind != .crl }

        public var description: String {
            switch kind {
            case .ocsp: "ocsp"
            case .crl: "crl"
            case .ocspThenCRL: "preferOCSP"
            case .crlThenOCSP: "preferCRL"
            }
        }
    }

    /// Which certificates of the validated chain are checked. Default ``leafOnly``.
    public struct Scope: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: Hashable, Sendable {
            case leafOnly
            case wholeChain
        }

        private let kind: Kind
        private init(_ kind: Kind) { self.kind = kind }

        /// The server's own certificate only: one query per handshake. Intermediates are
        /// revoked rarely, and browsers learn of it from lists pushed with updates.
        public static let leafOnly = Scope(.leafOnly)
        /// Every certificate but the trust anchor, leaf first: one query per certificate
        /// (several certificates of one issuer share one CRL).
        public static let wholeChain = Scope(.wholeChain)

        var isWholeChain: Bool { kind == .wholeChain }

        public var description: String { kind == .leafOnly ? "leafOnly" : "wholeChain" }
    }

    /// Where to look. Default ``Methods/preferOCSP``.
    public var methods: Methods

    /// Hard-fail: reject unless every checked certificate has a verified status. Default
    /// `false` (soft-fail).
    ///
    /// Soft-fail keeps a server reachable when its CA's responder is down, but an attacker who
    /// can block the responder (anyone on the path of a machine-in-the-middle attack can) turns
    /// a revoked certificate into an accepted one. Hard-fail closes that hole at the price of
    /// availability: turn it on for servers you control, whose responses you can make reliable
    /// (staple them), or together with ``networkAccessDisabled`` for must-staple deployments.
    public var requirePositiveResponse: Bool

    /// Use staples and the cache only; never fetch. Default `false`.
    ///
    /// A certificate with neither a valid staple nor a cached answer is then
    /// `RevocationStatus.UnknownReason.networkAccessDisabled`.
    public var networkAccessDisabled: Bool

    /// Which certificates to check. Default ``Scope/leafOnly``.
    public var scope: Scope

    /// The most one evaluation may spend waiting for the network, across every certificate and
    /// every source. Default 3 seconds.
    ///
    /// The check runs inside the TLS handshake, which blocks until it returns: the budget
    /// bounds that. A source that has not answered when it runs out gives
    /// `RevocationStatus.UnknownReason.timeout`, and no further fetch is started.
    public var timeBudget: Duration

    /// How far the responder's clock and ours may disagree, in seconds. Default 300.
    /// - Warning: a larger tolerance accepts responses and CRLs that are further out of date.
    public var clockSkew: TimeInterval

    /// The oldest OCSP response accepted, by thisUpdate, whether or not it has a nextUpdate;
    /// for a CRL, the oldest accepted when it has no nextUpdate. Default 7 days (604,800 s).
    /// - Warning: a larger age lets a server keep showing an old "good" answer for longer
    ///   after its certificate was revoked.
    public var maximumResponseAge: TimeInterval

    /// The largest OCSP response fetched or accepted from the cache, in bytes. Default 64 KiB;
    /// real responses are a few kilobytes.
    public var maximumResponseSize: Int

    /// The largest CRL fetched or accepted from the cache, in bytes. Default 16 MiB (about
    /// 400,000 entries); never more than ``CertificateRevocationList/maximumSize``.
    public var maximumCRLSize: Int

    /// Send a random nonce with each live OCSP request and require the response to echo it.
    /// Default `false`.
    ///
    /// A nonce proves the response was made for this query, not replayed. Most public
    /// responders serve pre-produced responses (RFC 5019) and ignore nonces, so with this on
    /// their answers become `RevocationStatus.UnknownReason.nonceMismatch`; freshness
    /// (``maximumResponseAge``) already bounds replays. Turn it on for a responder you know
    /// echoes nonces. Requests with a nonce are sent by POST; without, by GET when short enough.
    public var ocspNonce: Bool

    /// The hash of the certificate ID (RFC 6960 §4.1.1) in live OCSP requests. Default
    /// ``OCSPCertificateIDHash/sha1``.
    public var ocspCertificateIDHash: OCSPCertificateIDHash

    /// The hash a live OCSP request names its certificate by.
    public enum OCSPCertificateIDHash: String, Hashable, Sendable {
        /// SHA-1, which RFC 5019 responders require and every responder answers.
        case sha1
        /// SHA-256 first; SHA-1 from a responder that answers, but not about a SHA-256 CertID
        /// (HTTP 4xx, `malformedRequest`, `unauthorized`, `unknown`, another CertID), within the
        /// same time budget. Such a responder is remembered by the `RevocationCache` for an
        /// hour, so it is asked in SHA-1 alone meanwhile. The response is verified the same way
        /// whichever hash it names.
        case sha256
    }

    /// The longest validity period of a leaf that needs no revocation check (a short-lived
    /// certificate), in seconds; `nil` checks every leaf. Default 7 days (604,800 s).
    ///
    /// The CA/Browser Forum's Baseline Requirements let a CA leave the CRL distribution point
    /// and the OCSP responder out of a short-lived subscriber certificate (Let's Encrypt's
    /// 6-day profile does): its short life takes the place of revocation. The period is counted
    /// as RFC 5280 and the Baseline Requirements count it, both ends included:
    /// notAfter − notBefore + 1 s.
    ///
    /// Such a leaf is still looked up where it costs no network — its staple, the CRLs the
    /// application supplied, the cache — and a "revoked" there still rejects it, as does a
    /// must-staple leaf without a valid staple. Nothing is fetched for it, and when none of
    /// those sources answers its status is
    /// `RevocationStatus.UnknownReason.shortLivedCertificate`, which hard-fail accepts and the
    /// trust report shows. Intermediates are never exempt.
    /// - Warning: a larger value exempts longer-lived certificates, whose revocation then goes
    ///   unnoticed for up to that long.
    public var shortLivedCertificateValidity: TimeInterval?

    /// The Baseline Requirements' limit for a short-lived subscriber certificate: 7 days.
    public static let baselineShortLivedCertificateValidity: TimeInterval = 7 * 24 * 60 * 60

    /// - Parameters: each as the property of the same name documents, with its default.
    public init(
        methods: Methods = .preferOCSP,
        requirePositiveResponse: Bool = false,
        networkAccessDisabled: Bool = false,
        scope: Scope = .leafOnly,
        timeBudget: Duration = .seconds(3),
        clockSkew: TimeInterval = 300,
        maximumResponseAge: TimeInterval = 7 * 24 * 60 * 60,
        maximumResponseSize: Int = 64 << 10,
        maximumCRLSize: Int = 16 << 20,
        ocspNonce: Bool = false,
        ocspCertificateIDHash: OCSPCertificateIDHash = .sha1,
        shortLivedCertificateValidity: TimeInterval? = RevocationOptions.baselineShortLivedCertificateValidity
    ) {
        self.methods = methods
        self.requirePositiveResponse = requirePositiveResponse
        self.networkAccessDisabled = networkAccessDisabled
        self.scope = scope
        self.timeBudget = timeBudget
        self.clockSkew = clockSkew
        self.maximumResponseAge = maximumResponseAge
        self.maximumResponseSize = maximumResponseSize
        self.maximumCRLSize = maximumCRLSize
        self.ocspNonce = ocspNonce
        self.ocspCertificateIDHash = ocspCertificateIDHash
        self.shortLivedCertificateValidity = shortLivedCertificateValidity
    }

    /// Soft-fail with the defaults: revoked rejects, unknown is accepted and recorded.
    public static let softFail = RevocationOptions()

    /// Hard-fail with the defaults: only a verified "good" for every checked certificate passes.
    public static let hardFail = RevocationOptions(requirePositiveResponse: true)

    /// Stapled (and cached) OCSP responses only, soft-fail: nothing is fetched during the
    /// handshake; a revoked staple rejects, a missing or invalid one is recorded as unknown
    /// (and rejects a must-staple leaf).
    public static let ocspStapled = RevocationOptions(methods: .ocsp, networkAccessDisabled: true)

    /// Stapled responses only, hard-fail: no network access during the handshake, and a server
    /// that staples nothing valid is refused. For servers you run, which staple reliably.
    public static let stapleRequired = RevocationOptions(
        methods: .ocsp, requirePositiveResponse: true, networkAccessDisabled: true)

    /// The OCSP verifier configuration these options imply.
    var ocspVerifier: OCSPVerifier {
        OCSPVerifier(configuration: .init(clockSkewTolerance: clockSkew, maximumAge: maximumResponseAge))
    }

    /// Whether `certificate` is short-lived under these options (``shortLivedCertificateValidity``).
    func isShortLived(_ certificate: Certificate) -> Bool {
        guard let limit = shortLivedCertificateValidity else { return false }
        return certificate.notValidAfter.timeIntervalSince(certificate.notValidBefore) + 1 <= limit
    }

    /// The CRL size limit actually applied.
    var effectiveMaximumCRLSize: Int { min(maximumCRLSize, CertificateRevocationList.maximumSize) }

    /// The OCSP size limit actually applied.
    var effectiveMaximumResponseSize: Int { min(maximumResponseSize, OCSPResponse.maximumDERSize) }
}

/// A live revocation method.
enum RevocationMethod: Hashable, Sendable {
    case ocsp
    case crl
}
