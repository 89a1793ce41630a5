import ServerTrust

/// The session's `RevocationFetcher` with every fetch counted
/// (`servertrust_revocation_fetches_total`, by kind and outcome).
///
/// Wraps the fetcher the session's policies hand to revocation checks, so the core ServerTrust
/// module needs no metrics dependency. A `RevocationTrustEvaluator` built with a
/// fetcher of its own bypasses the session's and is not counted.
struct MeteredRevocationFetcher: RevocationFetcher {
    let upstream: any RevocationFetcher
    let metrics: SessionMetrics

    func fetch(_ request: RevocationFetchRequest, deadline: ContinuousClock.Instant) -> Result<[UInt8], TrustError> {
        let result = upstream.fetch(request, deadline: deadline)
        metrics.revocationFetched(request.kind, result)
        return result
    }
}
