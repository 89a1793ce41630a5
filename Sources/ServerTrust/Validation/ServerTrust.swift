public import Foundation

/// What an evaluator sees of one TLS server: the chain it presented and the context to judge it.
///
/// Path validation runs at most once per trust store: the default evaluator and a pinning
/// evaluator over the same anchors share one `X509_verify_cert` call, and a store without CRLs
/// reuses the chain it validated for byte-identical certificates (`ValidatedChainCache`). Pins
/// are matched against the chain this validation returns, never against ``presentedChain``.
public final class ServerTrust: Sendable {
    /// The certificates as the server sent them, leaf first (possibly unordered, with extras).
    public let presentedChain: [Certificate]
    /// The anchors of the session or tool that made this trust (system bundle by default).
    public let anchors: TrustAnchors
    /// The instant certificates and revocation data are judged at.
    public let validationTime: Date
    /// The OCSP response the server stapled, DER, if any.
    public let stapledOCSPResponse: [UInt8]?
    /// How path validation is configured.
    public let validationOptions: PathValidationOptions
    /// The fetcher revocation checks use for live OCSP and CRL queries when their evaluator has
    /// none of its own: the session's (curl-backed) one, or `nil` for none.
    public let revocationFetcher: (any RevocationFetcher)?
    /// Where ``revocationResults`` are kept (see `ServerTrust+Revocation.swift`).
    let revocationRecord = RevocationRecord()
    /// Where ``findings`` are kept (see `ServerTrust+Findings.swift`).
    let findingRecord = Locked<[TrustFinding]>([])
    /// Where ``reliedOnUntil`` is kept (see `ServerTrust+Reliance.swift`).
    let relianceRecord = Locked<Date?>(nil)

    private let validations = Locked<[ObjectIdentifier: (X509TrustStore, Result<[Certificate], TrustError>)]>([:])

    public init(
        presentedChain: [Certificate],
        anchors: TrustAnchors,
        validationTime: Date = Date(),
        stapledOCSPResponse: [UInt8]? = nil,
        validationOptions: PathValidationOptions = PathValidationOptions(),
        revocationFetcher: (any RevocationFetcher)? = nil
    ) {
        self.presentedChain = presentedChain
        self.anchors = anchors
        self.validationTime = validationTime
        self.stapledOCSPResponse = stapledOCSPResponse
        self.validationOptions = validationOptions
        self.revocationFetcher = revocationFetcher
    }

    /// The chain validated against ``anchors``, leaf first, ending at an anchor.
    ///
    /// Computed on first use and cached.
    /// - Throws: ``TrustError/Code/chainValidationFailed`` (or `.noCertificates`, `.revoked`).
    public func validatedChain() throws -> [Certificate] {
        try validatedChain(against: anchors.store)
    }

    /// A chain some evaluator already validated for this trust, without validating again:
    /// for reports. `nil` when no evaluation validated a chain successfully.
    public var validatedChainIfComputed: [Certificate]? {
        validations.withLock { entries in
            if let own = entries[ObjectIdentifier(anchors.store)], case .success(let chain) = own.1 { return chain }
            for (_, entry) in entries { if case .success(let chain) = entry.1 { return chain } }
            return nil
        }
    }

    func validatedChain(against store: X509TrustStore) throws -> [Certificate] {
        let key = ObjectIdentifier(store)
        if let cached = validations.withLock({ $0[key]?.1 }) { return try cached.get() }
        let result = Result { () throws(TrustError) -> [Certificate] in
            do {
                let cache = store.validatedChains
                if let chain = cache?.chain(for: presentedChain, options: validationOptions, time: validationTime) { return chain }
                let chain = try PathValidator.validate(
                    presented: presentedChain, store: store, time: validationTime, options: validationOptions)
                cache?.store(chain, for: presentedChain, options: validationOptions, time: validationTime)
                return chain
            } catch let error as TrustError {
                throw error
            } catch {
                throw TrustError(.openSSLFailure, "\(error)")
            }
        }
        validations.withLock { $0[key] = (store, result) }
        return try result.get()
    }

    /// Validates with `anchors` as the only trust anchors (not cached: used for pins acting as anchors).
    func validatedChain(trusting anchors: [Certificate], emptyStore: X509TrustStore) throws -> [Certificate] {
        do {
            let chain = try PathValidator.validate(
                presented: presentedChain, store: emptyStore, trustedStack: anchors,
                trustedStackRevocationLists: self.anchors.revocationLists, time: validationTime,
                options: validationOptions)
            validations.withLock { $0[ObjectIdentifier(emptyStore)] = (emptyStore, .success(chain)) }
            return chain
        }
    }
}
