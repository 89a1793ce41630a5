import CoreMetrics
import ServerTrust

/// The swift-metrics instruments of one session (``Session/Configuration/metricsFactory``).
///
/// Every label set is bounded: methods outside the standard set become `_OTHER`, codes and
/// modes are closed sets, evaluator names are the session's own policies. No host, URL or path
/// is ever a dimension — a client talking to many hosts would otherwise grow a backend's
/// series without bound. Each instrument is made once per label set and kept, so a request
/// costs dictionary look-ups under one lock, not allocations.
///
/// Absent (nil in the session) when the factory is swift-metrics' no-op handler: a session
/// without a metrics backend then does no metrics work at all.
final class SessionMetrics: Sendable {
    /// The metric names (labels, in swift-metrics' terms). See the Observability article.
    enum Name {
        static let requests = "servertrust_requests_total"
        static let requestFailures = "servertrust_request_failures_total"
        static let requestDuration = "servertrust_request_duration_seconds"
        static let handshakeDuration = "servertrust_tls_handshake_duration_seconds"
        static let evaluations = "servertrust_trust_evaluations_total"
        static let trustFailures = "servertrust_trust_failures_total"
        static let revocationFetches = "servertrust_revocation_fetches_total"
        static let revocationCacheLookups = "servertrust_revocation_cache_lookups_total"
        static let signedResponses = "servertrust_signed_responses_total"
        static let certificateTransparency = "servertrust_certificate_transparency_total"
    }

    private struct Key: Hashable {
        let name: String
        let dimensions: [String]
    }

    private let factory: any MetricsFactory
    private let counters = Locked<[Key: Counter]>([:])
    private let timers = Locked<[Key: CoreMetrics.Timer]>([:])

    /// nil when `factory` (nil: the global `MetricsSystem.factory`) is the no-op handler.
    init?(factory: (any MetricsFactory)?) {
        let factory = factory ?? MetricsSystem.factory
        if factory is NOOPMetricsHandler { return nil }
        self.factory = factory
    }

    // MARK: Requests

    /// One `data(for:)` or `stream(_:)` call ended: with a response (`error` nil) or an error.
    func requestFinished(method: String, error: (any Error)?, nanoseconds: Int64) {
        let method = Self.boundedMethod(method)
        let outcome = error == nil ? "success" : "failure"
        counter(Name.requests, ["method", method, "outcome", outcome]).increment()
        timer(Name.requestDuration, ["method", method, "outcome", outcome]).recordNanoseconds(nanoseconds)
        if let error {
            counter(Name.requestFailures, ["method", method, "code", Self.code(of: error)]).increment()
        }
    }

    /// A TLS handshake completed on a new connection (a reused connection makes none).
    func handshakeCompleted(nanoseconds: Int64) {
        timer(Name.handshakeDuration, []).recordNanoseconds(nanoseconds)
    }

    // MARK: Trust

    /// One evaluation under `evaluator` (the policy's evaluator, as ``TrustReport/evaluator``).
    func evaluated(_ report: TrustReport) {
        let evaluator = report.evaluator
        counter(Name.evaluations, ["evaluator", evaluator, "result", report.failure == nil ? "accepted" : "rejected"]).increment()
        if let failure = report.failure {
            counter(Name.trustFailures, ["evaluator", evaluator, "reason", failure.code.description, "mode", EnforcementMode.enforced.description])
                .increment()
        }
        for finding in report.findings {
            counter(Name.trustFailures, ["evaluator", evaluator, "reason", finding.error.code.description, "mode", finding.mode.description])
                .increment()
        }
        // Every outcome of a host requiring CT, report-only as well as enforced: report-only is
        // how CT is trialled, and its shortfalls are what the trial is for.
        if let ct = report.evaluation?.certificateTransparencyReport {
            counter(Name.certificateTransparency, ["result", ct.reason ?? "compliant", "mode", ct.mode]).increment()
        }
        for result in report.revocation {
            if result.fromCache {
                counter(Name.revocationCacheLookups, ["result", "hit"]).increment()
            } else if result.source != .stapledOCSP && result.source != .localCRL {
                // Neither a staple nor an application-supplied CRL answered, and the cache had
                // nothing: the check went to the network (or, with it off, stayed unknown).
                counter(Name.revocationCacheLookups, ["result", "miss"]).increment()
            }
        }
    }

    // MARK: Revocation

    /// One call to the session's `RevocationFetcher` returned.
    func revocationFetched(_ kind: RevocationFetchRequest.Kind, _ result: Result<[UInt8], TrustError>) {
        let outcome: String
        switch result {
        case .success: outcome = "success"
        case .failure(let error): outcome = error.code.description
        }
        counter(Name.revocationFetches, ["kind", kind.description, "outcome", outcome]).increment()
    }

    // MARK: Signed responses

    /// One response of a signature-checked host was judged: `scheme` is the one that verified
    /// or failed (`v1`, `rfc9421`), `failure` nil when it verified.
    func signedResponseChecked(scheme: String, mode: SignedResponsePolicy.Mode, failure: ResponseSignatureError?) {
        counter(
            Name.signedResponses,
            ["scheme", scheme, "result", failure == nil ? "verified" : "failed", "reason", failure?.code.description ?? "none", "mode", mode.description]
        ).increment()
    }

    // MARK: Label values

    private static let standardMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"]

    /// The method as a label value: one of the standard methods, else `_OTHER` (as OpenTelemetry
    /// spells it), so a caller's arbitrary method strings cannot grow the label set.
    static func boundedMethod(_ method: String) -> String {
        let upper = method.uppercased()
        return standardMethods.contains(upper) ? upper : "_OTHER"
    }

    /// ``SessionError/Code`` as a label value; `other` for an error that is not a session error.
    static func code(of error: any Error) -> String {
        (error as? SessionError)?.code.description ?? "other"
    }

    // MARK: Instruments

    private func counter(_ name: String, _ dimensions: [String]) -> Counter {
        let key = Key(name: name, dimensions: dimensions)
        if let counter = counters.withLock({ $0[key] }) { return counter }
        let made = Counter(label: name, dimensions: Self.pairs(dimensions), factory: factory)
        return counters.withLock { cache in
            if let filed = cache[key] { return filed }
            cache[key] = made
            return made
        }
    }

    private func timer(_ name: String, _ dimensions: [String]) -> CoreMetrics.Timer {
        let key = Key(name: name, dimensions: dimensions)
        if let timer = timers.withLock({ $0[key] }) { return timer }
        let made = CoreMetrics.Timer(label: name, dimensions: Self.pairs(dimensions), preferredDisplayUnit: .seconds, factory: factory)
        return timers.withLock { cache in
            if let filed = cache[key] { return filed }
            cache[key] = made
            return made
        }
    }

    private static func pairs(_ flat: [String]) -> [(String, String)] {
        stride(from: 0, to: flat.count, by: 2).map { (flat[$0], flat[$0 + 1]) }
    }
}
