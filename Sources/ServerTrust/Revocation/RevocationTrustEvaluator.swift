/// Checks that the certificates of the validated chain are not revoked, by stapled OCSP,
/// cached answers, live OCSP and CRLs.
///
/// Compose it after the evaluator that establishes trust:
/// `.composite([.default(), .revocationChecking(.hardFail)])`. On its own it validates the
/// chain against the trust's anchors first (a status is only worth having for a chain that
/// validates), but does not check the host itself: a client's policy does, whatever the
/// evaluator (``ServerTrustEvaluating/evaluateAsPolicy(_:forHost:)``), so on every client
/// path it is refused for a leaf that is not valid for the host. Calling ``evaluate(_:forHost:)``
/// directly checks no host.
///
/// For each certificate in ``RevocationOptions/scope`` the sources are tried in this order,
/// until one gives a verified answer: the stapled OCSP response (leaf only), CRLs given to the
/// evaluator, the ``RevocationCache``, then live OCSP (the responders of the Authority
/// Information Access extension) and CRLs (the certificate's distribution points) in the order
/// of ``RevocationOptions/methods``, all within ``RevocationOptions/timeBudget``. Then:
///
/// - a certificate that is **revoked** rejects the server with `TrustError.Code.revoked`, in
///   every mode;
/// - a **must-staple** leaf (RFC 7633) without a valid stapled response rejects it with
///   `TrustError.Code.revocationStatusUnknown`, in every mode;
/// - an **unknown** status rejects it with `TrustError.Code.revocationStatusUnknown` when
///   ``RevocationOptions/requirePositiveResponse`` is set (hard-fail), and is accepted otherwise
///   (soft-fail).
///
/// A network failure, a timeout or a response that does not verify is always unknown, never
/// good. The per-certificate results are recorded on the trust, rejection or not: read them
/// from ``PeerTrust/revocationResults``. The behaviour table is in <doc:RevocationBehaviour>.
///
/// Live queries use the evaluator's ``RevocationFetcher``, else the one the ``PeerTrust``
/// carries (a session's), else none (a query that would be needed is then unknown:
/// `RevocationStatus.UnknownReason.networkAccessDisabled`).
public final class RevocationTrustEvaluator: ServerTrustEvaluating {
    let options: RevocationOptions
    private let fetcher: (any RevocationFetcher)?
    private let cache: RevocationCache
    private let localCRLs: [ProfiledCRL]
    let anchors: TrustAnchors?

    /// - Parameters:
    ///   - options: what to check and how; default ``RevocationOptions/softFail``.
    ///   - fetcher: for live queries; default `nil`, which uses the trust's
    ///     ``PeerTrust/revocationFetcher``.
    ///   - cache: default ``RevocationCache/shared``.
    ///   - revocationLists: CRLs the application already has (complete, and optionally delta),
    ///     consulted before the cache when the methods include CRLs. Verified like fetched ones.
    ///     Default none.
    ///   - anchors: the anchors to validate the chain against when no evaluator has yet;
    ///     default `nil`, the trust's anchors.
    public init(
        options: RevocationOptions = .softFail,
        fetcher: (any RevocationFetcher)? = nil,
        cache: RevocationCache = .shared,
        revocationLists: [CertificateRevocationList] = [],
        anchors: TrustAnchors? = nil
    ) {
        self.options = options
        self.fetcher = fetcher
        self.cache = cache
        self.localCRLs = revocationLists.map(ProfiledCRL.init)
        self.anchors = anchors
    }

    public func evaluate(_ trust: PeerTrust, forHost host: String) throws {
        // The budget bounds the whole evaluation, validation included, as the handshake sees it.
        let deadline = ContinuousClock.now + options.timeBudget
        try attributing(host: host) {
            let path = try validatedPath(of: trust)
            let chain = path.certificates
            let checker = RevocationChecker(
                options: options, fetcher: fetcher ?? trust.revocationFetcher, cache: cache, localCRLs: localCRLs,
                time: trust.validationTime, deadline: deadline, record: trust.revocationRecord)
            var results: [CertificateRevocationResult] = []
            // The anchor ends the validated path and is trusted by configuration, not by a CA that
            // could revoke it; so are the anchors above it, added only so that pins see them.
            let depths = options.scope.isWholeChain ? Array(0..<max(path.validatedCount - 1, 1)) : [0]
            for depth in depths {
                let certificate = chain[depth]
                let issuer = depth == 0 ? trust.issuer(ofLeafIn: chain) : chain[depth + 1]
                // A self-signed certificate trusted as an anchor has no one above it to revoke it.
                if let issuer, issuer == certificate { continue }
                let result = checker.check(
                    certificate, depth: depth, issuer: issuer, staple: depth == 0 ? trust.stapledOCSPResponse : nil)
                results.append(result)
                if case .revoked = result.status { break }
            }
            trust.recordRevocationResults(results)
            try decide(results, chain: chain)
        }
    }

    /// The chain to check: against this evaluator's own anchors when it has some, else the
    /// chain an enforcing evaluator before it validated (a pinning evaluator's, with pins as
    /// anchors), else the trust's own anchors'. A chain only a report-only evaluator validated
    /// (an informational one, a canary's trial) is never adopted here: it may rest on anchors
    /// nothing enforces.
    private func validatedPath(of trust: PeerTrust) throws -> ValidatedPath {
        if let anchors { return try trust.validatedPath(against: anchors.store) }
        return try trust.adoptableValidatedPath ?? trust.validatedPath()
    }

    private func decide(_ results: [CertificateRevocationResult], chain: [Certificate]) throws {
        var evidence = TrustError.Evidence()
        evidence.chain = chain.map(\.summary)
        evidence.revocation = results
        for result in results {
            if case .revoked(let reason, let date) = result.status {
                throw TrustError(
                    .revoked,
                    "\(result.certificate.subject) (depth \(result.depth), serial \(result.certificate.serialNumber)) is revoked"
                        + " since \(date.formatted(.iso8601)), reason \(reason?.description ?? "not given"), according to the "
                        + "\(result.source)\(result.fromCache ? " (cached)" : ""). \(result.explanation)",
                    evidence: evidence)
            }
        }
        if let leaf = results.first, leaf.depth == 0, leaf.certificate.hasMustStaple, case .unknown(let reason) = leaf.status {
            throw TrustError(
                .revocationStatusUnknown,
                "\(leaf.certificate.subject) is OCSP must-staple (RFC 7633), so only a valid stapled response is accepted, "
                    + "and there is none (\(reason.identifier)): \(leaf.explanation)",
                evidence: evidence)
        }
        guard options.requirePositiveResponse else { return }
        for result in results {
            if case .unknown(let reason) = result.status, reason != .shortLivedCertificate {
                throw TrustError(
                    .revocationStatusUnknown,
                    "The revocation status of \(result.certificate.subject) (depth \(result.depth)) is unknown "
                        + "(\(reason.identifier)) and the policy requires a verified answer (hard-fail): \(result.explanation)",
                    evidence: evidence)
            }
        }
    }
}

extension ServerTrustEvaluating where Self == RevocationTrustEvaluator {
    /// Revocation checking: `.revocationChecking(.hardFail)`,
    /// `.revocationChecking(RevocationOptions(scope: .wholeChain))`.
    ///
    /// - Parameters:
    ///   - options: default ``RevocationOptions/softFail``.
    ///   - fetcher: for live queries; default `nil`, the trust's own.
    ///   - cache: default ``RevocationCache/shared``.
    public static func revocationChecking(
        _ options: RevocationOptions = .softFail,
        fetcher: (any RevocationFetcher)? = nil,
        cache: RevocationCache = .shared
    ) -> RevocationTrustEvaluator {
        RevocationTrustEvaluator(options: options, fetcher: fetcher, cache: cache)
    }
}
