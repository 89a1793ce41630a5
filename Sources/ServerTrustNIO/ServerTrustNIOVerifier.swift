#if NIOAdapter
import Dispatch
public import Logging
public import NIOCore
public import NIOSSL
public import ServerTrust

/// A `ServerTrustManager` as swift-nio-ssl's certificate verification: pins,
/// revocation and per-host policies for `NIOSSLClientHandler` and grpc-swift-nio-transport.
///
/// ```swift
/// let verifier = try ServerTrustNIOVerifier(trustManager: ServerTrustManager(evaluators: [
///     try HostPattern("api.example.com"): .pinnedKeyHashes(["sha256/…", "sha256/…backup"]),
/// ]))
/// var tls = TLSConfiguration.makeClientConfiguration()
/// tls.minimumTLSVersion = .tlsv12  // swift-nio-ssl's default allows TLS 1.0, which is refused
/// let sslContext = try NIOSSLContext(configuration: tls)
/// let channel = try await ClientBootstrap(group: group)
///     .channelInitializer { channel in
///         channel.eventLoop.makeCompletedFuture {
///             try verifier.addClientHandlers(to: channel.pipeline.syncOperations, context: sslContext, host: "api.example.com")
///             try channel.pipeline.syncOperations.addHTTPClientHandlers()
///         }
///     }
///     .connect(host: "api.example.com", port: 443).get()
/// ```
///
/// The certificates the server presents reach the verification callback as DER; they are
/// parsed by OpenSSL into `Certificate` and evaluated by the host's evaluator on
/// a `PeerTrust` built from this verifier's anchors, validation options and
/// revocation fetcher — the same evaluation a `Session` runs. The evaluation runs off the event
/// loop (on a concurrent Dispatch queue of the verifier), since live revocation may block on the
/// network; the promise is then completed with the validated chain, or failed with a
/// ``ServerTrustNIOError`` carrying the `TrustError`.
///
/// The host's policy is resolved as a `Session` resolves it (`ServerTrustManager.resolve(host:)`):
/// the manager's most specific pattern's `HostPolicy`; no match with
/// `allHostsMustBeEvaluated == false` means default validation (chain to ``anchors``, host
/// name, validity, serverAuth); any error from the manager — no pattern with
/// `allHostsMustBeEvaluated == true`, a malformed host — refuses the host when its
/// ``HostTrustVerification`` is made, so no connection to it is verified at all. Each
/// evaluation goes through the entry point every client path uses
/// (`ResolvedHostPolicy.evaluate(_:handshake:in:)`), which counts it in ``counters`` and logs
/// it to ``logger`` as a `Session` does.
///
/// What swift-nio-ssl does not give, and what that means:
/// - **OCSP staples**: it exposes none, so every evaluation sees no staple
///   (``StapledOCSPHandling`` says what happens to staple-only policies; live revocation works
///   with a `RevocationFetcher`).
/// - **TLS-extension and stapled SCTs**: a host's Certificate Transparency requirement is
///   judged on the SCTs embedded in the leaf only (``certificateTransparencySources``); a
///   refusal says so. The outcome is in ``HostTrustVerification/lastEvaluation`` and the
///   refusal's `evaluation`.
/// - **Its own checks**: a custom callback replaces all of BoringSSL's certificate verification
///   (chain, validity, purpose); this evaluation takes them over, the host check included:
///   every evaluation checks the leaf against the host whatever the evaluator
///   (`ServerTrustEvaluating.evaluateAsPolicy(_:forHost:)`; only an active
///   `DisabledTrustEvaluator` checks nothing). With `.fullVerification`, swift-nio-ssl checks
///   the leaf against the SNI name (or the peer's IP address) once more after the callback;
///   `.noHostnameVerification` leaves it to ServerTrust alone. `.none` (and
///   `.optionalVerification`) never call the callback: ``addClientHandlers(to:context:host:)``
///   refuses such a context, and one whose `minimumTLSVersion` is below TLS 1.2.
/// - **Session resumption**: a `NIOSSLClientHandler` never resumes a TLS session, so every
///   connection makes a full handshake and a full evaluation. Everything sent on a channel
///   afterwards (HTTP/1.1 keep-alive requests, HTTP/2 streams) rides the evaluation of its
///   handshake: never send requests for another host over it.
///
/// **Trust updates.** Made with a `LiveTrustManager`
/// (``init(liveTrustManager:anchors:revocationFetcher:validationOptions:stapledOCSPHandling:counters:logger:)``),
/// the verifier follows its replacements: ``verification(forHost:)`` resolves the host under the
/// manager in force when it is called (``addClientHandlers(to:context:host:)`` calls it for each
/// connection), and a handshake made after a replacement is evaluated under the manager in force
/// then. A channel already established keeps the evaluation of its handshake: a
/// ``PolicyRetirementHandler`` closes it once the manager is replaced
/// (``addClientHandlers(to:context:host:)`` adds one).
///
/// Immutable, hence `Sendable`: share one verifier between event loops and connections; make a
/// ``HostTrustVerification`` per connection (``addClientHandlers(to:context:host:)`` does).
public final class ServerTrustNIOVerifier: Sendable {
    /// The per-host evaluators: the manager in force (``liveTrustManager``'s `current`) when
    /// read.
    public var trustManager: ServerTrustManager { liveTrustManager.current }
    /// The manager in force and its replacements; a verifier made with a `ServerTrustManager`
    /// holds it in one of its own, which nothing else replaces.
    public let liveTrustManager: LiveTrustManager
    /// The anchors chains are validated against (the system bundle by default).
    public let anchors: TrustAnchors
    /// The fetcher live OCSP and CRL checks use when their evaluator has none of its own;
    /// `nil` for none (such checks then give "unknown": accepted by soft-fail, refused by
    /// hard-fail).
    public let revocationFetcher: (any RevocationFetcher)?
    /// How path validation is configured.
    public let validationOptions: PathValidationOptions
    /// What happens to staple-only revocation policies (no staple can be had here).
    public let stapledOCSPHandling: StapledOCSPHandling
    /// Where evaluations and failures are counted (`TrustCounters.Snapshot`), as a `Session`'s
    /// `TrustCounters` are; share one with your sessions for one set of numbers.
    public let counters: TrustCounters
    /// Where evaluations (debug) and failures (error) are logged, with the metadata a
    /// `Session` logs them with.
    public let logger: Logger

    /// Where this adapter finds signed certificate timestamps for a host's Certificate
    /// Transparency requirement (`HostPolicy.certificateTransparency`): in the leaf only
    /// (`SignedCertificateTimestamp.Source.embedded`).
    ///
    /// swift-nio-ssl's verification callback receives the peer's certificates and nothing else
    /// of the handshake, and swift-nio-ssl neither asks for nor exposes the TLS
    /// `signed_certificate_timestamp` extension or an OCSP staple. So the SCTs a server delivers
    /// that way (`.tlsExtension`, `.ocspStaple`) are never seen here: a host whose certificate
    /// carries no embedded SCTs of its own is judged to have none (`notEnoughSCTs`), and under
    /// an enforced requirement refused, with a reason saying these sources were not available.
    /// A `Session` sees all three.
    public static let certificateTransparencySources: Set<SignedCertificateTimestamp.Source> = [.embedded]

    /// The sentence a Certificate Transparency refusal ends with, saying what was not seen.
    static let certificateTransparencySourcesNote =
        "ServerTrustNIO judged the SCTs embedded in the certificate only: swift-nio-ssl's verification callback "
        + "gives no TLS-extension SCTs and no stapled OCSP response, so SCTs the server sends those ways were not "
        + "available. Use a certificate with embedded SCTs, or connect to this host with Session."

    /// What every evaluation of this verifier shares.
    let context: TrustEvaluationContext

    /// Where evaluations run: off the event loop, concurrently.
    let queue: DispatchQueue

    /// - Parameters:
    ///   - trustManager: the evaluator for each host pattern.
    ///   - anchors: the trust anchors; default `nil`, the system CA bundle
    ///     (`TrustAnchors.system()`, loaded once per process).
    ///   - revocationFetcher: for live OCSP and CRL queries of evaluators that have no fetcher of
    ///     their own; default `nil`. ServerTrustHTTP's curl-backed fetcher fits, as does any
    ///     `RevocationFetcher` of yours.
    ///   - validationOptions: path validation options; default `PathValidationOptions()`.
    ///   - stapledOCSPHandling: what to do with staple-only revocation policies; default
    ///     ``StapledOCSPHandling/failClosed``.
    ///   - counters: where evaluations are counted; default a fresh set.
    ///   - logger: where evaluations are logged; default `TrustLogging.defaultLogger` (label `servertrust`).
    /// - Throws: `TrustError` `.unreadableInput` when `anchors` is `nil` and no
    ///   system CA bundle is found.
    public convenience init(
        trustManager: ServerTrustManager,
        anchors: TrustAnchors? = nil,
        revocationFetcher: (any RevocationFetcher)? = nil,
        validationOptions: PathValidationOptions = PathValidationOptions(),
        stapledOCSPHandling: StapledOCSPHandling = .failClosed,
        counters: TrustCounters = TrustCounters(),
        logger: Logger = TrustLogging.defaultLogger
    ) throws {
        try self.init(
            liveTrustManager: LiveTrustManager(trustManager), anchors: anchors, revocationFetcher: revocationFetcher,
            validationOptions: validationOptions, stapledOCSPHandling: stapledOCSPHandling, counters: counters, logger: logger)
    }

    /// A verifier that follows the replacements of `liveTrustManager`: each
    /// ``verification(forHost:)`` resolves the host under the manager in force, each handshake
    /// is evaluated under the manager in force, and ``PolicyRetirementHandler`` closes the
    /// channels established under a replaced one.
    ///
    /// - Parameters:
    ///   - liveTrustManager: the manager in force and its replacements (a trust update calls
    ///     its `replace(with:)`).
    ///   - anchors: the trust anchors; default `nil`, the system CA bundle (not replaced with
    ///     the manager, nor are the other settings below).
    ///   - revocationFetcher: for live OCSP and CRL queries of evaluators that have no fetcher of
    ///     their own; default `nil`.
    ///   - validationOptions: path validation options; default `PathValidationOptions()`.
    ///   - stapledOCSPHandling: what to do with staple-only revocation policies; default
    ///     ``StapledOCSPHandling/failClosed``.
    ///   - counters: where evaluations are counted; default a fresh set.
    ///   - logger: where evaluations are logged; default `TrustLogging.defaultLogger`.
    /// - Throws: `TrustError` `.unreadableInput` when `anchors` is `nil` and no
    ///   system CA bundle is found.
    public init(
        liveTrustManager: LiveTrustManager,
        anchors: TrustAnchors? = nil,
        revocationFetcher: (any RevocationFetcher)? = nil,
        validationOptions: PathValidationOptions = PathValidationOptions(),
        stapledOCSPHandling: StapledOCSPHandling = .failClosed,
        counters: TrustCounters = TrustCounters(),
        logger: Logger = TrustLogging.defaultLogger
    ) throws {
        self.liveTrustManager = liveTrustManager
        let anchors = try anchors ?? TrustAnchors.system()
        self.anchors = anchors
        self.revocationFetcher = revocationFetcher
        self.validationOptions = validationOptions
        self.stapledOCSPHandling = stapledOCSPHandling
        self.counters = counters
        self.logger = logger
        context = TrustEvaluationContext(
            anchors: anchors, validationOptions: validationOptions, revocationFetcher: revocationFetcher, counters: counters, logger: logger)
        queue = DispatchQueue(label: "ServerTrustNIO.evaluation", qos: .userInitiated, attributes: .concurrent)
    }

    /// The verification of one host: its evaluator, chosen now under the manager in force (its
    /// ``HostTrustVerification/generation`` is that manager's), and the callback and SNI name
    /// for swift-nio-ssl.
    ///
    /// - Parameter host: the DNS name or IP address the connection is meant for, as in a URL
    ///   (`API.example.com.`, `[2001:db8::1]`); normalised with `NormalizedHost`.
    /// - Throws: ``ServerTrustNIOError`` carrying the manager's `TrustError`
    ///   (`.noEvaluatorForHost` for an unmatched host when all hosts must be evaluated, or a
    ///   malformed host), or `.invalidConfiguration` for a staple-only evaluator under
    ///   ``StapledOCSPHandling/failClosed`` or a policy requiring post-quantum key exchange
    ///   (swift-nio-ssl does not tell which group was negotiated).
    public func verification(forHost host: String) throws(ServerTrustNIOError) -> HostTrustVerification {
        try verification(forHost: host, contextMeetsFloor: false)
    }

    /// - Parameter contextMeetsFloor: whether the caller checked the TLS context against the
    ///   host policy's floor (``addClientHandlers(to:context:host:)`` does); without it, a floor
    ///   above TLS 1.2 cannot be confirmed and every evaluation is refused.
    func verification(forHost host: String, contextMeetsFloor: Bool) throws(ServerTrustNIOError) -> HostTrustVerification {
        let name = NormalizedHost(host)
        // The manager and its generation read together: the verification records which
        // manager it was resolved under, for PolicyRetirementHandler.
        let (manager, generation) = liveTrustManager.snapshot
        let resolved: ResolvedHostPolicy
        do {
            resolved = try manager.resolve(name, spelled: name.name)
        } catch {
            throw ServerTrustNIOError(trustError: error, host: name, resolved: nil)
        }
        let evaluator = resolved.evaluator
        if stapledOCSPHandling.refusesStapleOnlyEvaluators, evaluator.usesStapledOCSPResponse, !evaluator.mayFetchRevocationData {
            throw ServerTrustNIOError(
                trustError: TrustError(
                    .invalidConfiguration,
                    "\(evaluator.name) checks revocation with OCSP staples only, and swift-nio-ssl gives no staple, so it "
                        + "could never learn a revocation status for \(name). Use live revocation (RevocationOptions.softFail "
                        + "or .hardFail, with a RevocationFetcher), or StapledOCSPHandling.evaluateWithoutStaple to evaluate "
                        + "as if no staple had been sent.",
                    evaluator: evaluator.name, host: name.name),
                host: name, resolved: resolved)
        }
        if resolved.policy.keyExchange != .any {
            throw ServerTrustNIOError(
                trustError: TrustError(
                    .invalidConfiguration,
                    "The policy of \(name) requires \(resolved.policy.keyExchange) key exchange, and swift-nio-ssl's verification "
                        + "callback does not say which group was negotiated, so ServerTrustNIO cannot honour it. Connect to "
                        + "this host with Session, or drop the requirement for it.",
                    evaluator: evaluator.name, host: name.name),
                host: name, resolved: resolved)
        }
        let unhonoured = Self.unhonouredSettings(of: resolved.policy)
        if !unhonoured.isEmpty {
            throw ServerTrustNIOError(
                trustError: TrustError(
                    .invalidConfiguration,
                    "The policy of \(name) sets \(unhonoured.joined(separator: ", ")), which ServerTrustNIO cannot honour: it "
                        + "verifies the server only (its evaluator and TLS floor). Connect to this host with Session, or drop "
                        + (unhonoured.count == 1 ? "that setting" : "those settings") + " from its policy.",
                    evaluator: evaluator.name, host: name.name),
                host: name, resolved: resolved)
        }
        return HostTrustVerification(
            resolved: resolved, generation: generation, requestedHost: host, verifier: self, contextMeetsFloor: contextMeetsFloor)
    }

    /// The settings of a host policy this module cannot apply, named as `HostPolicy` names them:
    /// a client identity (the TLS context's, not the host's, is presented), a signed-response
    /// policy that checks (nothing here sees the responses) and report URIs (nothing here
    /// reports). The evaluator and the TLS floor are honoured; the key exchange is refused
    /// above, on its own.
    static func unhonouredSettings(of policy: HostPolicy) -> [String] {
        var names: [String] = []
        if policy.clientIdentity != nil { names.append("a client identity (HostPolicy.clientIdentity)") }
        if let signed = policy.signedResponses, signed.mode != .disabled {
            names.append("a \(signed.mode) signed-response policy (HostPolicy.signedResponses)")
        }
        if !policy.reportURIs.isEmpty { names.append("report URIs (HostPolicy.reportURIs)") }
        return names
    }

    /// Adds a `NIOSSLClientHandler` that verifies the server with this verifier for `host`,
    /// a ``ServerTrustGuardHandler`` right after it, and a ``PolicyRetirementHandler`` after
    /// that: the one call a channel initializer needs.
    ///
    /// The same as ``addClientHandlers(to:context:host:retireOnPolicyChange:)`` with
    /// `retireOnPolicyChange: true`: once ``liveTrustManager`` is replaced, the channel is closed
    /// (whatever the new manager says of its server), so that no channel keeps serving under a
    /// policy that is no longer in force.
    ///
    /// The host is given once: the handler's SNI name (`serverHostname`) and the name evaluated
    /// are both derived from it, so they cannot disagree. An IP address is evaluated against the
    /// certificate's IP SANs and sent without SNI (an address is not allowed there).
    ///
    /// - Parameters:
    ///   - pipeline: the channel's pipeline, on its event loop.
    ///   - context: the TLS client context. Its `certificateVerification` must be
    ///     `.noHostnameVerification` or `.fullVerification`, and its `minimumTLSVersion`
    ///     `.tlsv12` or `.tlsv13` (swift-nio-ssl's `makeClientConfiguration()` allows TLS 1.0:
    ///     set it); its trust roots are not used for the server's chain (the verifier's
    ///     ``anchors`` are).
    ///   - host: the DNS name or IP address this connection is for.
    /// - Returns: the host's verification, whose ``HostTrustVerification/lastFailure`` tells why
    ///   the handshake failed, if it did.
    /// - Throws: ``ServerTrustNIOError`` as ``verification(forHost:)`` does, and with
    ///   `.invalidConfiguration` for a context whose certificate verification is off or whose
    ///   minimum protocol is below TLS 1.2 (the message names it), `.tlsVersionBelowPolicy` for
    ///   one below the host policy's TLS 1.3 floor; whatever
    ///   `NIOSSLClientHandler` or the pipeline throw. Nothing is added when it throws.
    @discardableResult
    public func addClientHandlers(
        to pipeline: ChannelPipeline.SynchronousOperations, context: NIOSSLContext, host: String
    ) throws -> HostTrustVerification {
        try addClientHandlers(to: pipeline, context: context, host: host, retireOnPolicyChange: true)
    }

    /// Adds a `NIOSSLClientHandler` that verifies the server with this verifier for `host`,
    /// a ``ServerTrustGuardHandler`` right after it, and, with `retireOnPolicyChange`, a
    /// ``PolicyRetirementHandler`` after the guard.
    ///
    /// The trade-off of `retireOnPolicyChange`: with it (the default of
    /// ``addClientHandlers(to:context:host:)``), every channel set up before a replacement of
    /// ``liveTrustManager`` is closed when it happens — requests in flight on it fail and the
    /// application reconnects (the new handshake is evaluated under the new manager), even when
    /// the new manager would still accept its server. Without it, an established channel keeps
    /// the evaluation of its handshake until it is closed: a key deny-listed or a pin withdrawn
    /// by the update goes on serving there. Pass `false` only for channels that live briefly or
    /// that you retire yourself (compare ``HostTrustVerification/generation`` with
    /// `liveTrustManager.generation`, or watch `liveTrustManager.changes()`).
    ///
    /// - Parameters:
    ///   - pipeline: the channel's pipeline, as in ``addClientHandlers(to:context:host:)``.
    ///   - context: the TLS context, as there.
    ///   - host: the host the channel is for, as there.
    ///   - retireOnPolicyChange: whether to close the channel once the manager it was set up
    ///     under is replaced.
    /// - Returns: the host's verification.
    /// - Throws: as ``addClientHandlers(to:context:host:)``.
    @discardableResult
    public func addClientHandlers(
        to pipeline: ChannelPipeline.SynchronousOperations, context: NIOSSLContext, host: String, retireOnPolicyChange: Bool
    ) throws -> HostTrustVerification {
        // The context is checked against the host's floor below, before any handler is added.
        let verification = try self.verification(forHost: host, contextMeetsFloor: true)
        switch context.configuration.certificateVerification {
        case .fullVerification, .noHostnameVerification:
            break
        case .none:
            throw verification.refusal(
                .invalidConfiguration,
                "The NIOSSLContext's certificateVerification is .none or .optionalVerification: swift-nio-ssl then "
                    + "skips the verification callback, so \(verification.host) would not be evaluated. Use "
                    + ".noHostnameVerification (ServerTrust checks the host) or .fullVerification.")
        }
        let floor = verification.resolved.policy.minimumTLSVersion
        if floor > .tls12, context.configuration.minimumTLSVersion != .tlsv13 {
            throw verification.refusal(
                .tlsVersionBelowPolicy,
                "The policy of \(verification.host) requires \(floor), and the NIOSSLContext's minimumTLSVersion allows less "
                    + "(swift-nio-ssl tells the verification callback nothing of the protocol, so the floor is checked here). "
                    + "Set minimumTLSVersion = .tlsv13 for this host's context.")
        }
        if let version = Self.belowTLS12(context.configuration.minimumTLSVersion) {
            throw verification.refusal(
                .invalidConfiguration,
                "The NIOSSLContext's minimumTLSVersion is \(version) (swift-nio-ssl's makeClientConfiguration() default is "
                    + "TLS 1.0): a connection to \(verification.host) could be made with \(version), which RFC 8996 deprecates "
                    + "(SHA-1 and MD5 in the handshake, CBC-only ciphers). Set minimumTLSVersion = .tlsv12 (or .tlsv13).")
        }
        let handler = try NIOSSLClientHandler(
            context: context, serverHostname: verification.serverHostname,
            customVerificationCallbackWithMetadata: verification.callback)
        if retireOnPolicyChange {
            try pipeline.addHandlers([handler, verification.makeGuardHandler(), verification.makeRetirementHandler()])
        } else {
            try pipeline.addHandlers([handler, verification.makeGuardHandler()])
        }
        return verification
    }

    /// The name of a protocol version below TLS 1.2, or `nil` for TLS 1.2 and later.
    static func belowTLS12(_ version: TLSVersion) -> String? {
        switch version {
        case .tlsv1: "TLS 1.0"
        case .tlsv11: "TLS 1.1"
        case .tlsv12, .tlsv13: nil
        }
    }
}
#endif
