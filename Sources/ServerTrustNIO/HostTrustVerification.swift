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
/// Thread-safe (its record is behind a lock), hence `Sendable`.
public final class HostTrustVerification: Sendable {
    /// The host resolved to its policy, once, as every client path resolves it.
    public let resolved: ResolvedHostPolicy
    /// The host evaluated, normalised.
    public var host: NormalizedHost { resolved.host }
    /// The pattern of the trust manager that matched, or `nil` when none did and default
    /// validation applies.
    public let pattern: String?
    /// The evaluator chosen for the host.
    public var evaluator: any ServerTrustEvaluating { resolved.evaluator }
    /// The SNI name for `NIOSSLClientHandler`: the host, or `nil` for an IP address (which SNI
    /// may not carry).
    public var serverHostname: String? { host.isIPAddress ? nil : host.name }

    private let verifier: ServerTrustNIOVerifier

    /// How many evaluations ended, and the last failure.
    private struct Record {
        var accepted = 0
        var refused = 0
        var lastFailure: ServerTrustNIOError?
    }

    private let record = Locked(Record())

    /// Whether the TLS context was checked against the host policy's floor when this
    /// verification was made (``ServerTrustNIOVerifier/addClientHandlers(to:context:host:)``).
    private let contextMeetsFloor: Bool

    init(resolved: ResolvedHostPolicy, verifier: ServerTrustNIOVerifier, contextMeetsFloor: Bool) {
        self.resolved = resolved
        self.contextMeetsFloor = contextMeetsFloor
        pattern = resolved.pattern?.description
        self.verifier = verifier
    }

    /// The failure of the most recent refused evaluation, or `nil` when none was refused.
    public var lastFailure: ServerTrustNIOError? { record.withLock { $0.lastFailure } }

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

    /// Adds ``makeGuardHandler()`` right after the channel's `NIOSSLClientHandler`: for a
    /// pipeline another library builds, as in grpc-swift-nio-transport's
    /// `channelDebuggingCallbacks.onCreateTCPConnection`.
    ///
    /// - Returns: a future that fails — failing the connection — when the pipeline has no
    ///   `NIOSSLClientHandler` (a plaintext transport, which nothing here could verify).
    public func addGuardHandler(to channel: any Channel) -> EventLoopFuture<Void> {
        @Sendable func add() throws {
            let pipeline = channel.pipeline.syncOperations
            let tls = try pipeline.handler(type: NIOSSLClientHandler.self)
            try pipeline.addHandler(makeGuardHandler(), position: .after(tls))
        }
        guard channel.eventLoop.inEventLoop else { return channel.eventLoop.submit(add) }
        return channel.eventLoop.makeCompletedFuture(Result(catching: add))
    }

    /// A refusal of this host's connection before any handshake: `reason` as a `TrustError`
    /// with `code`, attributed to this verification's host, pattern and evaluator.
    func refusal(_ code: TrustError.Code, _ reason: String) -> ServerTrustNIOError {
        ServerTrustNIOError(
            trustError: TrustError(code, reason, host: host.name), host: host.name, pattern: pattern, evaluator: evaluator.name)
    }

    /// Evaluates the presented certificates (leaf first, as sent) for ``host``, recording the outcome.
    func evaluate(_ certificates: [NIOSSLCertificate]) -> Result<VerificationMetadata, ServerTrustNIOError> {
        let result = Result { () throws(ServerTrustNIOError) -> VerificationMetadata in
            do throws(TrustError) {
                return try evaluateOrThrow(certificates)
            } catch {
                throw ServerTrustNIOError(trustError: error, host: host.name, pattern: pattern, evaluator: evaluator.name)
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

    private func evaluateOrThrow(_ certificates: [NIOSSLCertificate]) throws(TrustError) -> VerificationMetadata {
        guard !certificates.isEmpty else {
            throw TrustError(.noCertificates, "The server for \(host) presented no certificate.", host: host.name)
        }
        var presented: [Certificate] = []
        for (index, certificate) in certificates.enumerated() {
            let der: [UInt8]
            do {
                der = try certificate.toDERBytes()
            } catch {
                throw TrustError(
                    .malformedCertificate, "Certificate \(index) the server presented cannot be encoded as DER: \(error)",
                    host: host.name)
            }
            do {
                presented.append(try Certificate(derEncoded: der))
            } catch let error as TrustError {
                throw error
            } catch {
                throw TrustError(.malformedCertificate, "Certificate \(index) the server presented: \(error)", host: host.name)
            }
        }
        // swift-nio-ssl tells the callback nothing of the protocol: a floor above TLS 1.2 holds
        // only where the context was checked against it. A callback installed by hand (a
        // grpc-swift transport's customVerificationCallback) cannot confirm it: fail closed.
        let floor = resolved.policy.minimumTLSVersion
        if floor > .tls12, !contextMeetsFloor {
            throw TrustError(
                .tlsVersionBelowPolicy,
                "The policy of \(host) requires \(floor), and this verification cannot confirm the negotiated protocol "
                    + "(swift-nio-ssl's callback does not tell it). Use ServerTrustNIOVerifier.addClientHandlers with a "
                    + "context whose minimumTLSVersion is .tlsv13.",
                evaluator: evaluator.name, host: host.name)
        }
        // The one evaluation entry point: the evaluator, then the host against the leaf (with
        // `.noHostnameVerification` nothing else checks the name; third review, finding 1),
        // counted and logged as a Session's. swift-nio-ssl's callback sees no staple, SCTs or
        // protocol, so the handshake evidence is empty (the TLS floor is checked on the context).
        let evaluation = resolved.evaluate(presented, handshake: HandshakeEvidence(), in: verifier.context)
        if let failure = evaluation.failure { throw failure }
        let validated = evaluation.validatedChain
        guard !validated.isEmpty else { return VerificationMetadata(nil) }
        do {
            let chain = try validated.map { try NIOSSLCertificate(bytes: $0.derEncoded, format: .der) }
            return VerificationMetadata(ValidatedCertificateChain(chain))
        } catch {
            throw TrustError(.openSSLFailure, "The validated chain cannot be handed to swift-nio-ssl: \(error)", host: host.name)
        }
    }
}
#endif
