#if NIOAdapter
import Foundation
public import NIOCore
public import NIOSSL
public import ServerTrust

/// The verification of one host's servers for swift-nio-ssl: the callback, the SNI name to send
/// with it, and what the last evaluation concluded.
///
/// Made by ``ServerTrustNIOVerifier/verification(forHost:)``, which chose the host's evaluator.
/// Give ``callback`` to `NIOSSLClientHandler(context:serverHostname:customVerificationCallbackWithMetadata:)`
/// with ``serverHostname``, or to grpc-swift-nio-transport's
/// `HTTP2ClientTransport.Posix.TransportSecurity.TLS.customVerificationCallback` (see the
/// article <doc:ServerTrustNIO>), and put ``makeGuardHandler()`` right after the
/// `NIOSSLClientHandler`.
///
/// One per connection, one host each: the callback evaluates for this host whatever server it
/// is called for, so never install it on a connection to another host. A gRPC transport, which
/// connects to one target, shares one among its connections; ``lastFailure`` is then the most
/// recent failure among them.
///
/// **Trust updates.** The verification is resolved under the manager in force when it is made,
/// whose generation is ``generation``. When the verifier's `LiveTrustManager` has been replaced
/// since, the callback resolves the host again under the manager in force for that handshake
/// (its outcome is recorded here all the same), so a gRPC transport sharing one verification
/// follows replacements on its new connections. An established channel is not evaluated again:
/// ``makeRetirementHandler()`` closes it after a replacement.
///
/// Thread-safe (its record is behind a lock), hence `Sendable`.
public final class HostTrustVerification: Sendable {
    /// The host resolved to its policy, once, as every client path resolves it, under the
    /// manager of ``generation``.
    public let resolved: ResolvedHostPolicy
    /// The generation of the verifier's `LiveTrustManager` this verification was resolved
    /// under: compare it with `liveTrustManager.generation` to tell whether a channel set up
    /// with it predates a replacement (``PolicyRetirementHandler`` does).
    public let generation: UInt64
    /// The host evaluated, normalised.
    public var host: NormalizedHost { resolved.host }
    /// The pattern of the trust manager that matched, or `nil` when none did and default
    /// validation applies.
    public let pattern: HostPattern?
    /// The evaluator chosen for the host.
    public var evaluator: any ServerTrustEvaluating { resolved.evaluator }
    /// The SNI name for `NIOSSLClientHandler`: the host, or `nil` for an IP address (which SNI
    /// may not carry).
    public var serverHostname: String? { host.isIPAddress ? nil : host.name }

    private let verifier: ServerTrustNIOVerifier
    /// The host as the caller spelled it, to resolve it again after a replacement.
    private let requestedHost: String

    /// How many evaluations ended, and the last failure.
    private struct Record {
        var accepted = 0
        var refused = 0
        var lastFailure: ServerTrustNIOError?
        var lastEvaluation: TrustEvaluation?
    }

    private let record = Locked(Record())

    /// Whether the TLS context was checked against the host policy's floor when this
    /// verification was made (``ServerTrustNIOVerifier/addClientHandlers(to:context:host:)``).
    private let contextMeetsFloor: Bool

    init(
        resolved: ResolvedHostPolicy, generation: UInt64, requestedHost: String, verifier: ServerTrustNIOVerifier,
        contextMeetsFloor: Bool
    ) {
        self.resolved = resolved
        self.generation = generation
        self.requestedHost = requestedHost
        self.contextMeetsFloor = contextMeetsFloor
        pattern = resolved.pattern
        self.verifier = verifier
    }

    /// The failure of the most recent refused evaluation, or `nil` when none was refused.
    public var lastFailure: ServerTrustNIOError? { record.withLock { $0.lastFailure } }

    /// The most recent evaluation of a chain, accepted or refused — its
    /// `TrustEvaluation.certificateTransparency` is the host's Certificate Transparency outcome
    /// (judged on embedded SCTs only: ``ServerTrustNIOVerifier/certificateTransparencySources``)
    /// — or `nil` when no chain has been evaluated (none yet, or every connection was refused
    /// before its chain was: no certificate, a floor the context could not confirm).
    public var lastEvaluation: TrustEvaluation? { record.withLock { $0.lastEvaluation } }

    /// How many evaluations accepted the server.
    public var acceptedCount: Int { record.withLock { $0.accepted } }

    /// How many evaluations refused the server.
    public var refusedCount: Int { record.withLock { $0.refused } }

    /// The verification callback for `NIOSSLClientHandler` and grpc-swift-nio-transport.
    ///
    /// Returns at once: the evaluation runs on the verifier's Dispatch queue, then completes
    /// `promise` with `.certificateVerified` and the validated chain (leaf first, ending at an
    /// anchor; no chain when the evaluator validated none, as the disabled one), or fails it with
    /// a ``ServerTrustNIOError``. Every error — no certificate, a certificate OpenSSL cannot
    /// parse, the evaluator's verdict — fails the promise.
    public var callback: @Sendable ([NIOSSLCertificate], EventLoopPromise<NIOSSLVerificationResultWithMetadata>) -> Void {
        { [self] certificates, promise in
            verifier.queue.async {
                switch self.evaluate(certificates) {
                case .success(let metadata):
                    promise.succeed(.certificateVerified(metadata))
                case .failure(let failure):
                    promise.fail(failure)
                }
            }
        }
    }

    /// A ``ServerTrustGuardHandler`` for this host's connection, to add right after its
    /// `NIOSSLClientHandler`.
    public func makeGuardHandler() -> ServerTrustGuardHandler { ServerTrustGuardHandler(verification: self) }

    /// A ``PolicyRetirementHandler`` that closes the channel once the verifier's
    /// `LiveTrustManager` moves past ``generation``; add it after the guard handler, on a
    /// channel set up with this verification when it was made (per connection, as
    /// `ServerTrustNIOVerifier.addClientHandlers(to:context:host:)` does).
    public func makeRetirementHandler() -> PolicyRetirementHandler {
        PolicyRetirementHandler(liveTrustManager: verifier.liveTrustManager, generation: generation)
    }

    /// Adds ``makeGuardHandler()`` right after the channel's `NIOSSLClientHandler`, and a
    /// ``PolicyRetirementHandler`` after it: for a pipeline another library builds, as in
    /// grpc-swift-nio-transport's `channelDebuggingCallbacks.onCreateTCPConnection`.
    ///
    /// The same as ``addGuardHandler(to:retireOnPolicyChange:)`` with `retireOnPolicyChange: true`.
    ///
    /// - Returns: a future that fails — failing the connection — when the pipeline has no
    ///   `NIOSSLClientHandler` (a plaintext transport, which nothing here could verify).
    public func addGuardHandler(to channel: any Channel) -> EventLoopFuture<Void> {
        addGuardHandler(to: channel, retireOnPolicyChange: true)
    }

    /// Adds ``makeGuardHandler()`` right after the channel's `NIOSSLClientHandler` and, with
    /// `retireOnPolicyChange`, a ``PolicyRetirementHandler`` after it.
    ///
    /// Call it as the channel is set up, before its handshake (grpc-swift-nio-transport's
    /// `onCreateTCPConnection` is called so). The retirement handler closes the channel once the
    /// verifier's `LiveTrustManager` moves past the generation in force at this call — the
    /// handshake, which comes later, is evaluated under that manager or a newer one, since the
    /// callback resolves the host again after a replacement. A gRPC transport then reconnects,
    /// and the new connection is evaluated under the manager in force. Without it, a connection
    /// of the transport keeps the evaluation of its handshake until it is closed (the trade-off
    /// of ``ServerTrustNIOVerifier/addClientHandlers(to:context:host:retireOnPolicyChange:)``).
    ///
    /// - Returns: a future that fails — failing the connection — when the pipeline has no
    ///   `NIOSSLClientHandler` (a plaintext transport, which nothing here could verify).
    public func addGuardHandler(to channel: any Channel, retireOnPolicyChange: Bool) -> EventLoopFuture<Void> {
        let live = verifier.liveTrustManager
        @Sendable func add() throws {
            let pipeline = channel.pipeline.syncOperations
            let tls = try pipeline.handler(type: NIOSSLClientHandler.self)
            let guardHandler = makeGuardHandler()
            try pipeline.addHandler(guardHandler, position: .after(tls))
            if retireOnPolicyChange {
                // A transport shares this verification among its connections, and the callback
                // evaluates each handshake under the manager in force: the generation to watch
                // is the one in force now, before this channel's handshake.
                let retirement = PolicyRetirementHandler(liveTrustManager: live, generation: live.generation)
                try pipeline.addHandler(retirement, position: .after(guardHandler))
            }
        }
        guard channel.eventLoop.inEventLoop else { return channel.eventLoop.submit(add) }
        return channel.eventLoop.makeCompletedFuture(Result(catching: add))
    }

    /// A refusal of this host's connection before any handshake: `reason` as a `TrustError`
    /// with `code`, attributed to this verification's host, pattern and evaluator.
    func refusal(_ code: TrustError.Code, _ reason: String) -> ServerTrustNIOError {
        ServerTrustNIOError(trustError: TrustError(code, reason, host: host.name), host: host, resolved: resolved)
    }

    /// Evaluates the presented certificates (leaf first, as sent) for ``host``, recording the outcome.
    func evaluate(_ certificates: [NIOSSLCertificate]) -> Result<VerificationMetadata, ServerTrustNIOError> {
        let result = policyInForce().flatMap { inForce in
            let (policy, contextMeetsFloor) = inForce
            return Result { () throws(ServerTrustNIOError) -> VerificationMetadata in
                try evaluateOrThrow(certificates, under: policy, contextMeetsFloor: contextMeetsFloor)
            }
        }
        record.withLock { record in
            switch result {
            case .success: record.accepted += 1
            case .failure(let failure):
                record.refused += 1
                record.lastFailure = failure
            }
        }
        return result
    }

    /// The host's policy for a handshake now: ``resolved`` while the verifier's manager is the
    /// one of ``generation``; after a replacement, the host resolved again under the manager in
    /// force (a host it no longer allows fails, as ``ServerTrustNIOVerifier/verification(forHost:)``
    /// would). The context was checked against ``resolved``'s floor only: a TLS 1.3 floor of the
    /// new policy is confirmed only when the old one was TLS 1.3 too (the context then allows
    /// nothing less).
    private func policyInForce() -> Result<(ResolvedHostPolicy, Bool), ServerTrustNIOError> {
        guard verifier.liveTrustManager.generation != generation else { return .success((resolved, contextMeetsFloor)) }
        let floorChecked = contextMeetsFloor && resolved.policy.minimumTLSVersion > .tls12
        return Result { () throws(ServerTrustNIOError) -> (ResolvedHostPolicy, Bool) in
            let fresh = try verifier.verification(forHost: requestedHost, contextMeetsFloor: floorChecked)
            return (fresh.resolved, fresh.contextMeetsFloor)
        }
    }

    /// A Certificate Transparency refusal with what this adapter could not see: its code,
    /// evidence and attribution kept, its reason followed by a sentence saying that only
    /// embedded SCTs were available. Any other failure unchanged.
    static func explainingCTSources(_ failure: TrustError) -> TrustError {
        guard failure.code == .certificateTransparency else { return failure }
        return TrustError(
            .certificateTransparency,
            failure.reason + " " + ServerTrustNIOVerifier.certificateTransparencySourcesNote,
            evaluator: failure.evaluator, host: failure.host, evidence: failure.evidence, file: failure.file, line: failure.line)
    }

    private func evaluateOrThrow(
        _ certificates: [NIOSSLCertificate], under resolved: ResolvedHostPolicy, contextMeetsFloor: Bool
    ) throws(ServerTrustNIOError) -> VerificationMetadata {
        /// A refusal before the evaluation, attributed to the host's policy.
        func refusal(_ error: TrustError) -> ServerTrustNIOError { ServerTrustNIOError(trustError: error, host: host, resolved: resolved) }
        let evaluator = resolved.evaluator
        guard !certificates.isEmpty else {
            throw refusal(TrustError(.noCertificates, "The server for \(host) presented no certificate.", host: host.name))
        }
        var presented: [Certificate] = []
        for (index, certificate) in certificates.enumerated() {
            let der: [UInt8]
            do {
                der = try certificate.toDERBytes()
            } catch {
                throw refusal(TrustError(
                    .malformedCertificate, "Certificate \(index) the server presented cannot be encoded as DER: \(error)",
                    host: host.name))
            }
            do {
                presented.append(try Certificate(derEncoded: der))
            } catch let error as TrustError {
                throw refusal(error)
            } catch {
                throw refusal(TrustError(.malformedCertificate, "Certificate \(index) the server presented: \(error)", host: host.name))
            }
        }
        // swift-nio-ssl tells the callback nothing of the protocol: a floor above TLS 1.2 holds
        // only where the context was checked against it. A callback installed by hand (a
        // grpc-swift transport's customVerificationCallback) cannot confirm it: fail closed.
        let floor = resolved.policy.minimumTLSVersion
        if floor > .tls12, !contextMeetsFloor {
            throw refusal(TrustError(
                .tlsVersionBelowPolicy,
                "The policy of \(host) requires \(floor), and this verification cannot confirm the negotiated protocol "
                    + "(swift-nio-ssl's callback does not tell it). Use ServerTrustNIOVerifier.addClientHandlers with a "
                    + "context whose minimumTLSVersion is .tlsv13.",
                evaluator: evaluator.name, host: host.name))
        }
        // The one evaluation entry point: the evaluator, then the host against the leaf (with
        // `.noHostnameVerification` nothing else checks the name; third review, finding 1),
        // counted and logged as a Session's. swift-nio-ssl's callback sees no staple, SCTs or
        // protocol, so the handshake evidence is empty (the TLS floor is checked on the context):
        // Certificate Transparency is judged on the SCTs embedded in the leaf alone.
        let evaluation = resolved.evaluate(presented, handshake: HandshakeEvidence(), in: verifier.context)
        record.withLock { $0.lastEvaluation = evaluation }
        if let failure = evaluation.failure { throw ServerTrustNIOError(evaluation, failure: Self.explainingCTSources(failure)) }
        let validated = evaluation.validatedChain
        guard !validated.isEmpty else { return VerificationMetadata(nil) }
        do {
            let chain = try validated.map { try NIOSSLCertificate(bytes: $0.derEncoded, format: .der) }
            return VerificationMetadata(ValidatedCertificateChain(chain))
        } catch {
            throw refusal(TrustError(.openSSLFailure, "The validated chain cannot be handed to swift-nio-ssl: \(error)", host: host.name))
        }
    }
}
#endif
