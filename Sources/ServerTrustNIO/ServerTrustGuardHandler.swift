#if NIOAdapter
public import NIOCore
import NIOSSL
import NIOTLS
import ServerTrust

/// Sits right after a `NIOSSLClientHandler` whose verification callback is a
/// ``HostTrustVerification``'s: makes trust failures visible and refuses a handshake that
/// completed without an evaluation.
///
/// - When the handshake fails after the verification refused the server, swift-nio-ssl reports
///   only `NIOSSLError.handshakeFailed`; this handler passes on the ``ServerTrustNIOError``
///   (with the `TrustError`) instead, with swift-nio-ssl's error as its
///   ``ServerTrustNIOError/underlying``.
/// - When the handshake completes although no evaluation accepted the server since this
///   handler was added — the context's certificate verification is off (`.none`, or a gRPC
///   transport with `serverCertificateVerification = .noVerification`), or the callback was
///   not installed — it fires a ``ServerTrustNIOError`` with `.invalidConfiguration`, closes
///   the channel, and neither passes on `TLSUserEvent.handshakeCompleted` nor any data read.
///   A backstop for a misconfigured pipeline: bytes the application wrote before the handshake
///   completed may already be on their way out by then.
///
/// Not `Sendable`, like every channel handler: one per channel, used on its event loop.
public final class ServerTrustGuardHandler: ChannelInboundHandler, RemovableChannelHandler {
    /// Decrypted bytes from the `NIOSSLClientHandler`, passed on unchanged once the server is trusted.
    public typealias InboundIn = ByteBuffer
    /// The same bytes, for the handlers after this one.
    public typealias InboundOut = ByteBuffer

    private let verification: HostTrustVerification
    /// The verification's counts when this handler was added: evaluations after them are this
    /// connection's.
    private var acceptedBefore = 0
    private var refusedBefore = 0
    private var state = State.handshaking

    private enum State {
        case handshaking
        case verified
        case refused
    }

    init(verification: HostTrustVerification) {
        self.verification = verification
    }

    /// Notes the verification's counts, so that only this connection's evaluations count.
    public func handlerAdded(context: ChannelHandlerContext) {
        acceptedBefore = verification.acceptedCount
        refusedBefore = verification.refusedCount
    }

    /// Passes `TLSUserEvent.handshakeCompleted` on only when an evaluation accepted the server
    /// since this handler was added; otherwise fails and closes the channel.
    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let tlsEvent = event as? TLSUserEvent, case .handshakeCompleted = tlsEvent, state == .handshaking else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        guard verification.acceptedCount > acceptedBefore else {
            state = .refused
            let error = ServerTrustNIOError(
                trustError: TrustError(
                    .invalidConfiguration,
                    "The TLS handshake with \(verification.host) completed without a ServerTrust evaluation: the TLS "
                        + "context does not verify certificates (.none, .optionalVerification, gRPC's .noVerification) or "
                        + "the NIOSSLClientHandler has another verification callback. The connection is closed.",
                    evaluator: verification.evaluator.name, host: verification.host.name),
                host: verification.host, resolved: verification.resolved)
            context.fireErrorCaught(error)
            context.close(promise: nil)
            return
        }
        state = .verified
        context.fireUserInboundEventTriggered(event)
    }

    /// Passes data on, except on a channel this handler refused.
    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard state != .refused else { return }
        context.fireChannelRead(data)
    }

    /// Replaces swift-nio-ssl's handshake error with the ``ServerTrustNIOError`` of a refused
    /// evaluation; passes every other error on.
    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if state == .handshaking, let tlsError = error as? NIOSSLError, verification.refusedCount > refusedBefore,
            let failure = verification.lastFailure
        {
            state = .refused
            context.fireErrorCaught(failure.replacing(tlsError))
            return
        }
        context.fireErrorCaught(error)
    }
}

@available(*, unavailable)
extension ServerTrustGuardHandler: Sendable {}
#endif
