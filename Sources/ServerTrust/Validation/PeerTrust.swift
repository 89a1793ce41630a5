public import Foundation

/// What an evaluator sees of one TLS server: the chain it presented and the context to judge it.
///
/// Path validation runs at most once per trust store: the default evaluator and a pinning
/// evaluator over the same anchors share one `X509_verify_cert` call, and a store without CRLs
/// reuses the chain it validated for byte-identical certificates (`ValidatedChainCache`). Pins
/// are matched against the chain this validation returns, never against ``presentedChain``:
/// the validated path extended upward through the anchors that issued its top, so a pin on a
/// CA key matches whichever of that CA's certificates the anchors hold (`ValidatedPath`).
///
/// Report-only evaluators (``InformationalTrustEvaluator``, a ``CanaryTrustEvaluator``'s trial)
/// evaluate a report-only view of the trust (`reportOnly()`): the same chain, context and
/// records, but every chain validated through it is marked report-only. An enforcing evaluator
/// that adopts a chain validated earlier (``RevocationTrustEvaluator``) adopts only one an
/// enforcing evaluator validated, so trialling other anchors never widens what is enforced.
///
/// Formerly `ServerTrust`. Renamed (issue #19) so that no type shares the module's name: with a
/// type `ServerTrust` inside the module `ServerTrust`, `ServerTrust.Certificate` was looked up as a
/// member of the class and did not compile, so a file that also imports swift-certificates'
/// `X509` could not say which `Certificate` it meant. No deprecated `ServerTrust` alias is kept,
/// since it would bring that ambiguity back: replace `ServerTrust` with `PeerTrust` where it
/// names this type (evaluator signatures `evaluate(_ trust: PeerTrust, forHost:)` included).
public final class PeerTrust: Sendable {
    /// The certificates as the server sent them, leaf first (possibly unordered, with extras).
    public let presentedChain: [Certificate]
    /// The anchors of the session or tool that made this trust (system bundle by default).
    public let anchors: TrustAnchors
    /// The instant certificates and revocation data are judged at.
    public let validationTime: Date
    /// What the handshake gave besides the chain: the staple, SCTs, the negotiated protocol.
    public let handshake: HandshakeEvidence
    /// The OCSP response the server stapled, DER, if any (``handshake``'s).
    public var stapledOCSPResponse: [UInt8]? { handshake.stapledOCSPResponse }
    /// How path validation is configured.
    public let validationOptions: PathValidationOptions
    /// The fetcher revocation checks use for live OCSP and CRL queries when their evaluator has
    /// none of its own: the session's (curl-backed) one, or `nil` for none.
    public let revocationFetcher: (any RevocationFetcher)?
    /// Where ``revocationResults`` are kept (see `PeerTrust+Revocation.swift`).
    let revocationRecord: RevocationRecord
    /// Where ``findings`` are kept (see `PeerTrust+Findings.swift`).
    let findingRecord: Locked<[TrustFinding]>
    /// Whether the evaluators that see this trust only report (see `reportOnly()`): a chain
    /// validated through this trust is then never adopted by an enforcing evaluator.
    let isReportOnly: Bool
    /// Where ``reliedOnUntil`` is kept (see `PeerTrust+Reliance.swift`); shared with report-only views.
    let relianceRecord: Locked<Date?>
    /// Where ``pinMatches`` are kept (see `PeerTrust+PinMatches.swift`); shared with report-only views.
    let pinMatchRecord: Locked<[PinMatch]>

    /// One path validation: the store it ran against (kept alive, as the key is its identity),
    /// its outcome, and whether an enforcing evaluator asked for it.
    private struct Validation {
        let store: X509TrustStore
        let result: Result<ValidatedPath, TrustError>
        var isEnforced: Bool
    }

    /// Shared by a trust and its report-only views, so a validation runs once whoever asks.
    private let validations: Locked<[ObjectIdentifier: Validation]>

    /// A trust whose handshake evidence is only a staple, if any.
    public convenience init(
        presentedChain: [Certificate],
        anchors: TrustAnchors,
        validationTime: Date = Date(),
        stapledOCSPResponse: [UInt8]? = nil,
        validationOptions: PathValidationOptions = PathValidationOptions(),
        revocationFetcher: (any RevocationFetcher)? = nil
    ) {
        self.init(
            presentedChain: presentedChain, anchors: anchors, validationTime: validationTime,
            handshake: HandshakeEvidence(stapledOCSPResponse: stapledOCSPResponse), validationOptions: validationOptions,
            revocationFetcher: revocationFetcher)
    }

    /// - Parameters:
    ///   - presentedChain: the certificates as the server sent them, leaf first.
    ///   - anchors: the anchors to validate against.
    ///   - validationTime: the instant to judge at; default now.
    ///   - handshake: what the handshake gave besides the chain.
    ///   - validationOptions: default `PathValidationOptions()`.
    ///   - revocationFetcher: for live revocation checks; default none.
    public init(
        presentedChain: [Certificate],
        anchors: TrustAnchors,
        validationTime: Date = Date(),
        handshake: HandshakeEvidence,
        validationOptions: PathValidationOptions = PathValidationOptions(),
        revocationFetcher: (any RevocationFetcher)? = nil
    ) {
        self.presentedChain = presentedChain
        self.anchors = anchors
        self.validationTime = validationTime
        self.handshake = handshake
        self.validationOptions = validationOptions
        self.revocationFetcher = revocationFetcher
        revocationRecord = RevocationRecord()
        findingRecord = Locked([])
        relianceRecord = Locked(nil)
        pinMatchRecord = Locked([])
        validations = Locked([:])
        isReportOnly = false
    }

    /// A view of `trust` whose validations are report-only; everything else is shared.
    private init(reportOnlyViewOf trust: PeerTrust) {
        presentedChain = trust.presentedChain
        anchors = trust.anchors
        validationTime = trust.validationTime
        handshake = trust.handshake
        validationOptions = trust.validationOptions
        revocationFetcher = trust.revocationFetcher
        revocationRecord = trust.revocationRecord
        findingRecord = trust.findingRecord
        relianceRecord = trust.relianceRecord
        pinMatchRecord = trust.pinMatchRecord
        validations = trust.validations
        isReportOnly = true
    }

    /// This trust as a report-only evaluator sees it: the same chain, context, findings and
    /// revocation results, and the validations made so far, but a chain validated through the
    /// view is marked report-only, so no enforcing evaluator adopts it later. An enforcing
    /// evaluator that validates against the same store itself still reuses the outcome (it is
    /// the same computation) and marks it enforced.
    func reportOnly() -> PeerTrust {
        isReportOnly ? self : PeerTrust(reportOnlyViewOf: self)
    }

    /// The chain validated against ``anchors``, leaf first, ending at an anchor — extended
    /// upward through the anchors that issued it when that anchor is not self-issued.
    ///
    /// OpenSSL ends the path at the first anchor it reaches; when that is an intermediate and
    /// its issuer is an anchor too (a trust store holding both), the issuing anchors are
    /// appended, so pins see the same chain whichever of a CA's certificates the store holds.
    /// Only anchors are appended, never a certificate the server sent, and only ones under
    /// which the whole path validates (see `PathValidator.anchorsAbove`).
    ///
    /// Computed on first use and cached.
    /// - Throws: `TrustError.Code.chainValidationFailed` (or `.noCertificates`, `.revoked`).
    public func validatedChain() throws -> [Certificate] {
        try validatedChain(against: anchors.store)
    }

    /// A chain some evaluator already validated for this trust, without validating again:
    /// for reports. `nil` when no evaluation validated a chain successfully.
    ///
    /// A chain an enforcing evaluator validated comes first (against the trust's own anchors
    /// before others); failing that, one only a report-only evaluator validated — possibly
    /// against anchors nothing enforces. Never decide trust on it: an evaluator that adopts an
    /// earlier validation uses `adoptableValidatedChain`.
    public var validatedChainIfComputed: [Certificate]? {
        validatedChain(enforcedOnly: false)
    }

    /// The chain an evaluator may adopt instead of validating again: one an enforcing evaluator
    /// validated (the trust's own anchors first), or, for a report-only evaluator, any.
    var adoptableValidatedPath: ValidatedPath? {
        validatedPath(enforcedOnly: !isReportOnly)
    }

    private func validatedChain(enforcedOnly: Bool) -> [Certificate]? {
        validatedPath(enforcedOnly: enforcedOnly)?.certificates
    }

    private func validatedPath(enforcedOnly: Bool) -> ValidatedPath? {
        let own = ObjectIdentifier(anchors.store)
        // Enforced before report-only, then the trust's own anchors before other anchors.
        func rank(_ key: ObjectIdentifier, _ entry: Validation) -> Int { (entry.isEnforced ? 0 : 2) + (key == own ? 0 : 1) }
        return validations.withLock { entries in
            entries
                .filter { _, entry in (entry.isEnforced || !enforcedOnly) && (try? entry.result.get()) != nil }
                .min { rank($0.key, $0.value) < rank($1.key, $1.value) }
                .flatMap { try? $0.value.result.get() }
        }
    }

    func validatedChain(against store: X509TrustStore) throws -> [Certificate] {
        try validatedPath(against: store).certificates
    }

    /// ``validatedChain()`` with the length of the path itself (`ValidatedPath`).
    func validatedPath() throws -> ValidatedPath {
        try validatedPath(against: anchors.store)
    }

    func validatedPath(against store: X509TrustStore) throws -> ValidatedPath {
        let key = ObjectIdentifier(store)
        let cached = validations.withLock { entries -> Result<ValidatedPath, TrustError>? in
            if !isReportOnly { entries[key]?.isEnforced = true }
            return entries[key]?.result
        }
        if let cached { return try cached.get() }
        let result = Result { () throws(TrustError) -> ValidatedPath in
            do {
                let cache = store.validatedChains
                if let path = cache?.path(for: presentedChain, options: validationOptions, time: validationTime) { return path }
                let chain = try PathValidator.validate(
                    presented: presentedChain, store: store, time: validationTime, options: validationOptions)
                let path = ValidatedPath(
                    validated: chain,
                    anchorsAbove: PathValidator.anchorsAbove(chain, in: store, time: validationTime, options: validationOptions))
                cache?.store(path, for: presentedChain, options: validationOptions, time: validationTime)
                return path
            } catch let error as TrustError {
                throw error
            } catch {
                throw TrustError(.openSSLFailure, "\(error)")
            }
        }
        record(result, against: store)
        return try result.get()
    }

    private func record(_ result: Result<ValidatedPath, TrustError>, against store: X509TrustStore) {
        validations.withLock { entries in
            let key = ObjectIdentifier(store)
            entries[key] = Validation(store: store, result: result, isEnforced: !isReportOnly || entries[key]?.isEnforced == true)
        }
    }

    /// Validates with `anchors` as the only trust anchors (not cached: used for pins acting as
    /// anchors). With `recording: false` the chain is not offered to later evaluators or
    /// reports (a validation run only to diagnose a failure).
    func validatedChain(trusting anchors: [Certificate], emptyStore: X509TrustStore, recording: Bool = true) throws -> [Certificate] {
        do {
            let chain = try PathValidator.validate(
                presented: presentedChain, store: emptyStore, trustedStack: anchors,
                trustedStackRevocationLists: self.anchors.revocationLists, time: validationTime,
                options: validationOptions)
            if recording { record(.success(ValidatedPath(validated: chain)), against: emptyStore) }
            return chain
        }
    }
}
